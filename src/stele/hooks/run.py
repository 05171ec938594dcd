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

import signal
import sys
from collections.abc import Callable

from .. import textcut
from ..errors import OutOfTime, SteleError, say
from ..neutralize import neutralize
from ..plain import dataclass, field
from ..project import Project, find_root
from ..residency import off
from ..retrieve.delivered import Delivered
from . import harness as harness_mod
from . import state
from .payload import Payload, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace

# Events that have work to do even where the harness shows nothing (post-edit logs to the WAL; stop
# and session-end ship session lines to the team store, session-start fetches the team's).
ALWAYS_RUN = frozenset({"post-edit", "stop", "session-end"})
CUT_MARK = "\n[stele: cut to fit the hook output limit; `stele recall` shows the rest]"


class HookTimeout(OutOfTime):
    pass


@dataclass
class Context:
    project: Project
    payload: Payload
    event: str = ""
    snapshot: state.SessionState | None = None  # the session's state as this hook first read it
    claimed: list[str] = field(default_factory=list)  # ids this hook claimed (`claim`)
    added: Delivered = field(default_factory=Delivered)  # what its claims added to the state (given back if cut)
    unrecorded: bool = False  # the session's state could not be written (said once)

    @property
    def harness(self) -> str:
        return self.payload.harness

    def seen(self) -> state.SessionState:
        """The session's state as this hook first read it: what was shown before it started."""
        if self.snapshot is None:
            self.snapshot = state.load(self.project, self.payload.session)
        return self.snapshot

    def unwritable(self, what: str, error: OSError) -> None:
        """State that cannot be written costs the record, never the answer: one stderr line a hook."""
        if not self.unrecorded:
            say(f"stele hook {self.event}: the session state cannot be written ({error}); not recorded: {what}")
        self.unrecorded = True

    def claim(self, ids, rules: bool = False, risks=()) -> list[str]:
        """Of the ids this hook is about to show (`risks`: those it calls out), those no concurrent
        hook of the session has delivered in the same form since `seen()` was read, recorded as
        delivered before anything is rendered: of two hooks the harness runs at once, one shows a
        fact. `rules`: these are the standing rules, taken on as a set (recorded even when there are
        none, so no later prompt looks for them). State that cannot be written costs the guarantee,
        never the answer."""
        ids = list(dict.fromkeys(ids))
        if not self.payload.session or not (ids or rules):
            return ids
        try:
            mine, added = state.claim(self.project, self.payload.session, ids, self.seen().delivered(), rules,
                                      frozenset(risks))
        except OSError as e:
            self.unwritable("what is shown, so it may be shown again", e)
            return ids
        self.claimed += mine
        self.added = self.added.add(added.shown, added.warned)
        return mine

    @property
    def max_chars(self) -> int:
        return int(self.project.config["hooks.max_chars"])


@dataclass
class Reply:
    """A handler's answer: the text, and the ids it may show (those still in the text after the cap
    are recorded as injected, so the session never gets them again), `risks` those of them it calls
    out (recorded as warned: `retrieve.delivered`). `hold` refuses the edit once with the text as the
    reason (hooks.hold_edits) instead of only informing."""
    text: str
    ids: tuple[str, ...] = ()
    hold: bool = False
    whole: str = ""  # shown first and never cut (steering), even past the cap; `text` gets the rest
    risks: tuple[str, ...] = ()


Handler = Callable[[Context], "Reply | None"]


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


