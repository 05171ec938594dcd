"""Ranking and the cap: small additive scores, an ordering key only.

    seed:   kind weight + seed_match x match strength (1 for the best seed, falling with its rank)
            x standing (a support seed: the share of the way to a relevance floor it went; else 1)
    walked: kind weight + strength x (relation weight of the edge followed + walk_inherit x seed_match)
            - hop_penalty x hops, where strength is that of the seed the path started from
    session entries: minus session_penalty, and listed after every committed fact
    drifted (anchored code changed since verified, `fresh.py`): minus drift_penalty; a stale session
            entry is listed after every session entry that is not

Downrank, never exclude: components weigh 0 and containers (epic, objective, milestone) -3, so a
child task that `blocks` its epic outranks it, yet the epic still shows when nothing beats it. The
window holds at most `max_entries` (20) items, callouts included, and keeps room for them: callouts
are placed first, then a few session entries are given their slots, then committed facts fill the rest.
"""
from __future__ import annotations

from collections.abc import Collection

from ..index.items import SESSION
from ..plain import dataclass, field
from .settings import Settings
from .walk import Via

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..index.catalog import Node
    from .seeds import Hit

ORIGIN_ID, ORIGIN_SUCCESSOR, ORIGIN_ANCHOR, ORIGIN_TEXT = "id", "successor", "anchor", "text"


@dataclass
class Seed:
    id: str
    strength: float          # 0..1: how well it matched
    origin: str              # id | successor | anchor | text
    hit: Hit | None = None   # text seeds: the search hit
    anchor: str = ""         # anchor seeds: the anchor that matched (`path` or `path::Symbol`)
    named: str = ""          # successor seeds: the superseded id the prompt named
    covers: float = 0.0      # how much of the prompt's text it holds (`seeds.Coverage`): orders equal scores


@dataclass
class Scored:
    id: str
    node: Node
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    via: Via | None = None   # None for seeds
    seed: Seed | None = None
    order: int = 0           # seeds in seed order, then walked nodes in discovery order (tie-break)

    @property
    def session(self) -> bool:
        return self.node.source == SESSION


def seed_score(node: Node, seed: Seed, s: Settings) -> tuple[float, dict[str, float]]:
    parts = {"kind": s.kind_weight(node.kind), "match": round(s.seed_match * seed.strength * standing(seed, s), 3)}
    return _total(node, parts, s)


def standing(seed: Seed, s: Settings) -> float:
    """1 for a seed that stands on its own (named, anchored, a hit that reached a relevance floor); for
    a support seed (a hit let in at `seed_support` of the way to a floor because another reached one),
    the share of the way it went. Its strength says how it ranked among this prompt's hits, which a
    hit ranked high by one shared word does well; how near it came to a floor says whether it matched
    at all, so a hit that nearly passed outranks one that only ranked high."""
    if seed.hit is None:
        return 1.0
    from .seeds import evidence

    return min(1.0, evidence(seed.hit, s))


def walked_score(node: Node, via: Via, s: Settings, strength: float = 1.0) -> tuple[float, dict[str, float]]:
    """`strength` is the match strength of the seed the path started from (0..1). The edge's weight
    and a share of that seed's match term (`walk_inherit`) count in proportion to it, so a neighbour
    of the best match keeps the full relation weight and a neighbour of a weak match little of it."""
    parts = {"kind": s.kind_weight(node.kind), "relation": round(s.relation_weight(via.rel) * strength, 3),
             "hops": -s.hop_penalty * via.hops}
    if s.walk_inherit:
        parts["seed"] = round(s.walk_inherit * s.seed_match * strength, 3)
    return _total(node, parts, s)


def _total(node: Node, parts: dict[str, float], s: Settings) -> tuple[float, dict[str, float]]:
    if node.source == SESSION:
        parts["session"] = -s.session_penalty
    return round(sum(parts.values()), 3), parts


def score_all(seeds: list[Seed], reached: dict[str, list[Via]], nodes: dict[str, Node], s: Settings
              ) -> dict[str, Scored]:
    out: dict[str, Scored] = {}
    strength = {x.id: x.strength for x in reversed(seeds)}
    for n, seed in enumerate(seeds):
        node = nodes.get(seed.id)
        if node is None or seed.id in out:
            continue
        total, parts = seed_score(node, seed, s)
        out[seed.id] = Scored(seed.id, node, total, parts, None, seed, n)
    for n, (node_id, vias) in enumerate(reached.items(), len(seeds)):
        node = nodes.get(node_id)
        if node is None:
            continue
        best = max(vias, key=lambda v: (walked_score(node, v, s, strength.get(v.seed, 1.0))[0], -v.hops))
        total, parts = walked_score(node, best, s, strength.get(best.seed, 1.0))
        if node_id in out:  # a seed reached from another seed stays a seed (via null), at its better score
            if total > out[node_id].score:
                out[node_id].score, out[node_id].parts = total, parts
            continue
        out[node_id] = Scored(node_id, node, total, parts, best, None, n)
    return out


