"""`stele eval --recall-gap`: how often an agent edited code its record warned about, untold.

The session log holds, per session, the files a harness hook saw the agent edit (`edit` notes) and
the fact ids each hook or tool delivered (`delivered` notes; docs/sessions.md). For every edited file
the facts anchored there now (active and not `manual`: the ones a hook could have shown, risks and
constraints first) are compared with everything delivered in that session, at any point. An edit is
missed when at least one of them never reached the agent; the gap is the share of edits to anchored
code that were missed. A harness that shows anchored facts before an edit (Claude Code's PreToolUse)
closes the gap; one that can only report an edit after the fact (Cursor's afterFileEdit) cannot.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from ..project import Project


@dataclass
class Missed:
    session: str
    path: str
    facts: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"session": self.session, "path": self.path, "facts": self.facts}


@dataclass
class Gap:
    sessions: int = 0
    edits: int = 0
    anchored_edits: int = 0
    missed: list[Missed] = field(default_factory=list)
    since: str | None = None

    @property
    def gap(self) -> float:
        return len(self.missed) / self.anchored_edits if self.anchored_edits else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "edits": self.edits, "anchored_edits": self.anchored_edits,
                "missed": [m.as_dict() for m in self.missed], "gap": round(self.gap, 4), "since": self.since}


def since_time(project: Project, since: str | None) -> str | None:
    """An ISO timestamp for `--since`: a date (YYYY-MM-DD) or a git revision (its commit time)."""
    if not since:
        return None
    try:
        return dt.date.fromisoformat(since).isoformat()
    except ValueError:
        pass
    from .. import gitrepo

    sha = gitrepo.require_commit(project.root, since, "--since")
    when = gitrepo.run(project.root, "show", "-s", "--format=%cI", sha).decode().strip()
    from ..clock import iso

    return iso(dt.datetime.fromisoformat(when))


def recall_gap(project: Project, since: str | None = None) -> Gap:
    from .. import delivery
    from ..session import wal
    from ..session.sessions import delivered_ids, edited_paths, order_key
    from .anchored import Anchored, facts_anchored_to, order

    start = since_time(project, since)
    report = wal.ReadReport()
    by_session: dict[str, list[wal.Entry]] = {}
    for entry in wal.read_all(project, report):
        by_session.setdefault(entry.session, []).append(entry)
    wal.warn_skipped(report)
    gap = Gap(since=start)
    today = delivery.today()
    edits: list[tuple[str, str]] = []
    delivered: dict[str, set[str]] = {}
    for session, entries in sorted(by_session.items()):
        entries.sort(key=order_key)
        if start and not any(e.ts >= start for e in entries):
            continue
        gap.sessions += 1
        delivered[session] = {i for e in entries for i in delivered_ids(e)}
        touched = dict.fromkeys(p for e in entries if not start or e.ts >= start for p in edited_paths(e))
        edits += [(session, p) for p in touched]
    gap.edits = len(edits)
    if not edits:
        return gap
    found = facts_anchored_to(project, sorted({p for _, p in edits}))
    for session, path in edits:
        facts = order(Anchored(f) for f in {f.id: f for _, f in found.get(path, [])}.values()
                      if delivery.withheld(f, today) is None)  # what the edit hook may deliver
        if not facts:
            continue
        gap.anchored_edits += 1
        never = [a.fact.id for a in facts if a.fact.id not in delivered[session]]
        if never:
            gap.missed.append(Missed(session, path, never))
    return gap
