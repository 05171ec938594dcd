"""`recall()`: what the agent is told before it answers. The library API the CLI and the hooks call.

    from stele.retrieve import recall
    r = recall(project, "why do retries back off?", files=["src/pay/retry.py"], exclude=already_shown)
    r.as_dict()          # the JSON contract of DESIGN.md section 4 (`stele recall --format json`)
    render.recall_text(r, max_chars=9000)   # what an agent sees

The pipeline, in order: gate (short prompts inject nothing unless they name an id or a file), seeds
(ids named, facts anchored to the files, BM25 + embedding hits fused), a one-hop walk both ways, the
causal risk callout, ranking, the 20-entry cap. It never raises: a missing or broken embedding model
degrades to full text (`mode: "fts"`), an index that cannot be built to recent session entries
(`mode: "prior_context"`), and the time budgets (walk 6 s, whole call 8 s) return what is ready with
`partial: true`. Problems worth knowing go to `Recall.warnings` (one line each) for the caller to print.
Facts that are superseded, retired, expired or overdue for review are never returned (unless named
by id), and `exclude` (ids a session has already been shown) are walked through but not returned; a
risk it was shown only as an entry may still be called out once (`warned`: `retrieve.delivered`).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable
from contextlib import nullcontext

from .. import delivery
from ..plain import dataclass, field
from ..project import Project
from . import fresh as freshness
from . import gate as gate_mod
from .delivered import Delivered
from .override import Override
from .rank import (
    ORIGIN_ANCHOR,
    ORIGIN_ID,
    ORIGIN_SUCCESSOR,
    ORIGIN_TEXT,
    Scored,
    Seed,
    Window,
    cap,
    order,
    pinned,
    score_all,
)
from .settings import Settings
from .walk import Neighbourhood, Via

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt
    from typing import Any

    from ..anchors.drift import Drift
    from ..index.asof import Moment
    from ..index.catalog import Catalog, Node
    from ..index.handle import Index
    from .past import When
    from .seeds import Coverage, Hit

SKIPPED, IDENTIFIER, PRIOR_CONTEXT, NO_MATCH = "skipped", "identifier", "prior_context", "no_match"
PRIOR_LIMIT = 5
CANDIDATES_SHOWN = 5  # best search hits `stele why` shows, passing the floors or not
SUCCESSION_DEPTH = 5  # superseded facts followed to the one in force
# An anchor's strength as a seed: the file itself (or a symbol in it) beats its folder, which beats a glob.
ANCHOR_STRENGTH = {"file": 1.0, "folder": 0.8, "glob": 0.6}


@dataclass
class Entry:
    id: str
    kind: str
    title: str
    score: float
    source: str
    via: Via | None = None
    status: str = ""
    excerpt: str = ""
    body: str | None = None  # the whole text, for ids named in the prompt
    needs_review: str | None = None  # why a person must look at it again: shown, never a reason to hide it
    agent: str | None = None  # who wrote a session entry
    host: str | None = None  # where a team session entry was written (None: this clone's own)
    drift: Drift | None = None  # its anchored code changed since it was verified (written): `fresh.py`
    fresh: str | None = None  # the freshness label the agent reads
    overridden: Override | None = None  # a newer entry replaced it, or a fact contradicts it: labelled
    replaces: list[tuple[str, str, str]] = field(default_factory=list)  # (id, title, excerpt) of older entries folded in

    def as_dict(self) -> dict[str, Any]:
        data = {"id": self.id, "kind": self.kind, "title": self.title, "score": self.score,
                "source": self.source, "via": self.via.as_dict() if self.via else None,
                "drift": self.drift.as_dict() if self.drift else None}
        if self.fresh:
            data["freshness"] = self.fresh
        if self.needs_review:
            data["needs_review"] = self.needs_review
        if self.overridden:
            data[self.overridden.rule + "_by"] = self.overridden.by
        if self.replaces:
            data["replaces"] = [{"id": i, "title": t} for i, t, _ in self.replaces]
        if self.source == "session":  # who wrote it; `host` is set for a teammate's entry only
            data["agent"], data["host"] = self.agent, self.host
        return data


@dataclass
class Risk:
    id: str
    title: str
    via: Via
    excerpt: str = ""
    needs_review: str | None = None
    drift: Drift | None = None
    fresh: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data = {"id": self.id, "title": self.title, "via": self.via.as_dict(),
                "drift": self.drift.as_dict() if self.drift else None}
        if self.fresh:
            data["freshness"] = self.fresh
        if self.needs_review:
            data["needs_review"] = self.needs_review
        return data


@dataclass
class Trace:
    """Everything `stele why` explains: seeds, the walk, every score's parts, lifted risks, the cut."""
    gate: gate_mod.Gate
    floors: dict[str, float] = field(default_factory=dict)  # the relevance floors this recall applied
    settings: Settings = field(default_factory=Settings.defaults)  # the knobs this recall ran with
    rejected: dict[str, str] = field(default_factory=dict)  # passing hits that did not become seeds: why
    candidates: list[Hit] = field(default_factory=list)  # the best search hits, seeds or not
    seeds: list[Seed] = field(default_factory=list)
    filtered: dict[str, str] = field(default_factory=dict)  # id -> why it may not be injected
    reached: dict[str, list[Via]] = field(default_factory=dict)
    scored: list[Scored] = field(default_factory=list)
    window: Window | None = None
    excluded: list[str] = field(default_factory=list)
    overrides: dict[str, Override] = field(default_factory=dict)  # id -> what replaced or contradicted it
    folded: dict[str, str] = field(default_factory=dict)  # replaced entry -> the shown entry naming it
    unrecorded: list[str] = field(default_factory=list)  # prompt words naming parts of the repo the record lacks
    unconfirmed: dict[str, str] = field(default_factory=dict)  # seeds that may not start a callout: why
    withheld: dict[str, str] = field(default_factory=dict)  # risks reached causally but not called out: why


