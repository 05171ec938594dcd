"""Retrieval commands: recall, search, why, rebuild. Each: find the project, call the library, render.

`recall` and `search` are defined in `stele/cli/fast.py` (argparse, dispatched before typer); they
appear here only so `stele --help` lists them.
"""
from __future__ import annotations

from typing import Annotated

import typer

from ..render import term
from ..render.jsonout import emit_json
from ..textcut import counted
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json

Opt = typer.Option


# `recall` and `search` run before typer is imported (entry.py -> fast.py, the one definition of
# their options); these entries list them in `stele --help` and forward anything that reaches them.
_FORWARD = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}


@app.command(context_settings=_FORWARD)
def recall(ctx: typer.Context) -> None:
    """Show what an agent is told before answering PROMPT: seeds, one hop, risks on the path."""
    from .fast import run

    raise typer.Exit(run("recall", ctx.args))


@app.command(context_settings=_FORWARD)
def search(ctx: typer.Context) -> None:
    """Plain hybrid search of the committed record (no walk, no gate, no callout)."""
    from .fast import run

    raise typer.Exit(run("search", ctx.args))


@app.command()
def rebuild(
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Rebuild .stele/index/ from docs/memory/ and the session log (it is derived: nothing is lost)."""
    from ..index.build import rebuild as do_rebuild
    from ..render import term

    p = project()
    as_json = wants_json(fmt, json_)
    if as_json:
        report = do_rebuild(p)
    else:
        with term.stages() as start:
            report = do_rebuild(p, on_stage=start)
    data = {"items": report.items, "embedded": report.embedded, "skipped": report.skipped,
            "vectors": report.vector_error is None, "seconds": round(report.seconds, 2)}
    if as_json:
        emit_json(data)
        return
    if report.skipped:
        term.warn(f"{counted(len(report.skipped), 'problem')} left files out of the index (`stele doctor` lists "
                  f"them); first: {report.skipped[0]}")
    if report.vector_error:
        term.warn(f"no vectors, full-text search only: {report.vector_error}")
    term.line(f"indexed {counted(report.items, 'item')} ({report.embedded} embedded) in {report.seconds:.1f} s")


@app.command()
def why(
    prompt: Annotated[str, typer.Argument(help="The prompt to explain (as given to `stele recall`).")] = "",
    file: Annotated[list[str], Opt("--file", "-f", help="A file being edited (repeatable).")] = [],
    as_of: Annotated[str | None, Opt("--as-of", metavar="DATE|COMMIT",
                                     help="Explain the recall of the record as it stood then.")] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Explain one recall: seeds and their ranks, edges walked, score parts, risks lifted, the cut."""
    from ..retrieve.explain import explain

    data = explain(project(), prompt, files=file, as_of=as_of)
    if wants_json(fmt, json_):
        emit_json(data)
        return
    from ..render.agent import why_text

    term.write(why_text(data))
