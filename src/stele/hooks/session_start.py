"""`stele hook session-start`: what an agent should know before its first prompt.

The standing rules (current `delivery: always` facts), the open tasks, and one line on how to ask
for more. On `clear` and `compact` the earlier injections have left the model's context, so the
session's injected set starts over; on `resume` the transcript replays them, so it is kept.
"""
from __future__ import annotations

from ..record import load
from ..render.facts import fact_block, frame, label, squash
from . import lookup, state
from .run import Context, Reply, run

MAX_TASKS = 10
RULE_BODY_CHARS = 600
FORGETFUL_SOURCES = frozenset({"clear", "compact"})


def pointer(harness: str) -> str:
    helper = ("the stele-researcher subagent runs it in its own context" if harness == "claude"
              else "a read-only search you can run in a subagent or shell")
    return ("More: each prompt gets the recorded facts that bear on it, a starting set rather than "
            "everything. `stele recall \"question\"` searches and walks the links; `stele brief \"question\"` "
            f"returns a short cited briefing ({helper}); `stele show ID` shows one fact.")


def handle(ctx: Context) -> Reply:
    if ctx.payload.source in FORGETFUL_SOURCES and ctx.payload.session:
        with state.update(ctx.project, ctx.payload.session) as st:
            st.injected = []
    record = load(ctx.project)
    rules = lookup.always(record)
    tasks = lookup.open_tasks(record)
    sections = [
        "Reference data from this repository's committed record "
        f"({ctx.project.config['memory_dir']}/): what the project has settled. The user's requests come first.",
    ]
    if rules:
        sections.append("Standing instructions and constraints:\n"
                        + "\n".join(fact_block(f, RULE_BODY_CHARS) for f in rules))
    if tasks:
        more = f"\n({len(tasks) - MAX_TASKS} more: `stele list --kind task`)" if len(tasks) > MAX_TASKS else ""
        sections.append("Open tasks:\n" + "\n".join(squash(label(t), 160) for t in tasks[:MAX_TASKS]) + more)
    sections.append(pointer(ctx.harness))
    return Reply(frame("Stele: project memory", sections), tuple(f.id for f in rules))


def main(args) -> int:
    return run(args, handle)