@dataclass
class Recall:
    mode: str
    entries: list[Entry] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)
    elapsed_ms: int = 0
    partial: bool = False
    warnings: list[str] = field(default_factory=list)
    trace: Trace | None = field(default=None, repr=False)
    when: When | None = None  # the past it answers for (`--as-of`, or a prompt that asked); None: now

    def as_dict(self) -> dict[str, Any]:
        data = {"mode": self.mode, "entries": [e.as_dict() for e in self.entries],
                "risks": [r.as_dict() for r in self.risks], "elapsed_ms": self.elapsed_ms,
                "partial": self.partial}
        if self.when is not None:
            data["as_of"] = self.when.as_dict()
        return data


def recall(project: Project, prompt: str, files: Iterable[str] = (), exclude: Iterable[str] = frozenset(),
           gate: bool = True, only: Callable[[Node], bool] | None = None, as_of: str | Moment | None = None,
           warned: Iterable[str] | None = None) -> Recall:
    """Retrieve the starting set for `prompt` (and the files being edited). Never raises, but for an
    `as_of` that names no past state (a SteleError naming `--as-of`). `gate=False` is for an explicit
    query (the HTTP API's `q=redis`): the short-prompt gate is for prompts a hook sees, not for someone
    who asked. `only` (the API's issue/pr/path/fts filters) decides which search hits may become seeds,
    before they are ranked and cut, so a filter never empties a full window. `as_of` (a date, a commit,
    or an `index.asof.Moment`) answers from the record as it stood then; without it, a prompt that asks
    about the past is answered as `retrieve.past` reads it. `exclude` and `warned`: what a session was
    delivered in any form, and as a risk callout (`retrieve.delivered`; `warned` None: every excluded id
    counts as both, for a caller that does not tell the forms apart)."""
    t0 = time.monotonic()
    warnings: list[str] = []
    from . import past

    if as_of is not None:
        plan = past.explicit(project, past.moment_of(project, as_of))
    else:
        try:
            plan = past.from_prompt(project, prompt, delivery.today(), warnings)
        except Exception as e:  # never fail the agent over a date
            warnings.append(f"stele: {type(e).__name__}: {e}")
            plan = past.Plan(project)
    with delivery.pinned(plan.day) if plan.day else nullcontext():
        result = _answer(plan.project, prompt, files, _delivered(exclude, warned), gate, only, plan.history, t0,
                         warnings)
    result.when = plan.when
    return result


def _delivered(exclude: Iterable[str], warned: Iterable[str] | None) -> Delivered:
    shown = frozenset(exclude)
    return Delivered(shown, shown if warned is None else frozenset(warned))


