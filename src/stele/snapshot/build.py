"""Taking a snapshot of a project: gather the inputs, assemble under the budgets, store if asked.

This is the library call behind `stele context`, `stele context preview` and every task claim: the
one place that touches the record, the ranking, the code index, the store and the session log, in
that order. Everything that decides what fits is in `assemble` and runs on the data gathered here.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .. import clock, gitrepo
from ..delivery import today
from ..errors import UsageError
from ..ids import ulid
from ..kinds import KINDS
from ..neutralize import shown
from ..project import Project
from ..record.load import Record, load
from ..record.model import Fact
from ..session import wal
from . import code, store
from .assemble import NOT_RECORDS, fit_code, pick_briefing, render_text, select_records, withheld_rules
from .model import RECORD_PARTS, Budgets, Snapshot

RANK_LIMIT = 60  # records and documents asked of search, in one call; the budgets keep far fewer
_HEADING = re.compile(r"^#{1,6} .*$\n?", re.M)
_SENTENCE = re.compile(r"(?<=[.;:!?])\s+|\n\s*\n|\n\s*[-*] ")
PIECE_WORDS = (8, 24)  # a query piece: at least this many words unless the text is shorter, at most that
# Each piece is one search of the record and one of the code (~30 ms together), so a task body pasted
# from a log (1 MB: 6,000 pieces, three minutes while the claim stands and the agent waits) is matched
# by its start: the description and the prompt give at most this many pieces each (~770 words).
MAX_PIECES = 32


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
    """What ranked records and code are matched against, as one text (stored with the snapshot): the
    task's title, description, acceptance criteria and notes (its body, without the template's
    `## Description`-style headings), and the prompt."""
    return "\n".join(query_parts(task, prompt))


def query_parts(task: Fact | None, prompt: str | None, warnings: list[str] | None = None) -> list[str]:
    """The query in prompt-sized pieces, each judged on its own by recall's relevance test (which was
    calibrated on prompts): the title, then the body (description, acceptance criteria, notes) and
    the prompt, a few sentences at a time. A record that bears on one acceptance criterion covers
    much of that sentence and little of the whole task; and a long text's mean embedding is near
    everything in its domain, so a whole body would pass anything in the record.
    The body and the prompt give MAX_PIECES pieces each at most; a longer one is said in `warnings`."""
    parts = [task.title] if task else []
    sources = ([(f"{task.id}'s description", task.body)] if task else []) + [("the prompt", prompt or "")]
    for name, text in sources:
        found = _distinct(p for section in _HEADING.split(text) for p in pieces(section))
        if len(found) > MAX_PIECES and warnings is not None:
            warnings.append(f"stele: {name} is long ({len(found)} pieces of up to {PIECE_WORDS[1]} words); "
                            f"only its first {MAX_PIECES} were matched against the record and the code: "
                            "put what the run needs first, or name records with --record")
        parts += found[:MAX_PIECES]
    return _distinct(parts)


def _distinct(parts: Iterable[str]) -> list[str]:
    return [p for p in dict.fromkeys(" ".join(p.split()) for p in parts) if p]


def pieces(text: str) -> list[str]:
    """`text` as runs of whole sentences of PIECE_WORDS words (a longer sentence split at that length;
    a short one joined to the next, so a lone "UI:" does not match everything about the UI)."""
    out: list[str] = []
    run: list[str] = []
    for sentence in _SENTENCE.split(text):
        words = sentence.split()
        for i in range(0, len(words), PIECE_WORDS[1]):
            run += words[i:i + PIECE_WORDS[1]]
            if len(run) >= PIECE_WORDS[0]:
                out.append(" ".join(run))
                run = []
    if run:
        if out and len(run) < PIECE_WORDS[0]:
            out[-1] += " " + " ".join(run)
        else:
            out.append(" ".join(run))
    return out


def linked_to(record: Record, task: Fact | None) -> list[str]:
    """Facts the task links to, then facts that link to it: the best matches there are."""
    if task is None:
        return []
    ids = [dst for _, dst in task.targets()] + [other for _, other in record.graph.neighbors(task.id)]
    return list(dict.fromkeys(ids))


def rank(project: Project, parts: list[str], kinds: list[str], warnings: list[str]) -> list[str]:
    """Active fact ids of `kinds` that pass recall's relevance test against some piece of the query (the
    floors, then no weaker than `window_cut` of that piece's best match), the strongest first: hybrid
    search, no walk (`select_records` keeps the records among them, `pick_briefing` orders documents
    by them). Nothing when the record has nothing on the task.
    An index that cannot be opened costs the ranking, not the snapshot: the rules still go out."""
    if not parts:
        return []
    from ..index.build import open_index
    from ..index.catalog import IndexUnavailable
    from ..retrieve.search import search_in
    from ..retrieve.settings import Settings

    best: dict[str, float] = {}
    try:
        settings = Settings.from_config(project.config)
        with open_index(project, warn=warnings.append) as index:
            for part in parts:
                for hit in search_in(index, part, settings, RANK_LIMIT, kinds, False, warnings, True).results:
                    if hit.strength >= settings.window_cut:  # as a recall's window: far below the best is cut
                        best[hit.id] = max(best.get(hit.id, 0.0), hit.strength)
    except IndexUnavailable as e:
        warnings.append(f"stele: no ranked records: {e}")
        return []
    order = {i: n for n, i in enumerate(best)}
    return sorted(best, key=lambda i: (-best[i], order[i]))


def code_for(project: Project, selected: list[Fact], parts: list[str], warnings: list[str]) -> list:
    """`code.candidates`; like the ranking, a code index that cannot be opened costs only the code."""
    from ..index.catalog import IndexUnavailable
    from ..retrieve.settings import Settings

    try:
        return code.candidates(project, selected, parts, Settings.from_config(project.config))
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
    warnings: list[str] = withheld_rules(record.facts.values(), on)
    parts = query_parts(task, request.prompt, warnings)
    query = "\n".join(parts)
    searched = [k for k in KINDS if k not in NOT_RECORDS or k == "document"]  # records, and briefing order
    matches = rank(project, parts, searched, warnings)
    ranked = linked_to(record, task) + matches
    items, skipped, records_limit = select_records(record.facts, request.records, ranked, budgets, on)
    records_bytes = sum(i.size for i in items)
    code_limit = max(0, min(budgets.code_bytes, budgets.total_bytes - records_bytes))
    # the code of the facts chosen for this task; `always` rules reach every run, their code does not
    chosen = [record.facts[i.key] for i in items if i.part in RECORD_PARTS and i.part != "always"]
    code_items, code_skipped = fit_code(code_for(project, chosen, parts, warnings), code_limit)
    brief, brief_skipped = pick_briefing(record.facts, matches, budgets, on)
    # what the run was asked is stored and printed beside what it was told, and shown the same way: a
    # prompt with a pasted credential must not reach .stele/snapshots/ (the session log redacts it too)
    patterns = project.config["redaction.patterns"]
    snap = Snapshot(
        run=ulid(), created=clock.now_iso(), budgets=budgets, records_limit=records_limit,
        code_limit=code_limit,
        inputs={"task": {"id": task.id, "title": shown(task.title), "status": task.status} if task else None,
                "records": [r.upper() for r in request.records],
                "prompt": shown(request.prompt, patterns) if request.prompt is not None else None,
                "query": shown(query, patterns), "commit": gitrepo.head_sha(project.root)},
        items=items + code_items + brief, skipped=skipped + code_skipped + brief_skipped,
        warnings=[shown(w) for w in warnings])
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
