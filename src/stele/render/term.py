"""The only module that touches Rich, and the one way text reaches a terminal.

Commands hand it plain data; it decides how people see it. Agent-facing plain text goes through
`write`, never Rich: it must be byte-stable and free of terminal codes. Everything shown here is
neutralized first (`stele.neutralize`): a fact is untrusted input, and an escape sequence in a title
must not clear a reviewer's screen or hide a link.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from functools import cache
from typing import Iterable, Iterator, Sequence

from ..neutralize import neutralize


def write(text: str) -> None:
    """Plain text on stdout (agent text, reports), neutralized."""
    sys.stdout.write(neutralize(text))


@cache
def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def line(text: str = "", style: str | None = None) -> None:
    console().print(neutralize(text), style=style, markup=False, soft_wrap=True)


def note(text: str) -> None:
    """A side remark (progress, what was redacted) on stderr, so stdout stays data."""
    console(stderr=True).print(neutralize(text), style="dim", markup=False, soft_wrap=True)


def warn(text: str) -> None:
    console(stderr=True).print(neutralize(text), style="yellow", markup=False, soft_wrap=True)


def table(columns: Sequence[str], rows: Iterable[Sequence[str]], title: str | None = None) -> None:
    from rich.table import Table
    from rich.text import Text

    t = Table(title=Text(neutralize(title)) if title else None, show_lines=False, header_style="bold",
              expand=False)
    for col in columns:
        t.add_column(col, overflow="fold")
    for row in rows:
        t.add_row(*[Text(neutralize(str(c))) for c in row])
    console().print(t)


def section(title: str, body: str, subtitle: str | None = None) -> None:
    from rich.panel import Panel
    from rich.text import Text

    console().print(Panel(Text(neutralize(body)), title=Text(neutralize(title)),
                          subtitle=Text(neutralize(subtitle)) if subtitle else None,
                          title_align="left", subtitle_align="left", expand=True))


@contextmanager
def stages() -> Iterator:
    """Progress bars on stderr, one per stage; yields `start(description, total) -> advance(n=1)`."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console(stderr=True), transient=False) as p:
        def start(description: str, total: int):
            task = p.add_task(description, total=max(total, 0))
            return lambda n=1: p.advance(task, n)

        yield start
