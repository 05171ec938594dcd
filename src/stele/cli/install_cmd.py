"""`stele install` / `stele uninstall`: thin over `stele.install`'s targets."""
from __future__ import annotations

import sys
from typing import Annotated

import typer

from .app import app, project
from ..render import term


def _report(changes) -> None:
    p = project()
    for change in changes:
        detail = f" ({change.detail})" if change.detail else ""
        term.line(f"{change.action} {p.rel(change.path)}{detail}")


@app.command()
def install(
    target: Annotated[list[str], typer.Argument(help="What to wire Stele into (see below); none: detect.")] = [],
    all_: Annotated[bool, typer.Option("--all", help="Install every detected target without asking.")] = False,
) -> None:
    """Wire Stele into agent harnesses and git hooks (idempotent)."""
    from .. import install as inst
    from ..errors import UsageError

    p = project()
    names = list(target)
    if not names:
        detected = [t.name for t in inst.targets().values() if t.detect(p)]
        if not detected:
            raise UsageError("no harness detected here: name one, e.g. `stele install claude` "
                             f"(targets: {', '.join(inst.targets())})")
        if not all_:
            if not sys.stdin.isatty():
                raise UsageError(f"detected {', '.join(detected)}: run `stele install --all` or name the targets")
            if not typer.confirm(f"Install Stele into {', '.join(detected)}?", default=True):
                raise typer.Exit(1)
        names = detected
    for name in names:
        _report(inst.get(name).install(p))


@app.command()
def uninstall(
    target: Annotated[list[str], typer.Argument(help="Targets to remove Stele from.")],
) -> None:
    """Take Stele out of harnesses and git hooks, restoring what was there before."""
    from .. import install as inst

    p = project()
    for name in target:
        _report(inst.get(name).uninstall(p))
