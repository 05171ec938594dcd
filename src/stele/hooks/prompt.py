"""`stele hook prompt`: the recall for the prompt, put in front of the model before it answers.

Rendered as reference data and said to be a starting set. Ids this session has already been shown
are excluded from the recall itself (not filtered afterwards), so the window fills with what is new.
"""
from __future__ import annotations

from . import state
from .run import Context, Reply, run


def handle(ctx: Context) -> Reply | None:
    from ..retrieve import recall, render_text

    prompt = ctx.payload.prompt
    if not prompt.strip():
        return None
    seen = state.load(ctx.project, ctx.payload.session)
    result = recall(ctx.project, prompt, exclude=frozenset(seen.injected))
    if not result.entries and not result.risks:
        return None
    ids = tuple(e.id for e in result.entries) + tuple(r.id for r in result.risks)
    return Reply(render_text(result, ctx.max_chars), ids)


def main(args) -> int:
    return run(args, handle)
