"""What the index holds about one fact or session entry: an `Item`, made from either source.

Facts and WAL entries are flattened into one shape so the text index, the vectors and the catalog
treat them alike; `source` tells them apart (committed facts outrank session entries at query time).
A session entry keeps who wrote it (agent, and host for a team entry pulled from the store), cleaned
once here by `session.author`, so every reader of the catalog shows the same names.
The content hash covers exactly the text that is embedded, so an edit that only touches, say, a date
never re-embeds anything.
"""
from __future__ import annotations

from .. import textcut
from ..anchors import codecheck
from ..ids import mentioned_ids
from ..kinds import TITLE_MAX
from ..plain import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:  # the parsers are only needed when something changed (they pull in PyYAML)
    from ..record.model import Fact
    from ..session.wal import Entry

COMMITTED = "committed"
SESSION = "session"
EXCERPT_CHARS = 320
# A session entry reaches its task through this relation (both directions are walked).
SESSION_TASK_REL = "relates-to"


@dataclass
class Item:
    id: str
    source: str
    kind: str
    title: str
    body: str
    path: str
    status: str = ""
    priority: str = "normal"
    delivery: str = ""
    tags: list[str] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)  # (relation, target id), declared on this item
    created: str | None = None  # ISO date (facts) or timestamp (session entries)
    expires: str | None = None
    review_after: str | None = None
    summary: str = ""  # the author's one-line summary, when they wrote one
    needs_review: str | None = None  # a fact's `needs_review` mark
    agent: str | None = None  # a session entry's agent (`session.author`)
    host: str | None = None  # where a team session entry was written; None for this clone's own
    # freshness (`anchors/drift.py`): when it was last confirmed (a fact's `verified`, a session entry's
    # `ts`), against which commit, and its anchors' fingerprints then
    verified: str | None = None
    verified_at: str | None = None
    prints: dict[str, str] = field(default_factory=dict)
    checks: str | None = None  # a fact's valid `check:` entries, as `anchors.codecheck.dump` writes them

    @property
    def text(self) -> str:
        """The searchable and embedded text besides the title: the body, and a summary if one was written."""
        return f"{self.body}\n{self.summary}" if self.summary and self.summary not in self.body else self.body

    @property
    def embed_text(self) -> str:
        return f"{self.title}\n{self.text}".strip()

    @property
    def content_hash(self) -> str:
        import hashlib  # only when indexing: not on the path of a read

        return hashlib.sha1(self.embed_text.encode("utf-8")).hexdigest()

    @property
    def excerpt(self) -> str:
        return textcut.one_line(self.body, EXCERPT_CHARS)


def _iso(value) -> str | None:
    return value.isoformat() if value else None


def from_fact(fact: Fact) -> Item:
    return Item(
        id=fact.id, source=COMMITTED, kind=fact.kind, title=fact.title, body=fact.body.strip(),
        path=fact.path, status=fact.status, priority=fact.priority, delivery=fact.delivery,
        tags=list(fact.tags), anchors=list(fact.anchors), edges=fact.edges(), created=_iso(fact.created),
        expires=_iso(fact.expires), review_after=_iso(fact.review_after), summary=fact.summary or "",
        needs_review=fact.needs_review, verified=_iso(fact.verified), verified_at=fact.verified_at,
        prints=dict(fact.fingerprints),
        checks=codecheck.dump(fact.checks),
    )


def from_entry(entry: Entry, path: str) -> Item:
    """A WAL entry: its type is its kind, its first line its title, its searchable text what
    `session.search_text` says; its task and the ids it names are edges, the paths it touched anchors."""
    from ..session.author import agent_of, host_of
    from ..session.sessions import search_text

    text = search_text(entry).strip()
    first = next((line.strip() for line in entry.text.splitlines() if line.strip()), entry.type)
    title = textcut.words(first, TITLE_MAX)
    edges: list[tuple[str, str]] = []
    if entry.task:
        edges.append((SESSION_TASK_REL, str(entry.task)))
    edges += [("mentions", m) for m in mentioned_ids(text) if m != entry.id and m != entry.task]
    anchors = entry.paths
    return Item(id=entry.id, source=SESSION, kind=entry.type, title=title, body=text, path=path,
                status="current", anchors=anchors, edges=edges, created=entry.ts or None,
                agent=agent_of(entry), host=host_of(entry), verified=entry.ts or None, prints=entry.prints)
