"""The frame every agent hook runs in: read the payload, find the project, call the event's handler,
cap its text and answer in the harness's shape.

The order matters for speed and safety. stdin is always drained (a harness writing into a closed
pipe is its error, not ours). `STELE_OFF=1` returns before anything else is imported. A directory
that is not a Stele project answers nothing, silently: a user-scope install runs these hooks in every
repository. The whole hook runs under an interval timer set to `retrieval.hook_budget_ms`; past it
the hook gives up and the agent proceeds without memory (dispatch turns the timeout into one stderr
line and exit 0).
"""
from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass
from typing import Callable

from .. import textcut
from ..neutralize import neutralize
from ..project import Project, find_root
from . import harness as harness_mod
from . import state
from .payload import Payload, parse

OFF_ENV = "STELE_OFF"
# Events that have work to do even where the harness shows nothing (post-edit logs to the WAL; stop
# and session-end ship session lines to the team store, session-start fetches the team's).
ALWAYS_RUN = frozenset({"post-edit", "stop", "session-end"})
CUT_MARK = "\n[stele: cut to fit the hook output limit; `stele recall` shows the rest]"


class HookTimeout(Exception):
    pass


@dataclass
class Context:
    project: Project
    payload: Payload

    @property
    def harness(self) -> str:
        return self.payload.harness

    @property
    def max_chars(self) -> int:
        return int(self.project.config["hooks.max_chars"])


@dataclass
class Reply:
    """A handler's answer: the text, and the ids it may show (those still in the text after the cap
    are recorded as injected, so the session never gets them again)."""
    text: str
    ids: tuple[str, ...] = ()


Handler = Callable[[Context], "Reply | None"]


def off() -> bool:
    return os.environ.get(OFF_ENV, "").strip().lower() not in ("", "0", "false", "no")


def read_stdin() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.read()


def locate(payload: Payload) -> Project | None:
    """The Stele project the agent works in, or None when there is none (not an error)."""
    root = find_root(payload.cwd)
    if root is None:
        return None
    project = Project(root)
    if not project.stele_dir.is_dir():
        return None
    return project


def _paused(project: Project, event: str) -> bool:
    """`stele pause` silences every hook that adds context; only prompts count down its turns."""
    return state.consume_paused_turn(project) if event == "prompt" else state.paused(project) is not None


def _remember_shown(project: Project, payload: Payload, event: str, ids, text: str) -> None:
    """The ids that survived the cap go into the session's hook state (never shown twice) and, as one
    delivery note, into its log (what the agent saw, for `session show` and the recall gap)."""
    from ..ids import mentioned_ids
    from ..session import sessions

    shown = set(mentioned_ids(text))
    ids = [i for i in dict.fromkeys(ids) if i in shown]
    session = payload.session
    if ids and session:
        with state.update(project, session) as st:
            st.add_injected(ids)
        sessions.log_delivered(project, session, event, ids, harness_mod.AGENT_NAMES[payload.harness])


def _on_alarm(signum, frame):
    raise HookTimeout("the hook ran out of its time budget (retrieval.hook_budget_ms)")


def run(args, handler: Handler) -> int:
    raw = read_stdin()
    if off():
        sys.stdout.write(harness_mod.answer(args.harness or "claude", args.event, None))
        return 0
    payload = parse(raw, args.harness)
    event = "session-start" if args.event == "session" else args.event
    text = _text(payload, event, handler)
    sys.stdout.write(harness_mod.answer(payload.harness, event, text, payload.event_name))
    return 0


def _text(payload: Payload, event: str, handler: Handler) -> str | None:
    """Run the handler when there is a project, the hooks are not paused and the harness shows the
    answer (or the event has work of its own); the capped text, or None."""
    project = locate(payload)
    if project is None or (event not in ALWAYS_RUN and _paused(project, event)):
        return None
    shows = harness_mod.can_inject(payload.harness, event)
    if not shows and event not in ALWAYS_RUN:
        return None
    budget = int(project.config["retrieval.hook_budget_ms"]) / 1000
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        ctx = Context(project, payload)
        reply = handler(ctx)
        if not (reply and reply.text and shows):
            return None
        text = textcut.lines(neutralize(reply.text), ctx.max_chars, CUT_MARK)  # no hidden or control character reaches the agent
        _remember_shown(project, payload, event, reply.ids, text)
        return text
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
