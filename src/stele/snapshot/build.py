"""Taking a snapshot of a project: gather the inputs, assemble under the budgets, store if asked.

This is the library call behind `stele context`, `stele context preview` and every task claim: the
one place that touches the record, the ranking, the code index, the store and the session log, in
that order. Everything that decides what fits is in `assemble` and runs on the data gathered here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import gitrepo
from ..errors import UsageError
from ..ids import ulid
from ..kinds import KINDS
from ..lifecycle import today
from ..project import Project
from ..record.load import Record, load
from ..record.model import Fact
from ..session import wal
from . import code, store
from .assemble import NOT_RECORDS, fit_code, pick_briefing, render_text, select_records, withheld_rules
from .model import RECORD_PARTS, Budgets, Snapshot

RANK_LIMIT = 60  # records and documents asked of search, in one call; the budgets keep far fewer
_HEADING = re.compile(r"^#{1,6} .*$\n?", re.M)


@dataclass
class Request:
    task: str | None = None
    records: list[str] = field(default_factory=list)  # ids named for this run
    prompt: str | None = None


def task_of(record: Record, task_id: str) -> Fact:
    fact = record.get(task_id)
    if "open" not in KINDS[fact.kind].statuses:
        raise UsageError(f"--task {fact.id} is a {fact.kind}, not a task: give a TASK- id "
                         "(`stele task list`)")
    return fact


def query_for(task: Fact | None, prompt: str | None) -> str:
    """What ranked records and code are matched against: the task's title, description, acceptance
    criteria and notes (its body, without the template's `## Description`-style headings), and the prompt."""
    parts = [task.title, _HEADING.sub("", task.body)] if task else []
    return "\n".join(p.strip() for p in (*parts, prompt or "") if p and p.strip())


def linked_to(record: Record, task: Fact | None) -> list[str]:
    """Facts the task links to, then facts that link to it: the best matches there are."""
    if task is None:
        return []
    ids = [dst for _, dst in task.targets()] + [other for _, other in record.graph.neighbors(task.id)]
    return list(dict.fromkeys(ids))


def rank(project: Project, query: str, kinds: list[str], warnings: list[str]) -> list[str]:
    """Best-matching active fact ids of `kinds` for `query`, best first: hybrid search, no walk
    (`select_records` keeps the records among them, `pick_briefing` orders documents by them).
    An index that cannot be opened costs the ranking, not the snapshot: the rules still go out."""
    if not query.strip():
        return []
    from ..index.catalog import IndexUnavailable
    from ..retrieve.search import search

    try:
        result = search(project, query, RANK_LIMIT, kinds)
    except IndexUnavailable as e:
        warnings.append(f"stele: no ranked records: {e}")
        return []
    warnings.extend(w for w in result.warnings if w not in warnings)
    return [hit.id for hit in result.results]


def code_for(project: Project, selected: list[Fact], query: str, warnings: list[str]) -> list:
    """`code.candidates`; like the ranking, a code index that cannot be opened costs only the code."""
    from ..index.catalog import IndexUnavailable

    try:
        return code.candidates(project, selected, query)
    except IndexUnavailable as e:
        warnings.append(f"stele: no code: {e}")
        return []


def take(project: Project, request: Request, *, save: bool = False, session: str | None = None,
         record: Record | None = None) -> Snapshot:
    """Assemble the snapshot for `request`; with `save`, store it and log it to the session. A caller
    that has loaded the record already passes it as `record`."""
    record = record or load(project).usable()
    on = today()
    budgets = Budgets.from_config(project.config)
    task = task_of(record, request.task) if request.task else None
    query = query_for(task, request.prompt)
    warnings: list[str] = withheld_rules(record.facts.values(), on)
    searched = [k for k in KINDS if k not in NOT_RECORDS or k == "document"]  # records, and briefing order
    matches = rank(project, query, searched, warnings)
    ranked = linked_to(record, task) + matches
    items, skipped, records_limit = select_records(record.facts, request.records, ranked, budgets, on)
    records_bytes = sum(i.size for i in items)
    code_limit = max(0, min(budgets.code_bytes, budgets.total_bytes - records_bytes))
    selected = [record.facts[i.key] for i in items if i.part in RECORD_PARTS]
    code_items, code_skipped = fit_code(code_for(project, selected, query, warnings), code_limit)
    brief, brief_skipped = pick_briefing(record.facts, matches, budgets, on)
    snap = Snapshot(
        run=ulid(), created=wal.now_iso(), budgets=budgets, records_limit=records_limit,
        code_limit=code_limit,
        inputs={"task": {"id": task.id, "title": task.title, "status": task.status} if task else None,
                "records": [r.upper() for r in request.records], "prompt": request.prompt, "query": query,
                "commit": gitrepo.head_sha(project.root)},
        items=items + code_items + brief, skipped=skipped + code_skipped + brief_skipped, warnings=warnings)
    snap.text = render_text(snap)
    if save:
        keep(project, snap, session)
    return snap


def keep(project: Project, snap: Snapshot, session: str | None = None) -> None:
    """Store `snap` for good and log it to the session: the log then says what the agent was told.
    (A claim assembles first and keeps after winning, so rules that do not fit stop the claim.)"""
    store.save(project, snap)
    name = wal.current_session(session)
    if name is None:
        return
    task = (snap.inputs.get("task") or {}).get("id")
    text = f"context snapshot {snap.run}" + (f" for {task}" if task else "")
    wal.append(project, wal.new_entry(name, "snapshot", text, task=task, refs={"run": snap.run}))