def _remember_shown(ctx: Context, ids, text: str, risks=()) -> None:
    """The ids that survived the cap go into the session's hook state (never shown twice, `risks`
    never called out twice; those the handler claimed are there already, and what its claims added
    that the cap cut is given back) and, as one delivery note, into its log (what the agent saw, for
    `session show` and the recall gap). State or a log that cannot be written costs that record,
    never the answer."""
    from ..ids import mentioned_ids
    from ..session import sessions

    project, payload, event = ctx.project, ctx.payload, ctx.event
    shown = set(mentioned_ids(text))
    ids = [i for i in dict.fromkeys(ids) if i in shown]
    called = frozenset(risks) & shown
    session = payload.session
    unclaimed = Delivered(frozenset(i for i in ids if i not in ctx.claimed),
                          frozenset(i for i in called if i not in ctx.claimed))
    cut = Delivered(ctx.added.shown - shown, ctx.added.warned - shown)
    if session and (unclaimed.shown or unclaimed.warned or cut.shown or cut.warned) and not ctx.unrecorded:
        try:
            state.settle(project, session, unclaimed, cut)
        except OSError as e:
            ctx.unwritable("what was shown, so it may be shown again", e)
    if ids and session:
        try:
            sessions.log_delivered(project, session, event, ids, harness_mod.AGENT_NAMES[payload.harness],
                                   prompt=payload.prompt if event == "prompt" else None,
                                   warned=sorted(called))
        except (OSError, SteleError) as e:
            say(f"stele hook {event}: could not log the delivery ({e})")


def _on_alarm(signum: int, frame: object) -> None:
    raise HookTimeout("the hook ran out of its time budget (retrieval.hook_budget_ms)")


def run(args: Namespace, handler: Handler) -> int:
    """Answer one hook. Whatever fails (a payload that is not JSON, a broken config, the time budget,
    state that cannot be written), the harness still gets its "nothing to say" answer on stdout
    (`{}` for Gemini, whose users would otherwise see the error line as a message) before dispatch
    prints the one stderr line."""
    raw = read_stdin()
    event = "session-start" if args.event == "session" else args.event
    fallback = args.harness or "claude"
    if off():
        sys.stdout.write(harness_mod.silent(fallback))
        return 0
    try:
        payload = parse(raw, args.harness)
        fallback = payload.form
        said = _said(payload, event, handler)
        out = harness_mod.answer(payload.form, event, said, payload.data, payload.event_name)
    except BaseException:
        sys.stdout.write(harness_mod.silent(fallback))
        raise
    sys.stdout.write(out)
    return 0


def _said(payload: Payload, event: str, handler: Handler) -> harness_mod.Answer | None:
    """Run the handler when there is a project, the hooks are not paused and the harness shows the
    answer (or the event has work of its own); what to say, capped, or None."""
    project = locate(payload)
    if project is None or (event not in ALWAYS_RUN and _paused(project, event)):
        return None
    shows = harness_mod.can_inject(payload.form, event)
    if not shows and event not in ALWAYS_RUN:
        return None
    budget = int(project.config["retrieval.hook_budget_ms"]) / 1000
    ctx = Context(project, payload, event)
    settled = False
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        reply = handler(ctx)
        settled = True
        if not (reply and (reply.text or reply.whole) and shows):
            _remember_shown(ctx, (), "")  # give back what was claimed for an answer not given
            return None
        # no hidden or control character reaches the agent
        whole = neutralize(reply.whole)
        room = ctx.max_chars - len(whole) - 1
        rest = textcut.lines(neutralize(reply.text), room, CUT_MARK) if reply.text and room > 0 else ""
        text = f"{whole}\n{rest}" if whole and rest else whole or rest
        _remember_shown(ctx, reply.ids, text, reply.risks)
        return harness_mod.Answer(text, reply.hold)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if not settled and ctx.claimed and payload.session:  # out of time after claiming: nothing shown
            try:
                state.settle(project, payload.session, Delivered(), ctx.added)
            except OSError:
                pass


def teamsync(ctx: Context, *, push: bool, pull: bool) -> None:
    """Ship (and/or fetch) team session lines at a session edge when `session.store` is set and there
    is work. Without a store nothing of the sync is imported (segments, packs, the S3 client:
    tests/hooks/test_imports.py)."""
    from ..session.remote import wanted

    if not wanted(ctx.project):
        return
    from ..index.teamsync import hook_sync

    hook_sync(ctx.project, push=push, pull=pull, warn=say)
