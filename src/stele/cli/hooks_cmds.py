"""`stele pause` / `stele resume-hooks`: silence the context hooks for a while, then bring them back.

(`STELE_OFF=1` in the harness's environment silences every hook without touching any file.)
"""
from __future__ import annotations

from typing import Annotated

import typer

from ..render import term
from ..render.jsonout import emit_json
from ..textcut import counted
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json


@app.command()
def pause(
    turns: Annotated[int | None, typer.Option("--turns", min=1,
                                                 help="Only for the next N prompts.")] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Silence Stele's hooks in this checkout: nothing injected until `stele resume-hooks` (or N prompts)."""
    from ..hooks import state

    state.pause(project(), turns)
    if wants_json(fmt, json_):
        emit_json({"paused": True, "turns": turns})
    else:
        span = (f"for the next {counted(turns, 'prompt')}" if turns
                else "until `stele resume-hooks`")
        term.line(f"Stele hooks paused {span} (edits are still logged to the session log)")


@app.command("resume-hooks")
def resume_hooks(fmt: FormatOpt = Format.text, json_: JsonOpt = False) -> None:
    """Turn Stele's hooks back on after `stele pause`."""
    from ..hooks import state

    was = state.resume(project())
    if wants_json(fmt, json_):
        emit_json({"paused": False, "was_paused": was})
    else:
        term.line("Stele hooks resumed" if was else "Stele hooks were not paused; nothing changed")
