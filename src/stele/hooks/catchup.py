"""What the session start and the prompt would have said, carried by the first tool hook of a task in
a harness where those hooks cannot reach the model (`harness.CATCH_UP`: Cline CLI).

Cline runs TaskStart and UserPromptSubmit detached and ignores what they print; only a PreToolUse or
PostToolUse `contextModification` is added to the conversation, as a message after the tool's result.
So the first PreToolUse of a task (whatever the tool: the first move is often a read) answers with the
standing rules, the open tasks and the recall for the task's prompt (read from Cline's own session
record, `payload.cline_task_prompt`), before any anchored facts of the edit. The model sees them with
its first tool result instead of before its first answer: a task answered without any tool call gets
none of it. The rules are claimed as a set (`state.rules_claimed`), so of two tool hooks Cline runs at
once one carries them, and every later hook of the task reads one flag and goes on.
"""
from __future__ import annotations

from ..plain import replace
from . import harness
from .run import Context, Handler, Reply

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .payload import Payload


def first_tool(handler: Handler) -> Handler:
    """`handler`, preceded on a task's first tool hook (in a CATCH_UP harness) by the session start and
    the prompt's recall."""

    def handle(ctx: Context) -> Reply | None:
        if ctx.payload.form not in harness.CATCH_UP or not ctx.payload.session or ctx.seen().rules_claimed:
            return handler(ctx)
        return _joined([_start(ctx), _recall(ctx), handler(ctx)])

    return handle


def _start(ctx: Context) -> Reply | None:
    from .session_start import handle

    seen = ctx.seen()
    reply = handle(ctx)  # a new task was shown nothing: it reads from an empty state and claims the rules
    ctx.snapshot = seen
    return reply


def _recall(ctx: Context) -> Reply | None:
    from .payload import cline_task_prompt
    from .prompt import handle

    payload: Payload = ctx.payload
    prompt = payload.prompt or cline_task_prompt(payload.data)
    if not prompt:
        return None
    ctx.payload = replace(payload, prompt=prompt)
    try:
        return handle(ctx)
    finally:
        ctx.payload = payload


def _joined(replies: list[Reply | None]) -> Reply | None:
    """One answer from several: texts in order, ids (and callouts) together, the first steering shown whole."""
    given = [r for r in replies if r is not None and (r.text or r.whole)]
    if not given:
        return None
    return Reply("\n".join(r.text for r in given if r.text), tuple(i for r in given for i in r.ids),
                 hold=any(r.hold for r in given), whole="\n".join(r.whole for r in given if r.whole),
                 risks=tuple(i for r in given for i in r.risks))
