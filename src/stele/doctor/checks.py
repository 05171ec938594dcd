"""Checks that need only the record: cycles, contradictions, the `always` budget (the real snapshot
assembly), secrets, and the warnings about facts going stale (expired, review overdue, unverified,
oversized, near-duplicate)."""
from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from ..kinds import CLOSED_STATUSES as CLOSED
from ..kinds import CONTAINERS
from ..record.load import Record
from ..record.model import Fact
from ..record.similar import compared, near_pairs
from ..redact import Redactor
from ..textcut import counted
from .findings import Finding
from .untrusted import untrusted

if TYPE_CHECKING:
    from ..snapshot.model import Budgets

WORK_ITEMS = CONTAINERS | {"task"}


def delivered_bytes(facts: list[Fact], on: dt.date) -> list[int]:
    """What a snapshot carries of each record: the exact text it delivers (header, labels and body), as
    the snapshot counts it, so a record doctor passes is never one every snapshot leaves out."""
    from ..snapshot.assemble import record_texts

    return [len(text.encode("utf-8")) for text in record_texts(facts, on)]


def _line(fact: Fact, *key) -> int:
    return fact.doc.line_of(*key) if fact.doc else 1


def run_all(record: Record, on: dt.date) -> list[Finding]:
    from ..snapshot.model import Budgets

    cfg = record.project.config
    return [*supersession_cycles(record), *half_superseded(record), *interrupted_writes(record),
            *embedding_model(record),
            *contradictions(record),
            *always_budget(record, Budgets.from_config(cfg), on),
            *secrets(record, Redactor(cfg["redaction.patterns"])),
            *staleness(record, on, cfg["doctor.unverified_days"]), *needs_review(record),
            *unreviewed_knowledge(record), *drafts(record),
            *oversized(record, cfg["doctor.oversized_bytes"], Budgets.from_config(cfg), on),
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


def half_superseded(record: Record) -> list[Finding]:
    """A supersession cut short (a kill between its two writes, a merge that took one file of the
    pair, a hand edit), either way round: a fact that `supersedes` another which is still live, so both
    are injected as true; or a fact marked superseded that no fact supersedes, so it left every snapshot
    with nothing in its place."""
    replaced = {old for fact in record.facts.values() for old in fact.links.get("supersedes", [])}
    found = [Finding("half-superseded", fact.path, _line(fact, "status"),
                     f"{fact.id} is superseded, but no fact supersedes it, so nothing is injected in its "
                     f"place: add `supersedes: [{fact.id}]` under the replacement's `links:`, or put "
                     f"`status: current` back and run `stele supersede {fact.id} --by NEW`", fact.id)
             for fact in sorted(record.facts.values(), key=lambda f: f.id)
             if fact.status == "superseded" and fact.id not in replaced]
    for fact in sorted(record.facts.values(), key=lambda f: f.id):
        if fact.status in ("superseded", "retired"):
            continue
        for i, old_id in enumerate(fact.links.get("supersedes", [])):
            old = record.facts.get(old_id)
            if old is not None and old.status not in CLOSED:
                found.append(Finding("half-superseded", fact.path, _line(fact, "links", "supersedes", i),
                                     f"{fact.id} supersedes {old_id}, but {old_id} is still {old.status} and is "
                                     f"injected beside it: finish it with `stele supersede {old_id} --by "
                                     f"{fact.id}`, or remove the link", fact.id))
    return found


def interrupted_writes(record: Record) -> list[Finding]:
    """A journaled change a kill interrupted (the next stele write finishes it), and temporary files of
    killed writers left beside facts by older versions (`git add` would stage them)."""
    from ..record.write import pending

    project = record.project
    found = [Finding("interrupted-write", rel, 1, f"an interrupted change of {rel} is pending: the next "
                     "`stele` write command finishes it (e.g. `stele verify ID`)")
             for rel in pending(project)]
    if project.memory_dir.is_dir():
        for path in sorted(project.memory_dir.rglob(".*.tmp")):
            found.append(Finding("interrupted-write", project.rel(path), 1, "a temporary file a killed writer "
                                 "left: delete it (it is not a fact, and `git add` would stage it)"))
    return found


def embedding_model(record: Record) -> list[Finding]:
    """The configured model cannot be loaded: every recall is full-text only until it is fixed."""
    from ..index.encoder import model_problem

    project = record.project
    problem = model_problem(str(project.config["embedding.model"]), project.root)
    return [Finding("embedding-model", project.rel(project.config_path), 1,
                    f"{problem} (until then recall and search are full-text only)")] if problem else []


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
    # a file not read (a link out of the repository, not UTF-8) is the schema check's; its content is
    # not the record's
    files = [(f.rel, text) for f in record.working_files() if (text := f.text) is not None]
    from ..record.write import in_fingerprints

    found = []
    for (rel, text), spans in zip(files, redactor.spans_many([text for _, text in files]), strict=True):
        for start, _, kind in spans:
            if in_fingerprints(text, start):  # Stele's own bookkeeping: an anchor and a hash of its code
                continue
            line = text.count("\n", 0, start) + 1
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


def unreviewed_knowledge(record: Record) -> list[Finding]:
    """Documents the lifecycle did not bring where they are: `status: current` (or reviewed) written
    by hand, or a reviewed document edited by hand since. Briefings leave them out."""
    from ..record.lifecycle import unreviewed

    found = []
    for f in sorted(record.facts.values(), key=lambda f: f.id):
        why = unreviewed(f)
        if why:
            found.append(Finding("unreviewed-knowledge", f.path, _line(f, "status"),
                                 f"{f.id} is {f.status} but {why.format(status=f.status)}; briefings leave it out: "
                                 f"set `status: draft`, `stele knowledge review {f.id} --note ...`, then "
                                 f"`stele knowledge promote {f.id}`", f.id))
    return found


def drafts(record: Record) -> list[Finding]:
    """One note for the drafts and reviewed drafts waiting (an import writes an ADR without a status as a
    draft: JabRef's gave 64), with the commands that accept them; drafts are recalled, labelled, but not
    in briefings or `always` delivery until promoted. A note: a draft is a normal state, never a failure."""
    waiting = sorted((f for f in record.facts.values() if f.status in ("draft", "reviewed")), key=lambda f: f.id)
    if not waiting:
        return []
    drafted = [f for f in waiting if f.status == "draft"]
    reviewed = [f for f in waiting if f.status == "reviewed"]
    named = ", ".join(f.id for f in waiting[:3]) + (", ..." if len(waiting) > 3 else "")
    steps = ([f"`stele knowledge review --all-drafts --note TEXT` after reading {'it' if len(drafted) == 1 else 'them'}"]
             if drafted else []) + ["`stele knowledge promote --all-reviewed`"]
    said = " and ".join(x for x in (counted(len(drafted), "draft") if drafted else "",
                                    f"{len(reviewed)} reviewed" if reviewed else "") if x)
    verb = "waits" if len(waiting) == 1 else "wait"
    return [Finding("drafts", waiting[0].path, 1, f"{said} {verb} for review ({named}): {', then '.join(steps)} "
                    "(or one at a time: `stele knowledge review ID --note TEXT`)")]


def needs_review(record: Record) -> list[Finding]:
    """Facts marked as needing a person's look (`doctor --fix` marks one whose anchor it could not
    repair): still delivered, labeled, and listed here until `stele verify` clears the mark."""
    return [Finding("needs-review", f.path, _line(f, "needs_review"),
                    f"{f.id} needs review: {f.needs_review}; check it against the code, fix its anchors "
                    f"(`stele edit {f.id} --add-anchor/--remove-anchor`), then `stele verify {f.id}` clears this",
                    f.id)
            for f in sorted(record.facts.values(), key=lambda f: f.id)
            if f.needs_review and f.status not in CLOSED]


def oversized(record: Record, limit: int, budgets: Budgets, on: dt.date) -> list[Finding]:
    """Records over `doctor.oversized_bytes`, or over `snapshot.record_max_bytes` when that is lower
    (then no snapshot can carry them at all), measured as the snapshot measures them."""
    found = []
    live = [f for f in sorted(record.facts.values(), key=lambda f: f.id) if f.status not in CLOSED]
    for f, size in zip(live, delivered_bytes(live, on), strict=True):  # history is not delivered
        if size > budgets.record_max_bytes:
            found.append(Finding("oversized", f.path, 1, f"{f.id} is {size} bytes as delivered, over "
                                 f"snapshot.record_max_bytes ({budgets.record_max_bytes}): no snapshot can carry "
                                 "it; split it or link a document", f.id))
        elif size > limit:
            found.append(Finding("oversized", f.path, 1, f"{f.id} is {size} bytes as delivered, over "
                                 f"doctor.oversized_bytes ({limit}): it crowds out other records; split it "
                                 "or link a document", f.id))
    return found


def near_duplicates(record: Record, threshold: float) -> list[Finding]:
    live = {f.id: f for f in record.facts.values() if f.status not in CLOSED}
    by_kind: dict[str, tuple[dict[str, str], dict[str, tuple[str, ...]]]] = {}
    for f in live.values():
        texts, seqs = by_kind.setdefault(f.kind, ({}, {}))
        texts[f.id], seqs[f.id] = compared(f.title, f.body)
    found = []
    for texts, seqs in by_kind.values():
        for a, b, score in near_pairs(texts, threshold, seqs):
            first, second = sorted((a, b))
            fa, fb = live[first], live[second]
            if first in fb.links.get("supersedes", []) or second in fa.links.get("supersedes", []):
                continue
            found.append(Finding("near-duplicate", fb.path, 1, f"{second} is {score:.0%} similar to {first} "
                                 f"({fa.path}): merge them, or supersede one", second))
    return found