def _answer(project: Project, prompt: str, files: Iterable[str], exclude: Delivered, gate: bool,
            only: Callable[[Node], bool] | None, history: bool, t0: float, warnings: list[str]) -> Recall:
    try:
        settings = Settings.from_config(project.config)
    except Exception as e:  # a broken config must not cost the agent its memory
        warnings.append(f"stele: {e}; using the default retrieval settings")
        settings = Settings.defaults()
    if not gate:
        from ..plain import replace

        settings = replace(settings, min_prompt_chars=0)
    try:
        result = _recall(project, prompt, list(files), exclude, settings, t0, warnings, only, history)
    except Exception as e:
        warnings.append(f"stele: recall failed ({type(e).__name__}: {e}); showing recent session context")
        result = prior_context(project, warnings)
    result.warnings = warnings
    result.elapsed_ms = int((time.monotonic() - t0) * 1000)
    return result


def _recall(project: Project, prompt: str, files: list[str], exclude: Delivered, s: Settings, t0: float,
            warnings: list[str], only: Callable[[Node], bool] | None = None, history: bool = False) -> Recall:
    from ..index.build import open_index
    from ..index.catalog import IndexUnavailable

    g = gate_mod.check(prompt, files, s.min_prompt_chars)
    if g.skipped:
        return Recall(SKIPPED, trace=Trace(gate=g))
    deadline = t0 + s.hook_budget_ms / 1000
    try:
        index = open_index(project, deadline=deadline, warn=warnings.append)
    except IndexUnavailable as e:
        warnings.append(f"stele: {e}; showing recent session context")
        return prior_context(project, warnings)
    with index:
        return gather(index, g, exclude, s, t0, warnings, only, history)


def recall_in(index: Index, prompt: str, files: Iterable[str] = (), settings: Settings | None = None,
              exclude: Iterable[str] = frozenset(), warned: Iterable[str] | None = None) -> Recall:
    """`recall()` over an index the caller holds open: `stele eval` opens it once for every case."""
    t0 = time.monotonic()
    s = settings or Settings.from_config(index.project.config)
    warnings: list[str] = []
    g = gate_mod.check(prompt, list(files), s.min_prompt_chars)
    result = (Recall(SKIPPED, trace=Trace(gate=g)) if g.skipped
              else gather(index, g, _delivered(exclude, warned), s, t0, warnings))
    result.warnings = warnings
    result.elapsed_ms = int((time.monotonic() - t0) * 1000)
    return result