def order(scored: list[Scored]) -> list[Scored]:
    """Named ids first (as named), then what replaced a named superseded fact, then committed facts,
    then session entries (stale ones last), each by score; at equal scores (every seed of full strength:
    the facts anchored to a path the prompt names, its best search hit) the seed holding more of the
    prompt's words comes first. Seeds at the top match strength count as of one kind, the best among
    them: the kind weight orders a fact found by a weaker match, not one of those (a pasted error's
    file anchors three decisions at full strength; the lesson about the error, its best search hit,
    came fourth on its kind). Components and containers keep their sink."""
    first = {ORIGIN_ID: 0, ORIGIN_SUCCESSOR: 1}

    full = [x for x in scored if x.seed is not None and x.parts.get("kind", 0.0) > 0]
    top = max((x.parts.get("match", 0.0) for x in full), default=0.0)
    tied = {id(x): x.parts["kind"] for x in full if top > 0 and x.parts.get("match", 0.0) >= top}
    lead = max(tied.values(), default=0.0)

    def merit(x: Scored) -> float:
        """Its score; for a seed at the top match strength, as if of the best kind among them."""
        return x.score - tied[id(x)] + lead if id(x) in tied else x.score

    def key(x: Scored) -> tuple:
        rank = first.get(x.seed.origin, 2) if x.seed is not None else 2
        stale = x.session and x.parts.get("drift", 0) < 0  # written before its code changed (fresh.py)
        covers = x.seed.covers if x.seed is not None else 0.0  # walked nodes have no seed
        return (rank, x.order if rank < 2 else 0, x.session, stale, -merit(x), -covers, x.order, x.id)
    return sorted(scored, key=key)


@dataclass
class Window:
    risks: list[Scored]
    entries: list[Scored]
    cut: list[Scored]                                        # past the cap
    trimmed: list[Scored] = field(default_factory=list)     # far below the best (`trim`)


def trim(ranked: list[Scored], s: Settings) -> tuple[list[Scored], list[Scored]]:
    """(kept, cut): entries far below the best are cut, so the window is as large as relevance
    supports rather than always full. An entry's merit is its score (a session entry's before its
    penalty: it is already listed last; any item's before its drift penalty: drift downranks, never
    excludes); one under `window_cut` of the best merit is left out. Named ids, and what replaced a
    named superseded fact, are never cut."""
    def merit(x: Scored) -> float:
        return x.score + (s.session_penalty if x.session else 0.0) - x.parts.get("drift", 0.0)

    pool = [x for x in ranked if not pinned(x)]
    if not pool:
        return ranked, []
    best = max(merit(x) for x in pool)
    cut = [x for x in pool if merit(x) < s.window_cut * best]
    gone = {id(x) for x in cut}
    return [x for x in ranked if id(x) not in gone], cut


def pinned(x: Scored) -> bool:
    return x.seed is not None and x.seed.origin in (ORIGIN_ID, ORIGIN_SUCCESSOR)


def cap(ranked: list[Scored], risks: list[Scored], s: Settings, shown: Collection[str] = ()) -> Window:
    """Apply the window: entries far below the best cut (`trim`), callouts first (at most
    max_callouts), a few session slots, the rest committed. `shown` (what the session already has)
    counts for the cut, so nothing new that is relevant means nothing new, and is then left out."""
    ranked, trimmed = trim(ranked, s)
    ranked = [x for x in ranked if x.id not in shown or pinned(x)]
    limit = s.max_entries
    risks = risks[:min(s.max_callouts, limit)]
    room = limit - len(risks)
    session = [x for x in ranked if x.session][:min(s.session_entries, room)]
    committed = [x for x in ranked if not x.session][:room - len(session)]
    if len(committed) + len(session) < room:  # unused committed room goes to further session entries
        session = [x for x in ranked if x.session][:room - len(committed)]
    keep = {x.id for x in committed} | {x.id for x in session}
    return Window(risks, [x for x in ranked if x.id in keep], [x for x in ranked if x.id not in keep], trimmed)
