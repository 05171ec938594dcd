"""Checks that need only the record: cycles, contradictions, the `always` budget (the real snapshot
assembly), secrets, and the warnings about facts going stale (expired, review overdue, unverified,
oversized, near-duplicate)."""
from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from ..kinds import CLOSED_STATUSES as CLOSED
from ..kinds import CONTAINERS
from ..record.load import Record, fact_files
from ..record.model import Fact
from ..redact import Redactor
from .findings import Finding
from .similar import similar_pairs
from .untrusted import untrusted

if TYPE_CHECKING:
    from ..snapshot.model import Budgets

WORK_ITEMS = CONTAINERS | {"task"}


def delivered_bytes(fact: Fact) -> int:
    """What a snapshot must carry of a record at least: its title and body."""
    return len(fact.title.encode()) + 1 + len(fact.body.encode())


def _line(fact: Fact, *key) -> int:
    return fact.doc.line_of(*key) if fact.doc else 1


def run_all(record: Record, on: dt.date) -> list[Finding]:
    from ..snapshot.model import Budgets

    cfg = record.project.config
    return [*supersession_cycles(record), *contradictions(record),
            *always_budget(record, Budgets.from_config(cfg), on),
            *secrets(record, Redactor(cfg["redaction.patterns"])),
            *staleness(record, on, cfg["doctor.unverified_days"]),
            *oversized(record, cfg["doctor.oversized_bytes"]),
            *near_duplicates(record, cfg["doctor.near_duplicate"]),
            *untrusted(record, cfg["doctor.long_line"])]


def supersession_cycles(record: Record) -> list[Finding]:
    facts, state, found = record.facts, {}, []  # state: 1 on the current path, 2 finished

    def edges(fid: str):
        return iter(facts[fid].links.get("supersedes", []))

    for start in sorted(facts):
        if start in state:
            continue
        path, stack, state[start] = [start], [(start, edges(start))], 1
        while stack:
            node, targets = stack[-1]
            nxt = next(targets, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(nxt) == 1:
                cycle = path[path.index(nxt):]
                first = cycle.index(min(cycle))
                cycle = cycle[first:] + cycle[:first]
                f = facts[cycle[0]]
                loop = " -> ".join(cycle + cycle[:1])
                found.append(Finding("supersession-cycle", f.path, _line(f, "links", "supersedes"),
                                     f"supersession cycle {loop}: a fact cannot be replaced by what it "
                                     "replaced; remove one `supersedes` link", f.id))
            elif nxt in facts and nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, edges(nxt)))
    return found


def contradictions(record: Record) -> list[Finding]:
    found, seen = [], set()
    for fact in sorted(record.facts.values(), key=lambda f: f.id):
        for i, target in enumerate(fact.links.get("contradicts", [])):
            other = record.facts.get(target)
            pair = frozenset((fact.id, target))
            if other is None or fact.status != "current" or other.status != "current" or pair in seen:
                continue
            seen.add(pair)
            found.append(Finding("contradiction", fact.path, _line(fact, "links", "contradicts", i),
                                 f"{fact.id} and {target} are both current but contradict each other: "
                                 f"supersede or retire one (`stele supersede {target} --by {fact.id}`)",
                                 fact.id))
    return found


def always_budget(record: Record, budgets: Budgets, on: dt.date) -> list[Finding]:
    """Each `always` record that does not fit when the real snapshot assembly runs (`stele context`,
    `stele task claim`): it names exactly the records a claim would fail on."""
    from ..snapshot.assemble import BudgetError, select_records

    try:
        select_records(record.facts, [], [], budgets, on)
    except BudgetError as e:
        found = []
        for fid, why in e.misfits:
            fact = record.facts[fid]
            found.append(Finding("always-budget", fact.path, _line(fact, "delivery"),
                                 f"{fid} is an `always` record that does not fit the snapshot ({why}): every "
                                 "context and claim fails until it is shortened or made `delivery: ranked`",
                                 fid))
        return found
    return []


def secrets(record: Record, redactor: Redactor) -> list[Finding]:
    found = []
    for path in fact_files(record.project.memory_dir):
        if not record.project.contains(path):
            continue  # the schema check names it; its content is not the record's
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        rel = record.project.rel(path)
        for kind, offset in redactor.find(text):
            line = text.count("\n", 0, offset) + 1
            found.append(Finding("secret", rel, line, f"{kind} in committed memory: remove it and rotate the "
                                 "credential (it is in git history once pushed)"))
    return found


def staleness(record: Record, on: dt.date, unverified_days: int) -> list[Finding]:
    found = []
    for fact in sorted(record.facts.values(), key=lambda f: f.id):
        if fact.status in CLOSED:
            continue
        if fact.expires and fact.expires < on:
            found.append(Finding("expired", fact.path, _line(fact, "expires"),
                                 f"{fact.id} expired on {fact.expires}: retire it (`stele retire {fact.id}`) "
                                 "or move `expires` forward; it is no longer injected", fact.id))
        if fact.review_after and fact.review_after < on:
            found.append(Finding("review-overdue", fact.path, _line(fact, "review_after"),
                                 f"{fact.id} was due for review on {fact.review_after}: confirm it "
                                 f"(`stele verify {fact.id}` and a new `review_after`) or retire it",
                                 fact.id))
        last = fact.verified or fact.created
        if fact.kind not in WORK_ITEMS and last and (on - last).days > unverified_days:
            key = "verified" if fact.verified else "created"
            days = (on - last).days
            found.append(Finding("unverified", fact.path, _line(fact, key),
                                 f"{fact.id} not verified for {days} days (over {unverified_days}, "
                                 f"doctor.unverified_days): `stele verify {fact.id}` if it still holds",
                                 fact.id))
    return found


def oversized(record: Record, limit: int) -> list[Finding]:
    return [Finding("oversized", f.path, 1, f"{f.id} is {delivered_bytes(f)} bytes, over {limit} "
                    "(doctor.oversized_bytes): a snapshot cannot carry it whole; split it or link a document",
                    f.id)
            for f in sorted(record.facts.values(), key=lambda f: f.id) if delivered_bytes(f) > limit]


def near_duplicates(record: Record, threshold: float) -> list[Finding]:
    live = {f.id: f for f in record.facts.values() if f.status not in CLOSED}
    by_kind: dict[str, dict[str, str]] = {}
    for f in live.values():
        by_kind.setdefault(f.kind, {})[f.id] = f"{f.title}\n{f.body}"
    found = []
    for texts in by_kind.values():
        for a, b, score in similar_pairs(texts, threshold):
            first, second = sorted((a, b))
            fa, fb = live[first], live[second]
            if first in fb.links.get("supersedes", []) or second in fa.links.get("supersedes", []):
                continue
            found.append(Finding("near-duplicate", fb.path, 1, f"{second} is {score:.0%} similar to {first} "
                                 f"({fa.path}): merge them, or supersede one", second))
    return found