def gather(index: Index, g: gate_mod.Gate, delivered: Delivered | frozenset[str], s: Settings, t0: float,
           warnings: list[str], only: Callable[[Node], bool] | None = None, history: bool = False) -> Recall:
    """The pipeline over an open index (separate from `recall` so `why` and tests can call it).
    `history` lets superseded facts in (a prompt that asks what was used before: `retrieve.past`).
    `delivered`: what the session has (a set of ids: delivered in both forms)."""
    from .seeds import FTS, HYBRID, hybrid
    from .unrecorded import judged
    from .walk import walk

    if not isinstance(delivered, Delivered):
        delivered = _delivered(delivered, None)
    exclude = delivered.shown
    today = delivery.today()
    trace = Trace(gate=g, floors={"text": s.text_floor, "vector": s.vector_floor, "vector_z": s.vector_z,
                                  "support": s.seed_support, "window_cut": s.window_cut}, settings=s)
    # the walk may reach a done task (history of a fact that matched); a seed never is one
    hood = Neighbourhood(index.catalog, lambda node: delivery.withheld(node, today, reached_by_edge=True,
                                                                       history=history) is None)
    seeds: list[Seed] = []
    hood.load_nodes(g.ids)
    for i in g.ids:
        if hood.nodes.get(i) is not None:  # named: returned even when it has ended or is manual
            seeds.append(Seed(i, 1.0, ORIGIN_ID))
        else:  # say so: an empty answer would read as "nothing is known about it"
            warnings.append(f"stele: {i} is named, but no fact or session entry has that id (a typo, or a fact "
                            "on another branch); `stele list` shows the ids")
    seeds += successor_seeds(index.catalog, seeds, hood)
    seeds += anchor_seeds(index.catalog, g, hood, s, {x.id for x in seeds}, today)
    mode = HYBRID if index.model_id else FTS
    if g.identifier_only:
        mode = IDENTIFIER
    elif g.text:
        taken = {x.id for x in seeds}
        stand_ins: set[str] = set()  # superseded hits: judged as themselves, their successor is the seed

        def keep(ids: list[str]) -> set[str]:
            hood.load_nodes(ids)
            ok = set()
            for i in dict.fromkeys(ids):
                node = hood.nodes.get(i)
                why = delivery.withheld(node, today, history=history) if node else "not in the index"
                if why and node is not None and delivery.is_warning(node) and i not in taken \
                        and (only is None or only(node)):
                    ok.add(i)  # a failed approach: it still warns (labelled, below what replaced it)
                elif why == "superseded" and node is not None and i not in taken:
                    stand_ins.add(i)  # asking about the old word brings the new one (`stand_in`)
                    ok.add(i)
                elif why:
                    trace.filtered[i] = why
                elif only is not None and not only(hood.nodes[i]):
                    trace.filtered[i] = "not matching the query's filters"
                elif i not in taken:
                    ok.add(i)
            return ok

        found = hybrid(index, g.text, s, 2 * s.max_seeds, keep, names=g.identifiers)
        mode = found.mode
        if found.vector_error:
            warnings.append(f"stele: full-text only: {found.vector_error}")
        trace.candidates = found.hits[:CANDIDATES_SHOWN]
        chosen = judged(index, g.text, found.hits, s, trace.unrecorded)
        successors = stand_in(index.catalog, chosen, stand_ins, hood, only, found.pool | {h.id for h in found.hits},
                              trace.filtered, s)
        chosen = [h for h in chosen if h.id not in stand_ins or h.id in successors]  # no seat for the rest
        seeds += standing_in(text_seeds(chosen, hood.nodes, s.max_seeds, s.min_seed_strength, trace.rejected),
                             successors, taken, trace.filtered)
        seeds += note_seeds(index, seeds, hood, s, lambda node: delivery.withheld(node, today) is None
                            and (only is None or only(node)))  # the query's filters hold for them too
        _cover(found.covered, seeds)
        if not seeds:
            mode = NO_MATCH
    trace.seeds = seeds
    seed_ids = [x.id for x in seeds]
    partial = time.monotonic() > t0 + s.hook_budget_ms / 1000
    reached: dict[str, list[Via]] = {}
    lifted: dict[str, Via] = {}
    if not partial:
        # the walk starts from seeds that stand on their own (named, anchored, or a hit that reached a
        # floor): a support seed is shown for what it matched, its neighbours would be two steps from it
        own = {x.id for x in seeds if confident(x, s)}
        reached, partial = walk([i for i in seed_ids if i in own], hood, s.walk_depth,
                                t0 + s.walk_budget_ms / 1000, still=[i for i in seed_ids if i not in own])
    if not partial:
        # a warning needs a confident start: only seeds that matched well, and reached a floor on their
        # own (not merely as support of another), open a causal path
        starts = [x for x in seeds if x.strength >= s.callout_strength and confident(x, s)]
        if g.text:
            starts = confirmed(index, g.text, starts, hood, s, trace.unconfirmed)
        lifted = corroborated(lifts(starts, hood, s), starts, seeds, hood, s, trace.withheld)
    trace.reached = reached
    scored = score_all(seeds, reached, hood.nodes, s)
    fresh = freshness.check(index.project, index.catalog, [*scored, *lifted], today, warnings.append,
                            deadline=t0 + s.hook_budget_ms / 1000)
    freshness.downrank(scored, fresh, s)
    trace.overrides = overridden(index.catalog, scored)
    risks = sorted((scored.get(i) or _risk_only(i, via, hood.nodes[i], s) for i, via in lifted.items()),
                   key=lambda x: (lifted[x.id].hops, -x.score, x.id))
    # a risk the session has only seen listed was never received as a warning: called out once now
    # (its entry is not repeated: lifted risks leave the ranking); a callout delivered is not repeated
    risks = [x for x in risks if x.id not in delivered.warned]
    for x in risks:
        x.via = lifted[x.id]
    ranked = [x for x in order(list(scored.values())) if x.id not in lifted]
    trace.excluded = [x.id for x in ranked if x.id in exclude and not _named(x)]
    trace.scored = [x for x in ranked if x.id not in exclude or _named(x)]
    # relevance is judged on the whole ranking, shown facts included: after a repeated question the
    # best of what is left is no measure of what is relevant (it used to let the dregs in)
    window = cap(ranked, risks, s, shown=exclude)
    trace.window = window
    none = freshness.Freshness(None, None)
    entries = [Entry(x.id, x.node.kind, x.node.title, x.score, x.node.source, x.via, x.node.status or "",
                     x.node.excerpt or "", index.catalog.body(x.id) if _whole(x) else None,
                     getattr(x.node, "needs_review", None), getattr(x.node, "agent", None),
                     getattr(x.node, "host", None), fresh.get(x.id, none).drift, fresh.get(x.id, none).label, trace.overrides.get(x.id))
               for x in window.entries]
    if not history:  # asked about the past, a replaced entry is an answer of its own
        entries = fold(entries, trace, {x.id for x in window.entries if pinned(x)}, index.catalog)
    risks_out = [Risk(x.id, x.node.title, lifted[x.id], x.node.excerpt or "",
                      getattr(x.node, "needs_review", None), fresh.get(x.id, none).drift,
                      fresh.get(x.id, none).label) for x in window.risks]
    return Recall(mode, entries, risks_out, partial=partial, trace=trace)


