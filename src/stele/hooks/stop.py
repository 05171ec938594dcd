"""`stele hook stop`: at the end of a turn, once per session, a nudge to write back what was learned.

Only when the session changed files and recorded nothing since it started, and never in a loop:
Claude Code's `stop_hook_active` (set when a stop hook already continued this turn) and Cursor's
`loop_count` silence it, and the session state makes it once per session in any case. Where the only
way to speak at a stop is to block it (Codex, Gemini, Copilot), the harness table says so and this
hook prints nothing. A subagent finishing is not the session finishing: `subagent-stop` is silent.
"""
from __future__ import annotations

import shlex

from ..project import Project
from . import state
from .run import Context, Reply, run


def recorded_since(project: Project, since: float) -> bool:
    """Has any fact file been written since `since` (a unix time)? The index's freshness scan lists
    them (the files the record is read from, with their mtimes)."""
    from ..index.sources import scan

    memory, since_ns = project.rel(project.memory_dir).rstrip("/") + "/", since * 1e9
    return any(rel.startswith(memory) and mtime >= since_ns for rel, (mtime, _) in scan(project).items())


def nudge(paths: list[str]) -> str:
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    example = ('stele remember "Regenerating DB types breaks the SDK build: tsc fails with TS2769: '
               'No overload matches this call. Port new columns by hand instead." --kind lesson '
               f'--anchor {shlex.quote(paths[0])} --retire-when "the SDK generates its own types"')
    return (f"Stele: this session changed {shown} and recorded nothing in the project record. If it "
            "learned something the next session would need (a decision, a lesson, a risk), record it before "
            "finishing. Put the literal trigger in the text (the error message, command or name someone "
            "would search for) and say when it stops being true, for example:\n"
            f"  {example}\n"
            "If nothing durable was learned, nothing needs recording.")


def handle(ctx: Context) -> Reply | None:
    from .harness import can_inject

    # stop runs even where nothing can be shown, or while paused, to ship session lines: the nudge only
    # where it can be shown and the hooks are not paused
    speak = can_inject(ctx.harness, "stop") and state.paused(ctx.project) is None
    reply = _nudge(ctx) if speak else None
    teamsync(ctx, push=True, pull=False)  # after the nudge is decided: a slow store never delays it
    return reply


def teamsync(ctx: Context, *, push: bool, pull: bool) -> None:
    """Ship (and/or fetch) team session lines when `session.store` is set and there is work; the
    S3 client is imported only then (tests/hooks/test_imports.py)."""
    import sys

    from ..index.teamsync import hook_sync

    hook_sync(ctx.project, push=push, pull=pull, warn=lambda line: print(line, file=sys.stderr))


def _nudge(ctx: Context) -> Reply | None:
    p, session = ctx.payload, ctx.payload.session
    looping = p.stop_hook_active or bool(p.data.get("loop_count"))  # Claude Code's flag, Cursor's count
    if session is None or looping or p.data.get("status") not in (None, "completed"):
        return None
    seen = state.load(ctx.project, session)
    if seen.stop_nudged or not seen.edited or recorded_since(ctx.project, seen.started):
        return None
    with state.update(ctx.project, session) as st:
        if st.stop_nudged:
            return None
        st.stop_nudged = True
    return Reply(nudge(seen.edited))


def main(args) -> int:
    return run(args, handle)


def main_subagent(args) -> int:
    return run(args, lambda ctx: None)


def main_end(args) -> int:
    """`session-end`: the session is over; ship what it wrote."""
    return run(args, lambda ctx: teamsync(ctx, push=True, pull=False))
