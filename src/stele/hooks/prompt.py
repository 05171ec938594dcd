"""`stele hook prompt`: the recall for the prompt, put in front of the model before it answers, after
the preamble of the Stele session the agent works in, when there is one.

Rendered as reference data and said to be a starting set (`render.agent.recall_text`). Ids this
session has already been shown go to the recall as `exclude`: they are walked through but not
returned, so the window fills with what is new; a risk it was shown only as an entry may be called
out once (`retrieve.delivered`: the state keeps the two forms apart). The recall never raises; its first warning (the
index rebuilt, the embedder missing) becomes the hook's one stderr line.
"""
from __future__ import annotations

from ..errors import say
from . import state
from .harness import NUDGE_OPENING
from .run import Context, Reply, run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace


def active_session(ctx: Context) -> str | None:
    """The Stele session this harness session works in: `STELE_SESSION` when it names a started
    session (remembered in the hook state, so later hooks of the same harness session know it even
    where the harness does not pass the variable on), else the one remembered, else None."""
    from ..session import wal

    named = wal.current_session()
    harness_session = ctx.payload.session
    if named and named != harness_session and wal.segments(ctx.project, named):
        if harness_session:
            try:
                with state.update(ctx.project, harness_session) as st:
                    st.stele_session = named
            except OSError:
                pass  # the mapping is a convenience; the variable still names it this time
        return named
    if harness_session:
        remembered = ctx.seen().stele_session  # the state as this hook read it, once
        if remembered and wal.segments(ctx.project, remembered):
            return remembered
    if named and wal.segments(ctx.project, named):
        return named
    return None


def preamble(ctx: Context) -> tuple[str, str]:
    """The active Stele session's preamble (goal, completed stages folded with visit counts, steering)
    under the session's fidelity rules, or ''; and '' for the steering, unless the preamble passes the
    hook's cap: then the preamble comes without its steering and the steering comes apart, to be
    shown first and whole (steering is never cut)."""
    sid = active_session(ctx)
    if not sid:
        return "", ""
    from ..session.preamble import for_scope

    pre = for_scope(ctx.project, session=sid)
    text = pre.render()
    if len(text) < ctx.max_chars or not pre.own_steering:
        return text, ""
    return pre.render(steering=False), pre.render_steering()


def handle(ctx: Context) -> Reply | None:
    from ..render.agent import recall_text
    from ..retrieve.recall import recall

    prompt = ctx.payload.prompt
    if not prompt.strip() or prompt.startswith(NUDGE_OPENING):  # Gemini and Copilot re-prompt with the nudge
        return None
    from .session_start import for_prompt

    history, steering = preamble(ctx)
    # the preamble first and whole where it fits (steering is never cut); the standing rules next when
    # this hook is the first of its session to take them on (Copilot CLI runs it beside the session start)
    room = ctx.max_chars - len(history) - len(steering) - 1
    rules, rule_ids, looked_at = for_prompt(ctx, room)
    head = "\n".join(x for x in (history, rules) if x)
    room -= len(rules) + 1 if rules else 0
    had = ctx.seen().delivered()
    result = recall(ctx.project, prompt, exclude=had.shown | looked_at, warned=had.warned | looked_at)
    if result.warnings:
        say(result.warnings[0])
    # the session-start hook may be running beside this one (Copilot CLI): what it shows, this does not
    called = tuple(r.id for r in result.risks)
    mine = set(ctx.claim([e.id for e in result.entries] + list(called), risks=called))
    result.entries = [e for e in result.entries if e.id in mine]
    result.risks = [r for r in result.risks if r.id in mine]
    if (not result.entries and not result.risks) or room < 400:
        return Reply(head, rule_ids, whole=steering) if head or steering else None
    ids = rule_ids + tuple(e.id for e in result.entries) + tuple(r.id for r in result.risks)
    recalled = recall_text(result, room)
    return Reply(f"{head}\n{recalled}" if head else recalled, ids, whole=steering,
                 risks=tuple(r.id for r in result.risks))


def main(args: Namespace) -> int:
    return run(args, handle)
