"""Deciding what fits: the ordered parts of a snapshot and their budgets (DESIGN.md section 5).

Pure functions over facts and chunks already in memory, so every budget rule is tested without a
repository. The order is fixed: `always` records by priority critical..low, records named by id,
ranked records, code, then the knowledge briefing (counted apart). Required records (`always` and
named) either all fit or the snapshot fails naming the ones that do not: a rule is never dropped
silently. Optional things (ranked records, code, briefing items) that do not fit are left out and
listed in `skipped` with the budget that left them out.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from ..delivery import inactive, is_rule, rule_order, standing_rules, withheld
from ..errors import SteleError, UsageError
from ..kinds import NOT_CONTEXT_RECORDS
from ..neutralize import shown, shown_many
from ..record.model import Fact
from ..textcut import counted
from .model import Budgets, Item, Skip, Snapshot

NOT_RECORDS = NOT_CONTEXT_RECORDS  # work and documents reach a run as records only when named


class BudgetError(SteleError):
    """Required records that do not fit; `misfits` holds (id, why) for each. The message names the
    settings that would let each one in (those of its own reason, not a generic list)."""

    def __init__(self, misfits: list[tuple[str, str]], fitted: int, used: int, budgets: Budgets,
                 settings: list[str] | None = None) -> None:
        self.misfits = misfits
        listed = ", ".join(f"{fid} ({why})" for fid, why in misfits)
        named = " / ".join(f"snapshot.{s}" for s in dict.fromkeys(settings or ["records_bytes"]))
        super().__init__(
            f"required records do not fit the snapshot: {listed}; {counted(fitted, 'record')} using {used} of "
            f"{records_budget(budgets)} bytes fit before them. Shorten them, make some `delivery: ranked`, "
            f"or raise {named} in .stele/config.yaml")


class Chunk(Protocol):
    path: str
    start: int
    end: int
    symbol: str | None
    text: str


def withheld_rules(facts: Iterable[Fact], on: dt.date) -> list[str]:
    """One warning per rule (`delivery.is_rule`) left out only for the calendar (expired, or its
    review overdue): a snapshot leaves such a rule out, as every auto-injection does, but never
    without naming it. (Retired, superseded and draft rules were taken out on purpose: not named.)"""
    found = []
    for f in sorted(facts, key=rule_order):
        why = inactive(f, on)
        if why and is_rule(f):
            found.append(f"stele: {f.id} ({f.kind}: {f.title}) is an `always` rule but was left out: {why}; "
                         f"`stele verify {f.id}` and a new review_after or expires if it still holds, else "
                         f"`stele retire {f.id}`")
    return found


def may_rank(fact: Fact, on: dt.date) -> bool:
    return fact.kind not in NOT_RECORDS and withheld(fact, on) is None


def always_records(facts: Iterable[Fact], on: dt.date) -> list[Fact]:
    """The standing rules (`delivery.standing_rules`, as the session-start hook gives them)."""
    return standing_rules(facts, on)


def record_text(fact: Fact, on: dt.date) -> str:
    return shown(_record_source(fact, on))


def record_texts(facts: Sequence[Fact], on: dt.date) -> list[str]:
    """`record_text` of each fact, for a whole record at once (`doctor`'s oversized check)."""
    return shown_many([_record_source(f, on) for f in facts])


def _record_source(fact: Fact, on: dt.date) -> str:
    labels = [f"priority {fact.priority}"] if fact.priority != "normal" else []
    if fact.status != "current":
        labels.append(f"status {fact.status}")
    why = inactive(fact, on)
    if why and why != fact.status:
        labels.append(why)
    if fact.needs_review:
        labels.append("needs review")
    head = f"[{fact.id}] {fact.kind}: {fact.title}" + (f" ({', '.join(labels)})" if labels else "")
    body = fact.body.strip("\n")
    return f"{head}\n{body}\n" if body else head + "\n"


def _record_item(part: str, fact: Fact, on: dt.date) -> Item:
    return Item(part, fact.id, record_text(fact, on), {
        "kind": fact.kind, "title": shown(fact.title), "status": fact.status, "delivery": fact.delivery,
        "priority": fact.priority})


def records_budget(budgets: Budgets) -> int:
    """The bytes records may use: their own budget, and never more than the snapshot's total."""
    return min(budgets.records_bytes, budgets.total_bytes)


def misfit(item: Item, taken: list[Item], limit: int, budgets: Budgets) -> tuple[str, str] | None:
    """Why `item` cannot join the records already `taken`, and the setting that decided it; None when
    it fits. The one rule of what fits: the snapshot applies it, `context doctor` reports by it."""
    if item.size > budgets.record_max_bytes:
        return f"{item.size} bytes, over the {budgets.record_max_bytes}-byte limit for one record", \
            "record_max_bytes"
    if len(taken) >= limit:
        return f"past the {limit}-record limit", "records_count_max"
    used = sum(i.size for i in taken) + item.size
    if used > budgets.records_bytes:
        return f"{item.size} bytes, past the {budgets.records_bytes}-byte record budget", "records_bytes"
    if used > budgets.total_bytes:
        return f"{item.size} bytes, past the {budgets.total_bytes}-byte total budget", "total_bytes"
    return None


def select_records(facts: dict[str, Fact], named: list[str], ranked: list[str], budgets: Budgets,
                   on: dt.date) -> tuple[list[Item], list[Skip], int]:
    """The record parts, the ranked candidates left out, and the record count limit that applied."""
    required = [_record_item("always", f, on) for f in always_records(facts.values(), on)]
    taken = {i.key for i in required}
    for fid in named:
        fact = facts.get(fid) or facts.get(fid.upper())
        if fact is None:
            raise UsageError(f"--record {fid}: no fact has that id (`stele list` shows the ids)")
        if fact.id not in taken:
            required.append(_record_item("named", fact, on))
            taken.add(fact.id)
    limit = max(budgets.records_count, min(len(required), budgets.records_count_max))
    items: list[Item] = []
    misfits, settings = [], []
    for item in required:
        found = misfit(item, items, limit, budgets)
        if found:
            misfits.append((item.key, found[0]))
            settings.append(found[1])
        else:
            items.append(item)
    if misfits:
        raise BudgetError(misfits, len(items), sum(i.size for i in items), budgets, settings)

    skipped = []
    for fid in ranked:
        fact = facts.get(fid)
        if fact is None or fact.id in taken or not may_rank(fact, on):
            continue
        taken.add(fact.id)
        item = _record_item("ranked", fact, on)
        found = misfit(item, items, limit, budgets)
        if found:
            skipped.append(Skip("ranked", fact.id, found[0]))
        else:
            items.append(item)
    return items, skipped, limit


def _fence(code: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


def code_text(chunk: Chunk, anchored_by: list[str]) -> str:
    head = f"{chunk.path}:{chunk.start}-{chunk.end}" + (f" {chunk.symbol}" if chunk.symbol else "")
    if anchored_by:
        head += f" (anchored by {', '.join(anchored_by)})"
    code = chunk.text if chunk.text.endswith("\n") else chunk.text + "\n"
    code = shown(code)
    fence = _fence(code)
    return shown(head) + f"\n{fence}\n{code}{fence}\n"


def fit_code(candidates: Iterable[tuple[Chunk, list[str]]], limit: int) -> tuple[list[Item], list[Skip]]:
    """Chunks in candidate order (anchored first), each at most once, within `limit` bytes."""
    items, skipped, used = [], [], 0
    seen: dict[str, list[tuple[int, int]]] = {}
    for chunk, anchored_by in candidates:
        spans = seen.setdefault(chunk.path, [])
        if any(chunk.start <= e and s <= chunk.end for s, e in spans):
            continue  # already delivered (an anchored chunk that search also found)
        spans.append((chunk.start, chunk.end))
        key = f"{chunk.path}:{chunk.start}-{chunk.end}"
        item = Item("code", key, code_text(chunk, anchored_by), {
            "path": chunk.path, "start": chunk.start, "end": chunk.end, "symbol": chunk.symbol,
            "anchored_by": list(anchored_by)})
        if used + item.size > limit:
            skipped.append(Skip("code", key, f"{item.size} bytes, past the {limit}-byte code budget"))
            continue
        items.append(item)
        used += item.size
    return items, skipped


def is_current_knowledge(fact: Fact, on: dt.date) -> bool:
    from ..record.lifecycle import unreviewed

    return fact.kind == "document" and fact.status == "current" and inactive(fact, on) is None \
        and unreviewed(fact) is None  # `status: current` by hand, or edited since its review


def pick_briefing(facts: dict[str, Fact], ranked: list[str], budgets: Budgets,
                  on: dt.date) -> tuple[list[Item], list[Skip]]:
    """Titles and summaries of current documents: those matching the task first, then the newest."""
    docs = [f for f in facts.values() if is_current_knowledge(f, on)]
    by_rank = {fid: n for n, fid in enumerate(ranked)}
    docs.sort(key=lambda f: (by_rank.get(f.id, len(by_rank)), -(f.created or dt.date.min).toordinal(), f.id))
    items: list[Item] = []
    skipped: list[Skip] = []
    used = 0
    for n, doc in enumerate(docs):
        if len(items) >= budgets.briefing_items:
            skipped.append(Skip("briefing", "*", f"{len(docs) - n} more current documents, past the "
                                                 f"{budgets.briefing_items}-item briefing budget"))
            break
        item = Item("briefing", doc.id, shown(f"- [{doc.id}] {doc.title}: {doc.summary_text}\n"),
                    {"title": shown(doc.title), "summary": shown(doc.summary_text)})
        if used + item.size > budgets.briefing_bytes:
            why = f"{item.size} bytes, past the {budgets.briefing_bytes}-byte briefing budget"
            skipped.append(Skip("briefing", doc.id, why))
            continue
        items.append(item)
        used += item.size
    return items, skipped


HEADINGS = {
    "always": "## Rules for every run (critical first)",
    "named": "## Records named for this run",
    "ranked": "## Records related to this task",
    "code": "## Code for this task",
    "briefing": "## Knowledge briefing (current documents; read one in full with `stele show ID`)",
}


def render_text(snap: Snapshot) -> str:
    """The plain, byte-stable text the agent receives (headings are not counted in the budgets)."""
    task = snap.inputs.get("task")
    head = "Stele context snapshot"  # no run id: an unsaved snapshot has none to look up
    if task:
        head += shown(f" for {task['id']}: {task['title']}")
    r_n, r_bytes = snap.used("always", "named", "ranked")
    c_n, c_bytes = snap.used("code")
    k_n, k_bytes = snap.used("briefing")
    lines = [head, f"Fixed for this run. Records: {r_n} ({r_bytes} of {snap.budgets.records_bytes} bytes); "
                   f"code: {counted(c_n, 'chunk')} ({c_bytes} of {snap.code_limit} bytes); briefing: "
                   f"{counted(k_n, 'item')} ({k_bytes} of {snap.budgets.briefing_bytes} bytes)."]
    for part, heading in HEADINGS.items():
        items = snap.part(part)
        if items:
            sep = "" if part == "briefing" else "\n"
            lines += ["", heading, "", sep.join(i.text for i in items).rstrip("\n")]
    if snap.skipped:
        lines += ["", f"This is a starting set, not everything: {len(snap.skipped)} more candidates did not "
                      "fit the budgets; `stele search QUERY` finds more."]
    return "\n".join(lines) + "\n"
