"""Retrieval commands: recall, search, why, rebuild. Each: find the project, call the library, render.

Imports stay inside the commands: `stele recall` runs on every prompt of some workflows and must not
pay for modules it does not use (its budget is 200 ms on a 10k-fact record, typer included).
"""
from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from .app import FormatOpt, JsonOpt, app, emit_json, project, wants_json

Opt = typer.Option


def _warn(lines: list[str]) -> None:
    for line in dict.fromkeys(lines):
        print(line, file=sys.stderr)


@app.command()
def recall(
    prompt: Annotated[str, typer.Argument(help="What the agent was asked (may be empty with --file).")] = "",
    file: Annotated[list[str], Opt("--file", "-f", help="A file being edited (repeatable): its anchored facts.")] = [],
    fmt: FormatOpt = "text",
    json_: JsonOpt = False,
) -> None:
    """Show what an agent is told before answering PROMPT: seeds, one hop, risks on the path."""
    from ..retrieve.recall import recall as do_recall

    p = project()
    result = do_recall(p, prompt, files=file)
    _warn(result.warnings)
    if wants_json(fmt, json_):
        emit_json(result.as_dict())
        return
    from ..render.agent import recall_text

    text = recall_text(result, max_chars=int(p.config["hooks.max_chars"]))
    sys.stdout.write(text or f"nothing to recall (mode: {result.mode})\n")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Words, an error message, an identifier...")],
    limit: Annotated[int, Opt("--limit", "-n", help="At most this many results.")] = 10,
    kind: Annotated[list[str], Opt("--kind", "-k", help="Only this kind (repeatable).")] = [],
    all_: Annotated[bool, Opt("--all", help="Include superseded, retired, expired and overdue facts.")] = False,
    fmt: FormatOpt = "text",
    json_: JsonOpt = False,
) -> None:
    """Plain hybrid search of the committed record (no walk, no gate, no callout)."""
    from ..errors import UsageError
    from ..kinds import KINDS
    from ..retrieve.search import search as do_search

    for k in kind:
        if k not in KINDS:
            raise UsageError(f"--kind {k!r} is not a kind: use one of " + ", ".join(KINDS))
    if limit < 1:
        raise UsageError(f"--limit {limit}: give a positive number")
    result = do_search(project(), query, limit=limit, kinds=kind, include_all=all_)
    _warn(result.warnings)
    if wants_json(fmt, json_):
        emit_json(result.as_dict())
        return
    from ..render.agent import search_text

    sys.stdout.write(search_text(result))


@app.command()
def rebuild(
    fmt: FormatOpt = "text",
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
        term.warn(f"{len(report.skipped)} problem(s) left files out of the index (`stele doctor` lists them); "
                  f"first: {report.skipped[0]}")
    if report.vector_error:
        term.warn(f"no vectors, full-text search only: {report.vector_error}")
    term.line(f"indexed {report.items} items ({report.embedded} embedded) in {report.seconds:.1f} s")


@app.command()
def why(
    prompt: Annotated[str, typer.Argument(help="The prompt to explain (as given to `stele recall`).")] = "",
    file: Annotated[list[str], Opt("--file", "-f", help="A file being edited (repeatable).")] = [],
    fmt: FormatOpt = "text",
    json_: JsonOpt = False,
) -> None:
    """Explain one recall: seeds and their ranks, edges walked, score parts, risks lifted, the cut."""
    from ..retrieve.explain import explain

    data = explain(project(), prompt, files=file)
    if wants_json(fmt, json_):
        emit_json(data)
        return
    from ..render.agent import why_text

    sys.stdout.write(why_text(data))