def overridden(catalog: Catalog, scored: dict[str, Scored]) -> dict[str, Override]:
    """Demote what the record says was overridden (`override`): a superseded failed approach kept as a
    warning, a session entry a newer one replaced, the losing side of a `contradicts` edge."""
    from . import override

    session = [i for i, x in scored.items() if x.session]
    found = override.replacements([scored[i] for i in session], catalog.long_bodies(session, 0),
                                  catalog.anchors_of(session)) if len(session) > 1 else []
    edges = [e for e in catalog.edges(scored) if e[1] in ("contradicts", "supersedes")]
    return override.apply(scored, override.superseded(scored, edges) + found + override.contradictions(scored, edges))


def fold(entries: list[Entry], trace: Trace, named: set[str], catalog: Catalog) -> list[Entry]:
    """A replaced session entry whose replacement is shown and changed its value becomes a line of it
    (`override.folded`); an entry named by id stays an entry."""
    from . import override

    ids = [e.id for e in entries if e.source == "session"]
    if not any(trace.overrides.get(i) and trace.overrides[i].rule == override.REPLACED for i in ids):
        return entries
    into = {old: new for old, new in override.folded(trace.overrides, ids, catalog.long_bodies(ids, 0)).items()
            if old not in named}
    if not into:
        return entries
    trace.folded = into
    by_id = {e.id: e for e in entries}
    for e in entries:
        if e.id in into:
            by_id[into[e.id]].replaces.append((e.id, e.title, e.excerpt))
    return [e for e in entries if e.id not in into]


def in_force(catalog: Catalog, item_id: str, hood: Neighbourhood) -> str | None:
    """What replaced a superseded fact, through a chain of replacements, to the first one still in
    force (None when the chain ends without one)."""
    node = hood.nodes.get(item_id)
    current, seen = item_id, {item_id}
    while node is not None and node.status == "superseded" and len(seen) <= SUCCESSION_DEPTH:
        newer = [src for src, rel, dst in catalog.edges([current]) if rel == "supersedes" and dst == current
                 and src not in seen]
        if not newer:
            return None
        current = sorted(newer)[0]
        seen.add(current)
        hood.load_nodes([current])
        node = hood.nodes.get(current)
        if node is not None and hood.ok(current):
            return current
    return None


def successor_seeds(catalog: Catalog, named: list[Seed], hood: Neighbourhood) -> list[Seed]:
    """For each named fact that has been superseded, the fact that replaced it (through a chain of
    replacements, to the first one still in force): asking about the old rule must bring the new one."""
    out: list[Seed] = []
    taken = {x.id for x in named}
    for seed in named:
        current = in_force(catalog, seed.id, hood)
        if current is not None and current not in taken:
            out.append(Seed(current, 1.0, ORIGIN_SUCCESSOR, named=seed.id))
            taken.add(current)
    return out


def stand_in(catalog: Catalog, hits: list[Hit], superseded: set[str], hood: Neighbourhood,
             only: Callable[[Node], bool] | None, found: Collection[str], filtered: dict[str, str],
             s: Settings) -> dict[str, str]:
    """For each superseded fact among `hits` that may stand in, the fact in force that superseded it
    (superseded id -> successor); the others are `filtered` and take no seed's seat. A prompt about the
    old word ("which state supersedes the March update?", "the old runtime choice") gets the new one,
    as naming the old id does (`successor_seeds`). Only a superseded fact that passes a relevance floor
    on its own (`seeds.passed`) stands in: as mere support of another hit it says too little about the
    prompt. The successor must be among what the search drew itself (`found`: either ranking's pool,
    not only the fused top hits; it shares words or meaning with the prompt, however weakly): a
    replacement that took the old fact's place in another part of the record says nothing about this
    prompt, while one worded in its own terms (the config file that replaced a flag) often stands far
    down. The superseded fact itself stays withheld."""
    from .seeds import passed

    out: dict[str, str] = {}
    for h in hits:
        if h.id not in superseded:
            continue
        current = in_force(catalog, h.id, hood) if passed(h, s) else None
        node = hood.nodes.get(current) if current else None
        if current is None or node is None or current not in found or (only is not None and not only(node)):
            filtered[h.id] = "superseded"
        else:
            out[h.id] = current
    return out


