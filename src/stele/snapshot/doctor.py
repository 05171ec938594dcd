"""`stele context doctor`: the records that make snapshots fail, shrink or repeat themselves.

- `always` records that do not fit the record budget together: an error, since every claim fails.
- Oversized records (over `doctor.oversized_bytes` as delivered): they crowd out everything else.
- Expired and review-overdue records: silently no longer delivered, which is rarely what was meant.
- Duplicates: two active records of one kind with the same or nearly the same words (Jaccard of their
  word sets at least `doctor.near_duplicate`; one changed word in 28 still counts at 0.92). Candidate pairs
  come from shared uncommon words, so the check stays near linear on a large record.
"""
from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import asdict, dataclass
from itertools import combinations

from ..kinds import CONTAINERS
from ..model import Fact
from ..record import Record
from .assemble import NOT_RECORDS, BudgetError, inactive, record_text, select_records
from .model import Budgets

COMMON_WORD = 50  # a word shared by more records than this is not evidence of duplication
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Finding:
    severity: str  # error | warning
    id: str
    check: str  # budget | oversized | expired | review | duplicate
    message: str

    def as_dict(self) -> dict:
        return asdict(self)


def check(record: Record, budgets: Budgets, on: dt.date, oversized: int, near: float) -> list[Finding]:
    facts = [f for f in record.facts.values() if f.kind not in CONTAINERS and f.kind != "task"]
    found: list[Finding] = []
    try:
        select_records(record.facts, [], [], budgets, on)
    except BudgetError as e:
        found += [Finding("error", fid, "budget", f"`always` record that does not fit ({why}): every snapshot "
                                                  "and claim fails until it is shortened or made `ranked`")
                  for fid, why in e.misfits]
    for fact in facts:
        size = len(record_text(fact, on).encode("utf-8"))
        if size > oversized and fact.kind not in NOT_RECORDS:  # documents are read whole on demand
            found.append(Finding("warning", fact.id, "oversized", f"{size} bytes as delivered, over "
                                 f"{oversized}: split it, or move the detail into a knowledge document"))
        if fact.status in ("superseded", "retired"):
            continue
        if fact.expires and fact.expires < on:
            found.append(Finding("warning", fact.id, "expired", f"expired {fact.expires.isoformat()} and is no "
                                 "longer delivered: retire it, or move `expires` later"))
        elif fact.review_after and fact.review_after < on:
            found.append(Finding("warning", fact.id, "review", f"review overdue since {fact.review_after.isoformat()}"
                                 " and no longer delivered: `stele verify` it and move `review_after`"))
    active = [f for f in facts if inactive(f, on) is None]
    for a, b, score in duplicates(active, near):
        what = "the same text as" if score >= 1 else f"{score:.0%} the same words as"
        found.append(Finding("warning", b.id, "duplicate", f"{what} {a.id} ({a.kind}): merge them, or supersede "
                                                           "one with the other"))
    order = {"error": 0, "warning": 1}
    return sorted(found, key=lambda f: (order[f.severity], f.check, f.id))


def _words(fact: Fact) -> frozenset[str]:
    return frozenset(_WORD.findall(f"{fact.title} {fact.body}".lower()))


def duplicates(facts: list[Fact], near: float) -> list[tuple[Fact, Fact, float]]:
    """Pairs of one kind whose word sets overlap by at least `near` (Jaccard), each pair once."""
    sets = {f.id: _words(f) for f in facts}
    by_id = {f.id: f for f in facts}
    postings: dict[tuple[str, str], list[str]] = defaultdict(list)
    for f in sorted(facts, key=lambda f: f.id):
        for s in sets[f.id]:
            postings[(f.kind, s)].append(f.id)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for ids in postings.values():
        if len(ids) <= COMMON_WORD:
            for pair in combinations(ids, 2):
                shared[pair] += 1
    pairs = []
    for (a, b), n in sorted(shared.items()):
        score = n / len(sets[a] | sets[b])
        if score >= near:
            pairs.append((by_id[a], by_id[b], score))
    return pairs
