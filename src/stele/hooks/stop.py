"""`stele hook stop`: when a session completes work, once, a nudge to write back what it learned.

Completion is a task marked done during the session, or a session that changed files and recorded
nothing since it started (any other fact written since then means it did record). The nudge names
what the session did and builds its example from it: the first error string the session met (read
from the harness's transcript, where it names one), the files it changed, the task it finished.

Every harness that can speak at a stop gets it, always by continuing the turn once (Claude Code's
additionalContext; a block with the nudge as the reason in Codex, Gemini, Copilot; Cursor's
followup_message). It never loops: Claude's and Copilot's `stop_hook_active`, Cursor's `loop_count`
and the once-per-session flag silence it. And it is not given to a run nobody watches (`claude -p`,
`codex exec` in a script, CI) unless `hooks.nudge_unattended` says so: continuing such a turn replaces
the result its caller reads. A subagent finishing is not the session finishing: `subagent-stop` is
silent.
"""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from ..project import Project
from ..textcut import one_line
from . import harness, state
from .run import Context, Reply, run, teamsync

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace

NUDGE_OPENING = harness.NUDGE_OPENING
TRANSCRIPT_TAIL = 256 * 1024  # bytes of the transcript read for error strings
# a line a tool printed when something failed: `SomethingError: ...`, `error: ...`, `FAILED ...`, `TS2769: ...`
_ERROR = re.compile(r"(?m)^\s*((?:[A-Za-z_][\w.]*(?:Error|Exception|errors\.\w+)|error(?:\[\w+\])?|fatal|FAILED|TS\d{4}|E\d{3,4})"
                    r"\b:?\s+\S[^\n]{6,160})")


def completed_since(project: Project, since: float) -> tuple[list[str], bool]:
    """Tasks whose file was written since `since` (unix time) and are now done, and whether any other
    fact file was written since then (the session recorded something). The index's freshness scan lists
    the files the record is read from, with their mtimes; only the few changed ones are parsed."""
    from ..errors import SteleError
    from ..index.sources import scan
    from ..record.frontmatter import parse

    memory, since_ns = project.rel(project.memory_dir).rstrip("/") + "/", since * 1e9
    done, recorded = [], False
    for rel, (mtime, *_) in scan(project).stats().items():
        if not rel.startswith(memory) or mtime < since_ns:
            continue
        try:
            meta = parse((project.root / rel).read_text(encoding="utf-8")).meta
        except (OSError, ValueError, SteleError):  # being written, or broken: something was recorded
            recorded = True
            continue
        if meta.get("kind") == "task" and meta.get("status") == "done":
            done.append(str(meta.get("id", "")))
        elif meta.get("kind") != "task":
            recorded = True
    return sorted(i for i in done if i), recorded


def first_error(transcript: Path | None) -> str | None:
    """The first error string in the tail of the harness's transcript (JSON lines or plain text), cut to
    one line without quotes, or None."""
    if transcript is None:
        return None
    try:
        with transcript.open("rb") as f:
            f.seek(max(0, f.seek(0, 2) - TRANSCRIPT_TAIL))
            raw = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    texts = []
    for line in raw.splitlines():
        try:
            texts.extend(_strings(json.loads(line)))
        except ValueError:
            texts.append(line)
    for text in texts:
        m = _ERROR.search(text)
        if m:
            return one_line(m.group(1).replace('"', "'"), 160)
    return None


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def nudge(paths: list[str], done: list[str], error: str | None) -> str:
    """The nudge, its example drawn from what the session did."""
    what = []
    if done:
        what.append("finished " + ", ".join(done))
    if paths:
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        what.append(f"changed {shown}")
    anchor = f" --anchor {shlex.quote(paths[0])}" if paths else ""
    task = f" --link relates-to:{done[0]}" if done else ""
    if error:
        text = f"{error}: <what caused it and what fixed it>"
        example = f"stele remember {shlex.quote(text)} --kind lesson{anchor}{task} --retire-when \"<when it stops being true>\""
    else:
        subject = paths[0] if paths else (done[0] if done else "this change")
        text = f"<what {subject} now does and why; the name or command someone would search for>"
        example = (f"stele remember {shlex.quote(text)} --kind decision{anchor}{task} "
                   "--retire-when \"<when it stops being true>\"")
    return (f"{NUDGE_OPENING}{' and '.join(what)} and recorded nothing in the project record. If it "
            "learned something the next session would need (a decision, a lesson, a risk), record it before "
            "finishing, with the literal trigger in the text (the error message, command or name someone "
            "would search for) and when it stops being true, for example:\n"
            f"  {example}\n"
            "If nothing durable was learned, nothing needs recording.")


def handle(ctx: Context) -> Reply | None:
    from .harness import can_inject

    # stop runs even where nothing can be shown, or while paused, to ship session lines: the nudge only
    # where it can be shown and the hooks are not paused
    speak = can_inject(ctx.payload.form, "stop") and state.paused(ctx.project) is None
    reply = _nudge(ctx) if speak else None
    teamsync(ctx, push=True, pull=False)  # after the nudge is decided: a slow store never delays it
    return reply


def _nudge(ctx: Context) -> Reply | None:
    p, session = ctx.payload, ctx.payload.session
    looping = p.stop_hook_active or bool(p.data.get("loop_count"))  # Claude/Copilot/Gemini's flag, Cursor's count
    if session is None or looping or p.data.get("status") not in (None, "completed"):
        return None
    if not harness.attended() and not ctx.project.config["hooks.nudge_unattended"]:
        return None
    seen = ctx.seen()
    if seen.stop_nudged:
        return None
    done, recorded = completed_since(ctx.project, seen.started)
    if recorded or not (done or seen.edited):
        return None
    try:
        with state.update(ctx.project, session) as st:
            if st.stop_nudged:
                return None
            st.stop_nudged = True
    except OSError as e:  # a nudge not recorded would come at every stop: none at all
        ctx.unwritable("the completion nudge, so none is given", e)
        return None
    return Reply(nudge(seen.edited, done, first_error(p.transcript)))


def main(args: Namespace) -> int:
    return run(args, handle)


def main_subagent(args: Namespace) -> int:
    """Silent: a subagent finishing is not the session finishing."""
    return run(args, lambda ctx: None)


def main_end(args: Namespace) -> int:
    """`session-end`: the session is over; ship what it wrote."""
    return run(args, lambda ctx: teamsync(ctx, push=True, pull=False))