NEWER_LOOKED = 10  # session entries found by a session seed's own text, among which what replaced it is looked for


def note_seeds(index: Index, seeds: list[Seed], hood: Neighbourhood, s: Settings,
                usable: Callable[[Node], bool]) -> list[Seed]:
    """Session entries about what a matched session note says, which the prompt's words did not bring.
    For each session entry among the text seeds that reached a floor on its own (at most
    `session_entries` of them):

    - the newest entry of the log that revised it (the same subject, `override.same_subject`, and a
      changed value, a refutation or the same heading reworded, `override.revised`; followed through a
      chain), at the strength of the old note's match: asking about the old note ("which state
      supersedes the March update?") brings the note that replaced it, as a superseded fact brings its
      successor (`stand_in`). The two are then paired by `overridden` (the older folded into the
      newer). A later note that only repeats the old value ("a stale diagnostic still prints cache
      limit 64 MB") or adds to it replaced nothing and is not brought;
    - earlier entries whose phrase it repeats (`override.echoes`: "the resumed work completed using
      flush checkpoints before acknowledging messages" speaks of the decision "to flush checkpoints
      before acknowledging messages"), as support (`seed_support` of its strength).

    Both are looked for among the `NEWER_LOOKED` session entries the note's own text finds (BM25):
    one small search per such seed, none for a prompt that found no session entry."""
    from ..index.items import SESSION
    from . import override
    from .seeds import text_boosts

    olds = [x for x in seeds if x.origin == ORIGIN_TEXT and confident(x, s)
            and getattr(hood.nodes.get(x.id), "source", "") == SESSION and hood.nodes[x.id].created][:s.session_entries]
    if not olds:
        return []
    boosts = text_boosts(s)
    texts = index.catalog.long_bodies([x.id for x in olds], 0)
    have = {x.id for x in seeds}
    out: list[Seed] = []
    for x in olds:
        node = hood.nodes[x.id]
        found = [i for i, _ in index.text.search(texts.get(x.id, node.title), NEWER_LOOKED, boosts, source=SESSION)
                 if i != x.id]
        hood.load_nodes(found)
        texts.update(index.catalog.long_bodies([i for i in found if i not in texts], 0))
        anchors = index.catalog.anchors_of([x.id, *found])
        found = [i for i in found if hood.nodes.get(i) is not None and usable(hood.nodes[i])]

        def when(i: str) -> tuple[str, str]:
            return (hood.nodes[i].created or ""), i

        for i in found:  # what the matched note repeats a phrase of: the earlier note it speaks of
            if i not in have and when(i) < when(x.id) and override.echoes(texts.get(i, ""), texts.get(x.id, "")):
                out.append(Seed(i, x.strength * s.seed_support, ORIGIN_TEXT, hit=x.hit))
                have.add(i)
        current, seen = x.id, {x.id}
        for _ in range(SUCCESSION_DEPTH):  # the chain of revisions, among what the note's text found
            newer = [i for i in found if i not in seen and when(i) > when(current)
                     and override.same_subject(texts.get(current, ""), texts.get(i, ""),
                                               anchors.get(current, []), anchors.get(i, []))
                     and override.revised(texts.get(current, ""), texts.get(i, ""))]
            if not newer:
                break
            current = max(newer, key=when)
            seen.add(current)
        if current not in have:
            out.append(Seed(current, x.strength, ORIGIN_TEXT, hit=x.hit, named=x.id))
            have.add(current)
    return out


def standing_in(found: list[Seed], successors: dict[str, str], taken: set[str], filtered: dict[str, str]
                ) -> list[Seed]:
    """Text seeds with each superseded fact replaced by its successor (`stand_in`), at the strength of
    its match; a successor already among the seeds is not repeated."""
    have = taken | {x.id for x in found if x.id not in successors}
    out: list[Seed] = []
    for x in found:
        current = successors.get(x.id)
        if current is None:
            out.append(x)
        elif current in have:
            filtered[x.id] = "superseded"
        else:
            filtered[x.id] = f"superseded: it matched, and {current}, which replaced it, stands in for it"
            out.append(Seed(current, x.strength, ORIGIN_TEXT, hit=x.hit, named=x.id))
            have.add(current)
    return out


