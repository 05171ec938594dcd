"""`stele anchored`: the facts anchored to files, or to a change (staged, or since a revision)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..render import term
from ..render.jsonout import emit_json
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json

Opt = typer.Option


@app.command()
def anchored(
    paths: Annotated[list[str] | None, typer.Argument(metavar="[PATH]...", help="Files or folders.")]
    = None,
    staged: Annotated[bool, Opt("--staged", help="The staged change (a symbol counts when a hunk touches "
                                "it).")] = False,
    diff: Annotated[str | None, Opt("--diff", metavar="REF", help="The change since REF (or A..B, "
                                       "A...B).")] = None,
    all_: Annotated[bool, Opt("--all", help="Include superseded, retired, done and cancelled facts.")]
    = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """List the facts anchored to files or to a change, risks and constraints first."""
    from ..anchors.paths import path_matches
    from ..errors import UsageError
    from ..render.anchored import fact_lines
    from ..retrieve import anchored as lib

    p = project()
    if staged and diff:
        raise UsageError("--staged and --diff REF are two different changes: pass one")
    named = [_repo_path(p, x) for x in paths or []]
    change = lib.staged(p.root) if staged else lib.since(p.root, diff) if diff else None
    if change is not None:
        if named:
            keep = [d for d in change.files
                    if any(not n or path_matches(n, x) for n in named for x in d.paths)]
            change = lib.Change(keep, change.new, change.old)
        found = lib.for_change(p, change, include_ended=all_)
    elif named:
        found = lib.for_paths(p, named, include_ended=all_)
    else:
        raise UsageError("name files or folders, or pass --staged or --diff REF")
    if wants_json(fmt, json_):
        emit_json({"facts": [a.as_dict() for a in found]})
        return
    if not found:
        term.line("no facts are anchored there")
        return
    for line in fact_lines(found):
        term.line(line[2:])


def _repo_path(p, arg: str) -> str:
    """A path typed relative to the working directory, as a repo-relative anchor path ("" for the root)."""
    rel = p.rel(Path(arg).absolute())
    return "" if rel == "." else rel
