"""`stele export rules`: thin over `stele.export.run`."""
from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from ..render import term
from ..render.jsonout import emit_json
from ..textcut import counted
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json

export_app = typer.Typer(help="Compile the record into files other tools load on their own.", no_args_is_help=True)
app.add_typer(export_app, name="export")


class HarnessChoice(str, Enum):
    claude = "claude"
    cursor = "cursor"
    copilot = "copilot"
    agents = "agents"


@export_app.command("rules")
def rules(
    harness: Annotated[list[HarnessChoice], typer.Option(
        "--harness", help="claude (.claude/rules, paths:), cursor (.cursor/rules, globs:), copilot "
        "(.github/instructions, applyTo:), agents (nested AGENTS.md); repeat it; default: all four.")] = [],
    sync: Annotated[bool, typer.Option("--sync", help="Only the harnesses already exported here (nothing "
                                       "when none): what the pre-commit hook of `stele install --rules` runs.")]
    = False,
    check: Annotated[bool, typer.Option("--check", help="Write nothing; exit 1 naming each file that is out "
                                        "of date with the record.")] = False,
    stage: Annotated[bool, typer.Option("--stage", help="Also `git add` the files that changed.")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> int:
    """Write rule files for harnesses from the facts anchored to paths and globs, one file per set of
    anchored paths, each marked generated with its fact ids; remove the ones no fact needs any more."""
    from ..errors import UsageError
    from ..export.run import export_rules

    if sync and harness:
        raise UsageError("--sync takes the harnesses already exported here: drop --harness, or drop --sync")
    p = project()
    result = export_rules(p, [h.value for h in harness] or None, sync=sync, check=check, stage=stage)
    if wants_json(fmt, json_):
        emit_json({"harnesses": result.harnesses, "check": check,
                   "files": [{"path": f.rel, "harness": f.harness, "action": f.action, "facts": list(f.facts)}
                             for f in result.files], "notes": result.notes})
    else:
        for f in result.files:
            facts = f" ({', '.join(f.facts)})" if f.facts else ""
            term.line(f"out of date: {f.rel} (would be {f.action}){facts}" if check else f"{f.action} {f.rel}{facts}")
        for note in result.notes:
            term.warn(note)
        if not result.harnesses:
            term.note("no exported rule files here: nothing to sync (`stele export rules` makes them)")
        elif not result.files:
            term.note("exported rules are up to date" if check else "nothing changed: the rule files match the record")
    if check and result.files:
        term.warn(f"{counted(len(result.files), 'rule file')} out of date with the record: run `stele export rules`")
        return 1
    return 0