def text_seeds(hits: list[Hit], nodes: dict[str, Node], limit: int, floor: float = 0.0,
               rejected: dict[str, str] | None = None) -> list[Seed]:
    """The best `limit` committed hits, plus the session hits ranked among the best `limit` overall:
    session entries compete on merit but never take a committed fact's seat. A hit matching under
    `floor` of the best one is noise (a pasted error shares a stray word with a rule), not a seed.
    `rejected` gets the one reason for each passing hit that is not a seed."""
    weak = {h.id for h in hits if h.strength < floor and not h.named}
    hits = [h for h in hits if h.id not in weak]
    committed = [h for h in hits if nodes[h.id].source == "committed"][:limit]
    session = [h for h in hits[:limit] if nodes[h.id].source != "committed"]
    chosen = {h.id for h in committed + session}
    if rejected is not None:
        for i in weak:
            rejected[i] = f"matched under min_seed_strength ({floor:g}) of the best hit"
        for h in hits:
            if h.id not in chosen:
                rejected[h.id] = f"past max_seeds ({limit} seeds were stronger)"
    return [Seed(h.id, h.strength, ORIGIN_TEXT, hit=h) for h in hits if h.id in chosen]


MATCHES, ANCHORED = "matches", "anchored"  # how a risk that is itself a seed is on the path (hops 0)


def matched_risks(starts: list[Seed], hood: Neighbourhood) -> dict[str, Via]:
    """Risks that are themselves confident seeds: a risk the prompt is squarely about, or one anchored to
    the very file being edited, is a warning, not merely an answer."""
    out = {}
    for x in starts:
        node = hood.nodes.get(x.id)
        if node is None or node.kind != "risk" or x.origin == ORIGIN_ID:
            continue
        if x.origin == ORIGIN_TEXT or (x.origin == ORIGIN_ANCHOR and x.strength >= ANCHOR_STRENGTH["file"]):
            out[x.id] = Via(x.id, MATCHES if x.origin == ORIGIN_TEXT else ANCHORED, 0, seed=x.id)
    return out


def lifts(starts: list[Seed], hood: Neighbourhood, s: Settings) -> dict[str, Via]:
    """The risks `starts` lift into the callout: those they are, and those they reach causally."""
    from .callout import causal_risks

    return {**matched_risks(starts, hood), **causal_risks([x.id for x in starts], hood, s.callout_hops)}


def confirmed(index: Index, text: str, starts: list[Seed], hood: Neighbourhood, s: Settings,
              doubted: dict[str, str]) -> list[Seed]:
    """Risk callouts only from seeds that pass with margin: a seed that passed by coverage alone with
    the embeddings never asked (`seeds.unasked`) warns only when they, asked now, do not contradict it
    (`seeds.contradicted`, the test a coverage pass they were asked about meets). It stays an answer
    either way. The model is loaded for this only when such a seed would raise a warning."""
    from .seeds import consulted, passed, unasked

    doubt = {x.id: x.hit for x in starts if x.hit is not None and unasked(x.hit, s)}
    if not doubt or not lifts([x for x in starts if x.id in doubt], hood, s):
        return starts
    asked = consulted(index, text, list(doubt.values()))
    for i, h in asked.items():
        if not passed(h, s):
            doubted[i] = (f"passed by coverage alone, and the embeddings, asked for the callout, contradict it "
                          f"(cosine {h.cosine:.2f})")
    return [x for x in starts if x.id not in doubted]


def corroborated(lifted: dict[str, Via], starts: list[Seed], seeds: list[Seed], hood: Neighbourhood, s: Settings,
                 withheld: dict[str, str]) -> dict[str, Via]:
    """The callout without the risks reached causally only from seeds that passed by their cosine (alone,
    or agreeing with a coverage near its floor) that no other seed reaches: the static embeddings put a
    prompt near every fact of its domain ("my team can't reach consensus on the offsite" at 0.70 from a
    consensus decision), and a warning is the one thing a near miss must not raise. Another seed
    reaching the same risk (a support seed too), or one start that passed by its words, a name, a lead or
    an anchor, keeps it; a risk that is itself a start is the prompt's subject and keeps it (one that is
    only a support seed does not). A risk let go stays an answer when the walk reached it."""
    from .callout import causal_risks
    from .seeds import covered, precise

    def by_cosine(x: Seed) -> bool:
        h = x.hit
        return x.origin == ORIGIN_TEXT and h is not None and not precise(h, s) and not covered(h, s)

    own = {x.id for x in starts}  # a risk that is itself a start is the prompt's subject
    causal = [i for i, via in lifted.items() if via.hops > 0 and i not in own]
    if not causal or not any(by_cosine(x) for x in starts):
        return lifted
    reach = {x.id: causal_risks([x.id], hood, s.callout_hops) for x in seeds}
    out = dict(lifted)
    for rid in causal:
        from_starts = {x.id for x in starts if rid in reach.get(x.id, {})}
        if not from_starts or not all(by_cosine(x) for x in starts if x.id in from_starts):
            continue
        if any(y.id != rid and y.id not in from_starts and rid in reach.get(y.id, {}) for y in seeds):
            continue
        del out[rid]
        withheld[rid] = ("reached causally only from seeds that passed by their cosine, and no other seed "
                         "reaches it")
    return out


