"""`stele brief QUESTION`: the deep, read-only look at the record that the research helper runs.

A prompt's recall is a starting set on a budget. A briefing spends more to be thorough and stays
short by summarising: the recall (seeds, one hop, the risk callout), then searches focused on the
kinds that settle a question (decisions and rules, risks and lessons, tasks), then a walk two hops out
from the best of those, each found fact scored the way the ranker scores a walked node (kind weight,
plus the relation followed, minus a penalty per hop). Every search applies recall's relevance floors,
so a question the record has nothing on gets no points at all, and the briefing says so plainly
(`nothing`) instead of summarising the nearest noise. The result is grouped by kind and every point
names its fact id, so the agent can cite it or `stele show` it. Nothing is written (beyond the
derived index, which any read refreshes).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..project import Project
from .walk import Via

FOCUSED_SEARCHES = (("decision", "architecture", "constraint", "instruction"), ("risk", "lesson"), ("task",))
PER_SEARCH = 5
WALK_FROM = 8  # best seeds the two-hop walk starts from
WALK_DEPTH = 2
RISK_BONUS = 4.0  # a risk on the causal path outranks everything the walk found


@dataclass
class Point:
    id: str
    kind: str
    title: str
    score: float
    status: str = ""
    text: str = ""
    via: Via | None = None  # None for a search hit

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "title": self.title, "status": self.status,
                "text": self.text, "score": round(self.score, 3),
                "via": self.via.as_dict() if self.via else None}


@dataclass
class Brief:
    question: str
    points: list[Point] = field(default_factory=list)
    risks: list[str] = field(default_factory=list)  # ids of points lifted as risks on the path
    searches: int = 0
    partial: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def nothing(self) -> bool:
        """The record has nothing on the question: no fact passed the relevance floors."""
        return not self.points

    def as_dict(self) -> dict[str, Any]:
        return {"question": self.question, "nothing": self.nothing, "points": [p.as_dict() for p in self.points],
                "risks": self.risks, "searches": self.searches, "partial": self.partial}


def brief(project: Project, question: str) -> Brief:
    from ..delivery import inactive, today
    from ..index.build import open_index
    from .gate import check
    from .recall import gather
    from .search import search_in
    from .settings import Settings
    from .walk import Neighbourhood, walk

    s = Settings.from_config(project.config)
    out = Brief(question)
    found: dict[str, Point] = {}

    def add(point: Point) -> None:
        if point.id not in found or found[point.id].score < point.score:
            found[point.id] = point

    t0 = time.monotonic()
    # one index for the recall, the searches and the walk: opening it is a freshness scan of the record
    with open_index(project, deadline=t0 + s.hook_budget_ms / 1000, warn=out.warnings.append) as index:
        r = gather(index, check(question, (), s.min_prompt_chars), frozenset(), s, t0, out.warnings)
        out.searches += 1
        for e in r.entries:
            if e.source == "committed":
                add(Point(e.id, e.kind, e.title, e.score, e.status, e.excerpt, e.via))
        for risk in r.risks:
            score = s.kind_weight("risk") + RISK_BONUS
            add(Point(risk.id, "risk", risk.title, score, text=risk.excerpt, via=risk.via))
            out.risks.append(risk.id)
        seeds = [e.id for e in r.entries if e.via is None and e.source == "committed"]
        for kinds in FOCUSED_SEARCHES:
            res = search_in(index, question, s, PER_SEARCH, kinds, False, out.warnings, relevant_only=True)
            out.searches += 1
            top = res.results[0].score if res.results else 1.0
            for hit in res.results:
                score = s.kind_weight(hit.kind) + s.seed_match * hit.score / top
                add(Point(hit.id, hit.kind, hit.title, score, hit.status))
                seeds.append(hit.id)
        seeds = list(dict.fromkeys(seeds))[:WALK_FROM]
        on = today()
        deadline = time.monotonic() + s.walk_budget_ms / 1000
        hood = Neighbourhood(index.catalog,
                             lambda n: n.source == "committed" and inactive(n, on) is None)
        reached, out.partial = walk(seeds, hood, WALK_DEPTH, deadline)
        for node_id, vias in reached.items():
            via = vias[0]
            node = hood.nodes[node_id]
            add(Point(node_id, node.kind, node.title, s.kind_weight(node.kind) + s.relation_weight(via.rel)
                      - s.hop_penalty * via.hops, node.status or "", via=via))
        hood.load_nodes(found)
        for point in found.values():
            known = hood.nodes.get(point.id)
            if known is not None:
                point.text = known.summary or known.excerpt or point.text
                point.status = known.status or point.status
    out.points = sorted(found.values(), key=lambda p: (p.id not in out.risks, -p.score, p.id))
    return out
