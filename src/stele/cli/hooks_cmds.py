"""`stele pause` / `stele resume-hooks`: silence the context hooks for a while, then bring them back;
`stele resident status` / `stop`: the process that answers them.

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


resident_app = typer.Typer(help="The resident process that answers this repository's hooks (Linux; "
                           "docs/hooks.md, \"The resident process\").", no_args_is_help=True)
app.add_typer(resident_app, name="resident")


@resident_app.command("status")
def resident_status(fmt: FormatOpt = Format.text, json_: JsonOpt = False) -> None:
    """Whether a resident process answers this repository's hooks, since when, and how many calls."""
    from .resident import client as resident

    root = str(project().root)
    status = resident.request(root, "status")
    if wants_json(fmt, json_):
        emit_json({"running": status is not None, "enabled": resident.enabled(), **(status or {})})
    elif status is None:
        why = "" if resident.enabled() else " (turned off in this environment: Linux only, never with STELE_OFF, STELE_RESIDENT=0 or CI)"
        starts = ("the next hook starts one" if resident.wanted(root) else
                  "hooks run in their own process (hooks.resident: true or STELE_RESIDENT=1 turns it on)")
        term.line(f"no resident process for {root}{why}; {starts}")
    else:
        import time

        watching = (f"watching {counted(status['watching'], 'folder')}" if status["watching"] is not None
                    else "scanning the sources on every call (inotify unavailable)")
        term.line(f"resident process {status['pid']} for {root}: up {time.time() - status['since']:.0f} s, "
                  f"{counted(status['calls'], 'call')} ({status['spared']} by a warm spare), {watching}")


@resident_app.command("stop")
def resident_stop(fmt: FormatOpt = Format.text, json_: JsonOpt = False) -> None:
    """Stop this repository's resident process (the next hook starts a new one unless
    `hooks.resident: false`)."""
    from .resident import client as resident

    stopped = resident.request(str(project().root), "stop") is not None
    if wants_json(fmt, json_):
        emit_json({"stopped": stopped})
    else:
        term.line("resident process stopped" if stopped else "no resident process was running")