def confident(seed: Seed, s: Settings) -> bool:
    """A seed that may start a risk callout: named, anchored, or a search hit that reached a floor."""
    from .seeds import passed

    return seed.hit is None or passed(seed.hit, s) is not None


def _named(x: Scored) -> bool:
    return x.seed is not None and x.seed.origin == ORIGIN_ID


def _whole(x: Scored) -> bool:
    """Delivered with its whole text: a named id, and what replaced a named superseded fact."""
    return x.seed is not None and x.seed.origin in (ORIGIN_ID, ORIGIN_SUCCESSOR)


def _risk_only(risk_id: str, via: Via, node: Node, s: Settings) -> Scored:
    from .rank import walked_score

    total, parts = walked_score(node, via, s)
    return Scored(risk_id, node, total, parts, via)


def anchor_seeds(catalog: Catalog, g: gate_mod.Gate, hood: Neighbourhood, s: Settings, taken: set[str],
                 today: dt.date) -> list[Seed]:
    """Facts anchored to the edited files and to files the prompt names, strongest anchors first
    (never one that is withheld: a manual rule or a done task is not brought by editing its file)."""
    if not g.paths:
        return []
    queries = list(g.paths)
    if g.named_paths:
        from .seeds import NAMED_MAX  # (only a prompt names files, and a prompt's search imports it anyway)
    for p in g.named_paths:  # `retry.py` in a prompt: the anchored files it can mean
        meant = catalog.anchor_paths_ending(p)
        if len(meant) <= NAMED_MAX:  # `api.py` in a record of nine apps names none of them
            queries += meant
    best: dict[str, tuple[float, str]] = {}
    for item_id, path, symbol, glob in catalog.anchored(queries):
        kind = "glob" if glob else ("file" if path in queries or symbol else "folder")
        strength = ANCHOR_STRENGTH[kind]
        if strength > best.get(item_id, (-1.0, ""))[0]:
            best[item_id] = (strength, path + (f"::{symbol}" if symbol else ""))
    hood.load_nodes(best)
    usable = [i for i in best if i not in taken and hood.nodes.get(i) is not None
              and delivery.withheld(hood.nodes[i], today) is None]
    usable.sort(key=lambda i: (-best[i][0], -s.kind_weight(hood.nodes[i].kind), i))
    return [Seed(i, best[i][0], ORIGIN_ANCHOR, anchor=best[i][1]) for i in usable[:s.max_seeds]]


def prior_context(project: Project, warnings: list[str]) -> Recall:
    """No index at all: what the most recent sessions were doing, read straight from the WAL (score 0)."""
    from ..session.sessions import recent_summaries

    try:
        summaries = recent_summaries(project, limit=PRIOR_LIMIT)
    except Exception as e:
        warnings.append(f"stele: the session log cannot be read ({type(e).__name__}: {e})")
        summaries = []
    out = [Entry(x.id, "summary", f"session {x.session}, last active {x.last}", 0.0, "session",
                 excerpt=x.text) for x in summaries]
    return Recall(PRIOR_CONTEXT, out)


def _cover(covered: Coverage | None, seeds: list[Seed]) -> None:
    """How much of the prompt each seed holds (`Seed.covers`, which orders equal scores): a search hit's
    coverage as the search measured it; a seed the search did not judge (anchored to a path the prompt
    names, named by id) asked of the same measure."""
    if covered is None:
        return
    covered.load([x.id for x in seeds if x.hit is None])
    for x in seeds:
        x.covers = x.hit.coverage if x.hit is not None else covered.of(x.id)
