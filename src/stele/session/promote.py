"""Promotion: a lesson learned in a session becomes a committed fact, reviewed in a pull request.

The fact's `source` names the session entry (and its task), so the reviewed truth keeps its
provenance and `stele session show` can tell which entries already became facts. Writing goes
through `edit.remember`, so it is validated, redacted and atomic like every other fact.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import SteleError
from ..project import Project
from ..record import edit
from ..record.load import Record, load
from .sessions import find_entry
from .wal import Entry


@dataclass
class Promoted:
    written: edit.Written
    entry: Entry


def promotions(record: Record) -> dict[str, list[str]]:
    """Every `source` a fact names -> the ids of the facts naming it, sorted: one pass over the record
    answers for a whole session's entries."""
    found: dict[str, list[str]] = {}
    for fact in sorted(record.facts.values(), key=lambda f: f.id):
        for source in dict.fromkeys(fact.source):
            found.setdefault(source, []).append(fact.id)
    return found


def promoted_to(record: Record, entry_id: str) -> list[str]:
    """Ids of the facts whose `source` names `entry_id`."""
    return promotions(record).get(entry_id, [])


def promote(project: Project, entry_id: str, kind: str, *, title: str | None = None,
            anchors: Sequence[str] = (), links: Sequence[str] = (), tags: Sequence[str] = (),
            again: bool = False) -> Promoted:
    """Write the entry's text as a new fact of `kind`; the paths the entry touched become anchors."""
    entry = find_entry(project, entry_id)
    record = load(project)
    earlier = promoted_to(record, entry.id)
    if earlier and not again:
        raise SteleError(f"{entry.id} was already promoted to {', '.join(earlier)}; pass --again to write "
                         "another fact from it")
    written = edit.remember(
        project, entry.text, kind=kind, title=title, anchors=list(dict.fromkeys([*entry.paths, *anchors])),
        links=links, tags=tags, source=[entry.id] + ([entry.task] if entry.task else []), record=record)
    return Promoted(written, entry)
