"""`stele hook prompt`: the recall for the prompt, put in front of the model before it answers.

Rendered as reference data and said to be a starting set (`render.agent.recall_text`). Ids this
session has already been shown go to the recall as `exclude`: they are walked through but not
returned, so the window fills with what is new. The recall never raises; its first warning (the
index rebuilt, the embedder missing) becomes the hook's one stderr line.
"""
from __future__ import annotations

from ..errors import say
from . import state
from .run import Context, Reply, run


def handle(ctx: Context) -> Reply | None:
    from ..render.agent import recall_text
    from ..retrieve.recall import recall

    prompt = ctx.payload.prompt
    if not prompt.strip():
        return None
    seen = state.load(ctx.project, ctx.payload.session)
    result = recall(ctx.project, prompt, exclude=frozenset(seen.injected))
    if result.warnings:
        say(result.warnings[0])
    if not result.entries and not result.risks:
        return None
    ids = tuple(e.id for e in result.entries) + tuple(r.id for r in result.risks)
    return Reply(recall_text(result, ctx.max_chars), ids)


def main(args) -> int:
    return run(args, handle)
