"""`stele hook session-start`: what an agent should know before its first prompt.

The standing rules (current `delivery: always` facts, whole), the open tasks (the ones this agent has
claimed first, each with who holds it), and one line on how to ask for more. On `clear` and `compact`
the earlier injections have left the model's context, so the session's injected set starts over; on
`resume` the transcript replays them, so it is kept. Cursor gets the fast path: the index as it is.

The standing rules go to the model whole, as rules, once a session, with whichever hook takes them
on first. Copilot CLI runs the prompt hook beside this one and puts both answers in its first
request; when the prompt hook claims the rules first, it carries them (`for_prompt`) and this hook
leaves them out. Were the prompt hook to claim a rule as a recall hit instead, the model would get it
cut to a summary among search results, and this hook could no longer show it: the failure
tests/e2e/test_turn.py caught in 2 of 10 Copilot runs.
"""
from __future__ import annotations

import os

from ..neutralize import neutralize
from ..render.facts import TITLE, Line, block, frame, label
from . import lookup, state
from .run import Context, Reply, run, teamsync

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Iterable

MAX_TASKS = 10
RULE_CHARS = 600
MIN_CONTENTS = 600  # characters left for the record's table of contents, or it is left out
COLD_FILES = 1000  # with no index yet, past this many fact files a build outlasts the hook's budget
FORGETFUL_SOURCES = frozenset({"clear", "compact"})
PROBE_ENV = "STELE_PROBE"  # install.live.PROBE_ENV, named here so the hook path does not import install


def pointer(harness: str) -> str:
    helper = ("the stele-researcher subagent runs it in its own context" if harness == "claude"
              else "a read-only search, best run in a subagent")
    return ("Each prompt brings the recorded facts that bear on it: a starting set, not everything. "
            "`stele recall \"question\"` searches and walks the links; `stele brief \"question\"` returns a "
            f"short cited briefing ({helper}); `stele show ID` shows one fact.")


def handle(ctx: Context) -> Reply:
    # What the session was shown before this hook: on resume, what the replayed transcript holds. A new,
    # cleared or compacted session was shown nothing, so whatever its state holds when the rules are
    # claimed, a hook running beside this one (Copilot's prompt hook) showed, and the rules leave it out.
    ctx.snapshot = ctx.seen() if ctx.payload.source == "resume" else state.SessionState()
    teamsync(ctx, push=True, pull=True)  # the team's new session lines, before the index is read
    if ctx.payload.source in FORGETFUL_SOURCES and ctx.payload.session:
        try:
            with state.update(ctx.project, ctx.payload.session) as st:
                st.forget()
                st.rules_claimed = False
        except OSError as e:
            ctx.unwritable("that this session starts over", e)
    toc = ""
    if not lookup.has_index(ctx.project) and lookup.fact_files(ctx.project) > COLD_FILES:
        # a first session on a record never indexed: the standing rules from the files, and the index
        # built in the background for the next hook (building it here would pass the hook's budget)
        from ..index import background

        rules, full = _rules(lookup.always_from_files(ctx.project), ctx.max_chars)
        background.start(ctx.project)
        tasks: list[Line] = []
        total = 0
    else:
        # Cursor's IDE applies sessionStart's additional_context only if it arrives quickly (a known
        # race): there the catalog is read as the last refresh left it, without the freshness scan
        with lookup.open_index(ctx.project, fresh=ctx.harness != "cursor") as index:
            rules, full = _rules(lookup.always(index), ctx.max_chars)
            # rules that fill the answer leave no room for the tasks: their query and claims are skipped
            tasks, total = ([], 0) if full else lookup.open_tasks(index, ctx.project, MAX_TASKS)
            # what is left after the rules and tasks (the claim below can only shorten them)
            room = ctx.max_chars - sum(len(x) + 2 for x in rules.values()) - 100 * len(tasks) - 1200
            if not full and room > MIN_CONTENTS:
                from ..index.contents import BUDGET, cached

                toc = cached(index.catalog, min(BUDGET, room))
    rules = {i: rules[i] for i in ctx.claim(rules, rules=True)}  # a prompt hook beside this one may carry them
    sections = []
    if rules:
        sections.append(section(rules))
    if tasks:
        more = f"\n({total - len(tasks)} more: `stele task list`)" if total > len(tasks) else ""
        sections.append("Open tasks:\n" + "\n".join(label(t) for t in tasks) + more)
    if toc:
        sections.append(toc)
    sections.append(pointer(ctx.harness))
    if PROBE_ENV in os.environ:  # `stele install --check --probe` is running this harness
        from ..install.live import probe_line

        sections += [line for line in (probe_line(),) if line]
    return Reply(frame(TITLE, sections), tuple(rules))


def section(rules: dict[str, str]) -> str:
    return "Standing instructions and constraints:\n" + "\n".join(rules.values())


def for_prompt(ctx: Context, room: int) -> tuple[str, tuple[str, ...], frozenset[str]]:
    """The standing rules for a prompt hook that runs before any hook of its session took them on
    (Copilot CLI starts it beside the session-start hook): the section it shows first, the ids it
    claimed, and the ids of every rule it looked at (whoever shows them, its recall leaves them out).
    Nothing once a hook has taken them on, which the session start does before the first prompt in
    the harnesses that run hooks one after the other: the prompt hook then reads nothing more."""
    if not ctx.payload.session or ctx.seen().rules_claimed:
        return "", (), frozenset()
    with lookup.open_index(ctx.project, fresh=False) as index:
        rules, _ = _rules(lookup.always(index), room)
    known = set(ctx.seen().injected)  # shown before this hook started (a state older than the flag)
    mine = ctx.claim([i for i in rules if i not in known], rules=True)
    if not mine or ctx.unrecorded:  # unrecorded: every prompt would repeat them; the session start shows them
        return "", (), frozenset(rules)
    return frame(TITLE, [section({i: rules[i] for i in mine})]), tuple(mine), frozenset(rules)


def _rules(lines: Iterable[Line], room: int) -> tuple[dict[str, str], bool]:
    """Each rule's block, in order, until they pass `room` characters as the agent would see them
    (neutralized): the hook's cap (`hooks.max_chars`) cuts the rest, so their bodies are not read (a
    50,000-fact record may hold a few thousand). True when they passed it."""
    out: dict[str, str] = {}
    used = 0
    for line in lines:
        out[line.id] = text = block(line, RULE_CHARS)  # a flagged rule comes marked
        used += len(neutralize(text)) + 1
        if used > room:
            return out, True
    return out, False


def subagent(ctx: Context) -> Reply:
    """A subagent starts with an empty context (Copilot CLI prepends this to its prompt): the same
    standing rules and pointer, leaving the session's record of what it was shown alone."""
    with lookup.open_index(ctx.project) as index:
        rules, _ = _rules(lookup.always(index), ctx.max_chars)
    sections = [section(rules)] if rules else []
    sections.append(pointer(ctx.harness))
    return Reply(frame(TITLE, sections))


def main(args: Namespace) -> int:
    return run(args, handle)


def main_subagent(args) -> int:
    return run(args, subagent)
