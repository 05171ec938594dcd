"""One session as a reader sees it, built once for `stele session show` and the web API's
`GET /api/memory/sessions/{id}`: the summary of its log, every entry in log order, the facts each
entry was promoted to, and what the hooks delivered. Two builders of this had drifted (the API left
out promotions and deliveries), so both call `session_view` and render `as_dict()` as they need.
"""
from __future__ import annotations

from typing import Any

from ..errors import SteleError
from ..plain import dataclass
from ..project import Project
from . import sessions, wal
from .promote import promotions
from .sessions import Session
from .wal import Entry


class NoSuchSession(SteleError):
    """A well-formed session id with no log (the API answers 404)."""


@dataclass
class SessionView:
    session: Session
    entries: list[Entry]
    promoted: dict[str, list[str]]  # entry id -> ids of the facts whose `source` names it

    def delivered(self) -> list[dict[str, Any]]:
        return [{"entry": e.id, "ts": e.ts, "hook": e.extra.get("hook"), "ids": sessions.delivered_ids(e)}
                for e in self.entries if sessions.delivered_ids(e)]

    def as_dict(self) -> dict[str, Any]:
        return {"session": self.session.as_dict(), "entries": [e.as_dict() for e in self.entries],
                "promoted": {e.id: self.promoted[e.id] for e in self.entries if e.id in self.promoted},
                "delivered": self.delivered()}


def session_view(project: Project, session_id: str, report: wal.ReadReport | None = None) -> SessionView:
    """The view of `session_id` (checked: a bad name is a UsageError, an unknown one NoSuchSession)."""
    from ..record.load import load

    entries = sessions.entries_of(project, wal.check_session_name(session_id), report)
    if not entries:
        raise NoSuchSession(f"no session {session_id} in {project.rel(project.wal_dir)}/: "
                            "`stele session list` shows sessions")
    return SessionView(sessions.summarize(session_id, entries), entries, promotions(load(project)))
