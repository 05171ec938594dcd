"""`search()`: plain hybrid search over the committed record. No gate, no walk, no callout.

    from stele.retrieve import search
    res = search(project, "alias swap reindex", limit=10, kinds=("decision",), include_all=False)
    res.as_dict()   # {"mode": "hybrid", "results": [{"id", "kind", "title", "score"}, ...]}, best first

By default only facts that may be injected are returned; `include_all` adds superseded, retired,
expired and overdue ones (a superseded fact then ranks below the fact that superseded it). Session
entries are searched only with `sessions` (`stele search --sessions`): they then compete on merit and
come labelled (`source: "session"`), and an entry a newer one replaced (`override`) ranks right below it.
Unlike `recall`, a broken index is an error here (`IndexUnavailable`): a person asked for it. Full
text ranks by the query's words plus a few its best hits share (`feedback`), unless `relevant_only`.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..project import Project
from .settings import Settings

if TYPE_CHECKING:
    from ..index.asof import Moment
    from ..index.catalog import Node
    from ..index.handle import Index
    from .past import When


@dataclass
class SearchHit:
    id: str
    kind: str
    title: str
    score: float
    status: str = ""
    bm25_rank: int | None = None
    vector_rank: int | None = None
    strength: float = 0.0  # match strength against this query's best hit (1 for the best)
    source: str = "committed"  # or "session" (`sessions`)
    replaced_by: str | None = None  # a session entry a newer one about the same subject replaced

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "kind": self.kind, "title": self.title, "score": self.score}
        if self.source != "committed":
            data["source"] = self.source
        if self.replaced_by:
            data["replaced_by"] = self.replaced_by
        return data


@dataclass
class SearchResult:
    mode: str
    results: list[SearchHit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    when: When | None = None  # the past state searched (`--as-of`); None: today's record

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"mode": self.mode, "results": [h.as_dict() for h in self.results]}
        if self.when is not None:
            data["as_of"] = self.when.as_dict()
        return data


def search(project: Project, query: str, limit: int = 10, kinds: Iterable[str] = (), include_all: bool = False,
           relevant_only: bool = False, as_of: str | Moment | None = None, sessions: bool = False
           ) -> SearchResult:
    """`as_of` (a date, a commit or an `index.asof.Moment`) searches the record as it stood then; a
    SteleError naming `--as-of` when it names no past state."""
    from contextlib import nullcontext

    from ..delivery import pinned
    from ..index.build import open_index
    from .past import Plan, explicit, moment_of

    plan = explicit(project, moment_of(project, as_of)) if as_of is not None else Plan(project)
    settings = Settings.from_config(project.config)
    warnings: list[str] = []
    with pinned(plan.day) if plan.day else nullcontext(), \
            open_index(plan.project, warn=warnings.append) as index:
        result = search_in(index, query, settings, limit, kinds, include_all, warnings, relevant_only, sessions)
    result.when = plan.when
    return result


def search_in(index: Index, query: str, settings: Settings, limit: int, kinds: Iterable[str],
              include_all: bool, warnings: list[str], relevant_only: bool = False,
              sessions: bool = False) -> SearchResult:
    """`search` over an open index (`stele brief` searches one index several times). With
    `relevant_only`, only hits that pass recall's relevance floors (`seeds.relevant`): what a snapshot
    and a briefing take, which must bring nothing when the record has nothing on the question."""
    from ..delivery import today, withheld
    from .seeds import FTS, HYBRID, hybrid
    from .unrecorded import judged

    if not query.strip() or limit <= 0:
        return SearchResult(HYBRID if index.model_id else FTS, [], warnings)
    kinds = tuple(kinds)
    on = today()
    nodes: dict[str, Node] = {}

    def keep(ids: list[str]) -> set[str]:
        nodes.update(index.catalog.nodes(i for i in ids if i not in nodes))
        return {i for i in ids if i in nodes and (nodes[i].source == "committed" or sessions)
                and (include_all or withheld(nodes[i], on) is None)}

    from .distill import distill
    from .gate import identifiers, prompt_paths

    names: list[str] = []
    weighted = None
    if relevant_only:  # judged as recall judges a prompt: a pasted log by its problem lines, names as seeds
        query = distill(query)
        names = identifiers(query, prompt_paths(query))
    else:  # a person's search: the best hits lend the query a few words (`feedback`)
        from .feedback import expanded
        from .seeds import text_boosts

        weighted = expanded(index.text, query, text_boosts(settings), kinds,
                            None if sessions else "committed")
    found = hybrid(index, query, settings, limit, keep, kinds, names=names, weighted=weighted)
    if found.vector_error:
        warnings.append(f"stele: full-text only: {found.vector_error}")
    chosen = found.hits
    if relevant_only:  # recall's seed test: the floors, and no weaker than min_seed_strength of the best
        chosen = [h for h in judged(index, query, found.hits, settings) if h.strength >= settings.min_seed_strength]
    hits = [SearchHit(h.id, nodes[h.id].kind, nodes[h.id].title, round(h.fused, 5),
                      nodes[h.id].status or "", h.bm25_rank, h.vector_rank, h.strength, nodes[h.id].source)
            for h in chosen]
    if sessions:
        hits = replaced_last(index, hits, nodes)
    if include_all:
        hits = superseded_last(hits, index.catalog.edges(h.id for h in hits if h.status == "superseded"))
    return SearchResult(found.mode, hits, warnings)


def replaced_last(index: Index, hits: list[SearchHit], nodes: dict[str, Node]) -> list[SearchHit]:
    """Session hits a newer hit about the same subject replaced (`override.replacements`): labelled,
    and moved right below the one that replaced them."""
    from .override import replacements
    from .rank import Scored

    session = [h.id for h in hits if h.source == "session"]
    if len(session) < 2:
        return hits
    found = replacements([Scored(h.id, nodes[h.id], h.score) for h in hits if h.source == "session"],
                         index.catalog.long_bodies(session, 0), index.catalog.anchors_of(session))
    by = {o.id: o.by for o in found}
    for h in hits:
        h.replaced_by = by.get(h.id)
    return superseded_last(hits, [(new, "supersedes", old) for old, new in by.items()])


def superseded_last(hits: list[SearchHit], edges: list[tuple[str, str, str]]) -> list[SearchHit]:
    """Move each superseded hit just below the lowest hit that supersedes it, if it ranks above it."""
    by: dict[str, set[str]] = {}
    for src, rel, dst in edges:
        if rel == "supersedes":
            by.setdefault(dst, set()).add(src)
    out = list(hits)
    for hit in hits:
        newer = by.get(hit.id)
        if not newer:
            continue
        pos = out.index(hit)
        last = max((n for n, h in enumerate(out) if h.id in newer), default=-1)
        if last > pos:
            out.pop(pos)
            out.insert(last, hit)  # the superseder moved up one, so this lands right below it
    return out
