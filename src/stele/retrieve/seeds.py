"""Seeds: where the walk starts. Full-text (BM25) and embedding hits, fused by weighted reciprocal rank.

Rank fusion, not score fusion: BM25 scores and static-embedding cosines live on unrelated scales, and
static cosines separate related from unrelated text poorly (DESIGN.md section 9), so no cosine is ever
thresholded. The weights are tuned on both evaluations: BM25 is what wins on long documents
(SciFact), the embeddings are what finds paraphrases of short facts.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..lazyre import lazy
from ..plain import dataclass, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..index.encoder import Encoder
    from ..index.handle import Index
    from ..index.text import TextIndex
    from ..project import Project
    from .settings import Settings

FTS, HYBRID = "fts", "hybrid"
POOL = 100  # candidates taken from each ranking before filtering and fusion
NO_VECTORS = "the index has no vectors: the embedding model could not be loaded when it was built"


def no_vectors(project: Project) -> str:
    """Why there are no vectors, naming the model's path when it is the model that is missing."""
    from ..index.encoder import model_problem

    problem = model_problem(str(project.config["embedding.model"]), project.root)
    return f"the index has no vectors: {problem}" if problem else NO_VECTORS


@dataclass
class Hit:
    id: str
    fused: float = 0.0
    strength: float = 0.0          # how well it matched, 0..1 (see `strengths`)
    bm25_rank: int | None = None   # 1-based
    bm25: float | None = None
    vector_rank: int | None = None
    cosine: float | None = None
    coverage: float = 0.0          # share of the prompt's content-term weight this hit holds, 0..1
    background: float | None = None  # the fact's mean cosine to unrelated text (`vectors.background_of`)
    spread: float | None = None      # ...and its standard deviation
    named: str = ""                # an identifier the prompt names that this hit holds (rare in the record)
    leads: bool = False            # it holds far more of a long prompt than any other hit (`leading`)
    foreign: str = ""              # it holds no word of a prompt that speaks little of the record (`language`)
    agrees: bool = False           # both rankings put it near the top of a long prompt, both figures near (`agreeing`)

    @property
    def z(self) -> float | None:
        """How far its cosine stands above its own background, in background deviations."""
        if self.cosine is None or self.background is None or not self.spread:
            return None
        return (self.cosine - self.background) / self.spread


def fuse(bm25: list[tuple[str, float]], vec: list[tuple[str, float]], bm25_weight: float,
         vector_weight: float, k: float) -> list[Hit]:
    """Weighted reciprocal-rank fusion of two rankings, best first (ties: BM25 order, then vector)."""
    hits: dict[str, Hit] = {}
    for rank, (i, score) in enumerate(bm25, 1):
        h = hits.setdefault(i, Hit(i))
        h.bm25_rank, h.bm25 = rank, score
        h.fused += bm25_weight / (k + rank)
    for rank, (i, cos) in enumerate(vec, 1):
        h = hits.setdefault(i, Hit(i))
        h.vector_rank, h.cosine = rank, cos
        h.fused += vector_weight / (k + rank)
    order = {i: n for n, i in enumerate(hits)}
    return sorted(hits.values(), key=lambda h: (-h.fused, order[h.id]))


def text_boosts(settings: Settings) -> dict[str, float]:
    """BM25's weight of each text field."""
    return {"title": settings.title_boost, "body": 1.0, "tags": 1.0, "anchors": 0.5}


@dataclass
class HybridResult:
    hits: list[Hit]
    mode: str
    vector_error: str | None = None
    pool: frozenset[str] = frozenset()  # every candidate either ranking drew, past the fused top `limit`
    covered: Coverage | None = None  # how much of the prompt each item holds (`Seed.covers` asks it too)


def hybrid(index: Index, text: str, settings: Settings, limit: int,
           keep: Callable[[list[str]], set[str]] | None = None, kinds: Iterable[str] = (),
           names: Iterable[str] = (), weighted: dict[str, float] | None = None) -> HybridResult:
    """Search `index` for `text`: the fused top `limit` among items `keep` accepts (all when None),
    each with its coverage and cosine, the two figures `relevant` judges it by. `weighted` (analyzed
    term -> weight; `stele search`'s feedback) replaces the words BM25 ranks by; how much full text
    matched (`bm25_share`), coverage and the embeddings still read `text` alone.

    How much full text matched (`bm25_share`, which moves the lead between the rankings) is a property
    of the prompt and the whole record, so it is measured without the `kinds` filter: asking for one
    kind must not make a weak match look like a reason to consult the embeddings (it used to, and
    `--kind document` then returned more, and unrelated, hits than no filter at all)."""
    kinds = tuple(kinds)
    boosts = text_boosts(settings)
    bm25 = index.text.search(text, POOL, boosts, kinds=kinds, weighted=weighted)
    if len(bm25) >= POOL:  # a full pool may be all session notes: draw the committed facts apart
        seen = {i for i, _ in bm25}
        bm25 += [(i, sc) for i, sc in index.text.search(text, POOL, boosts, kinds=kinds, source="committed",
                                                        weighted=weighted) if i not in seen]
        bm25.sort(key=lambda h: -h[1])
    if keep is not None:
        allowed = keep([i for i, _ in bm25])
        bm25 = [(i, s) for i, s in bm25 if i in allowed]
    overall = bm25
    if kinds or weighted is not None:  # the best active hit of any kind, by the query's own words
        overall = index.text.search(text, 10, boosts)
        if keep is not None:
            allowed = keep([i for i, _ in overall])
            overall = [(i, s) for i, s in overall if i in allowed]
    share = bm25_share(index, text, boosts, overall)
    wb, wv = weights(settings, share)
    vec: list[tuple[str, float]] = []
    error = None if index.model_id else no_vectors(index.project)
    covered = Coverage(index.text, text)
    found_rows: dict[str, bytes] = {}
    if error is None and (share < settings.strong_match or not _covered(covered, overall, settings)):
        # a strong full-text match needs no embedding, unless it still misses the coverage floor
        encoded: dict[str, Any] = {}
        vec, error = vector_hits(index, text, POOL, found_rows, encoded)
        if len(vec) >= POOL and 2 * sum(not i.startswith("S-") for i, _ in vec) < POOL:
            # session notes took most places: draw deeper, so committed facts keep theirs (at 10k
            # facts, asking for 4 x POOL every time cost ~10 ms of the prompt hook and changed nothing)
            vec, error = vector_hits(index, text, 4 * POOL, found_rows, encoded)
        vec = sorted([h for h in vec if not h[0].startswith("S-")][:POOL]  # drawn per source, too
                     + [h for h in vec if h[0].startswith("S-")][:POOL], key=lambda h: (-h[1], h[0]))
    if kinds and vec:
        found = index.catalog.nodes(i for i, _ in vec)
        vec = [(i, c) for i, c in vec if i in found and found[i].kind in kinds]
    if keep is not None and vec:
        allowed = keep([i for i, _ in vec])
        vec = [(i, c) for i, c in vec if i in allowed]
    named = holders(index, names, keep, kinds)
    hits = fuse(bm25, vec, wb, wv if error is None else 0.0, settings.rrf_k)
    hits += [Hit(i) for i in named if i not in {h.id for h in hits}]
    strengths(hits, wb, wv if vec else 0.0, settings.rrf_k)
    chosen = per_source(hits, limit)
    hits = chosen + [h for h in hits if h.id in named and h not in chosen]
    named_hits(hits, named, strong=max((h.strength for h in hits), default=1.0))
    backgrounds = background_of(index, found_rows, [h.id for h in hits if h.cosine is not None])
    covered.load([h.id for h in hits])
    bodies = index.catalog.long_bodies([h.id for h in hits], LONG_FACT)
    for h in hits:
        h.coverage = covered.by_passage(h.id, bodies[h.id]) if h.id in bodies else covered.of(h.id)
        h.background, h.spread = backgrounds.get(h.id, (None, None))
    leading(hits, len(covered.weight))
    agreeing(hits, len(covered.weight), settings)
    mark_foreign(index, covered, hits, settings)
    return HybridResult(hits, FTS if error else HYBRID, error, frozenset(i for i, _ in bm25) | {i for i, _ in vec},
                        covered)


def mark_foreign(index: Index, covered: Coverage, hits: list[Hit], s: Settings) -> None:
    """Mark the hits holding none of the prompt's words (`ALONE`) when the prompt speaks less of the
    record's language than the record's own facts do (`language`): their cosine then makes no seed
    ("my AirPods audio is out of sync" against the Sync facts); it still supports one. Measured only
    when such a hit would pass by its cosine, and the record's line only when the prompt is under the
    most any record asks (`language.SPEAKS`)."""
    from . import language

    alone = [h for h in hits if h.coverage < ALONE and by_vector(h, s, alone=True) >= 1.0]
    if not alone:
        return
    speaks = language.spoken(covered.weight, covered.held_terms)
    if speaks >= language.SPEAKS:
        return
    line = language.line(index.text, index.catalog)
    if speaks < line:
        for h in alone:
            h.foreign = f"the prompt speaks {speaks:.2f} of the record's language (< {line:.2f})"


LONG_PROMPT = 10  # content words from which a prompt is long: no fact covers much of it
LEAD_SHARE = 0.2  # ...and the hit covering most of it must cover at least this
LEAD_RATIO = 2.0  # ...and this many times what the runner-up covers


def leading(hits: list[Hit], words: int) -> None:
    """On a long prompt, mark the hit that clearly covers most of it. A developer's long question holds
    many words no fact holds (the situation, the plan, the code around it), so even the fact it is
    about covers little of it, while an unrelated fact covers less still: the lead is the evidence."""
    if words < LONG_PROMPT or not hits:
        return
    ranked = sorted(hits, key=lambda h: -h.coverage)
    runner_up = ranked[1].coverage if len(ranked) > 1 else 0.0
    if ranked[0].coverage >= LEAD_SHARE and ranked[0].coverage >= LEAD_RATIO * runner_up:
        ranked[0].leads = True


AGREE_RANK = 3  # how high both rankings must put the first hit for their agreement to count
BOTH = 0.8  # ...and how far each of its two figures must go toward its floor


def agreeing(hits: list[Hit], words: int, s: Settings) -> None:
    """On a long prompt, mark the first hit when both rankings put it among their first AGREE_RANK and
    each of its figures goes BOTH of the way to its floor. A developer's long question holds many words
    no fact holds (the situation, the plan, the code around it), which dilutes coverage even for the
    fact it is about, so the coverage floor misses it; full text and the embeddings are independent
    evidence, and a fact both put at the top, near both floors, is what the prompt is about (rails-
    publishing `para-contract`: coverage 0.33 and cosine 0.61, first on full text, second by cosine).
    An off-topic question near the record's domain has its best hit nearer one floor than the other,
    or ranked far down one ranking (measured: docs/retrieval.md, "Agreement on a long prompt")."""
    if words < LONG_PROMPT or not hits:
        return
    first = hits[0]
    if first.bm25_rank is None or first.vector_rank is None:
        return
    if first.bm25_rank <= AGREE_RANK and first.vector_rank <= AGREE_RANK \
            and min(by_text(first, s), by_vector(first, s)) >= BOTH:
        first.agrees = True


NAMED_MAX = 3  # an identifier held by more facts than this says little about which one the prompt means


def holders(index: Index, names: Iterable[str], keep: Callable[[list[str]], set[str]] | None,
            kinds: tuple[str, ...]) -> dict[str, str]:
    """Facts that hold an identifier the prompt names, when at most NAMED_MAX do: id -> the name."""
    out: dict[str, str] = {}
    for name in names:
        ids = index.text.holding(name, NAMED_MAX + 1)
        if not ids or len(ids) > NAMED_MAX:
            continue
        if kinds:
            found = index.catalog.nodes(ids)
            ids = [i for i in ids if i in found and found[i].kind in kinds]
        allowed = keep(ids) if keep is not None else set(ids)
        for i in ids:
            if i in allowed:
                out.setdefault(i, name)
    return out


def named_hits(hits: list[Hit], named: dict[str, str], strong: float) -> None:
    """Mark the hits holding a named identifier: a precise match, as strong as the best hit's."""
    for h in hits:
        if h.id in named:
            h.named = named[h.id]
            h.strength = max(h.strength, strong)


def _covered(covered: Coverage, bm25: list[tuple[str, float]], s: Settings) -> bool:
    """Whether one of the best full-text hits reaches the coverage floor."""
    return covered.best([i for i, _ in bm25[:5]]) >= s.text_floor


def per_source(hits: list[Hit], limit: int) -> list[Hit]:
    """The best `limit` committed facts and the best `limit` session entries, in fused order: drawn
    per source, so any number of matching session notes never pushes a committed fact out of the
    window (committed memory outranks session memory; the rank puts session entries below)."""
    committed = [h for h in hits if not h.id.startswith("S-")][:limit]
    session = [h for h in hits if h.id.startswith("S-")][:limit]
    keep = {id(h) for h in committed} | {id(h) for h in session}
    return [h for h in hits if id(h) in keep]


UNRELATED_COSINE = 0.2  # the bundled model's mean cosine between unrelated texts: no evidence at all
ALONE = 0.1  # coverage under which a cosine stands alone (`vector_alone_z`): no word of note in common


def by_text(hit: Hit, s: Settings) -> float:
    """How far coverage goes toward its floor (1 at the floor)."""
    return hit.coverage / s.text_floor if s.text_floor > 0 else 0.0


def by_vector(hit: Hit, s: Settings, alone: bool = False) -> float:
    """How far the cosine goes toward the vector test (1 when passed): it must reach `vector_floor`
    (counted from what unrelated texts score) and stand `z_needed` background deviations above the
    fact's own background, when the index has one: a long or generic fact near everything needs a
    cosine far above what it scores against unrelated text."""
    if hit.cosine is None or s.vector_floor <= UNRELATED_COSINE:
        return 0.0
    way = max(0.0, (hit.cosine - UNRELATED_COSINE) / (s.vector_floor - UNRELATED_COSINE))
    need = z_needed(hit, s, alone)
    if hit.z is not None and need > 0:
        way = min(way, max(0.0, hit.z / need))
    return way


def z_needed(hit: Hit, s: Settings, alone: bool) -> float:
    """The background deviations a cosine must stand above: `vector_alone_z` for a hit holding almost
    none of the prompt's words when it is to make a seed on its own (`alone`), else `vector_z`."""
    if s.vector_z <= 0:  # the background test is off
        return 0.0
    return max(s.vector_z, s.vector_alone_z) if alone and hit.coverage < ALONE else s.vector_z


AGREE = 0.9  # of the way to a floor: the other evidence a weak name or a lead needs to count
NEAR = 0.99  # what a hit that supports seeds but may not make one counts for


def passed(hit: Hit, s: Settings) -> str | None:
    """The relevance test `hit` passes on its own, in `stele why`'s words, or None. A rare identifier the
    prompt names passes (a plain two-word CamelCase name such as `GitHub` or `QuerySet` only when the
    hit's figures nearly reach a floor too: prose is full of those); so does a clear lead on a long
    prompt that the embeddings do not contradict; so does coverage at `text_floor` unless the
    embeddings, when consulted, `contradicted` it; so does the vector test with the deviations a hit
    holding almost none of the prompt's words needs."""
    if by_name(hit, s):
        return f"names {hit.named}, which few facts hold"
    if by_lead(hit, s):
        return f"leads the other hits on a long prompt (coverage {hit.coverage:.2f})"
    if hit.agrees:
        return (f"at the top of both rankings of a long prompt, near both floors (coverage {hit.coverage:.2f}, "
                f"cosine {hit.cosine:.2f})")
    if covered(hit, s):
        return f"coverage {hit.coverage:.2f} >= {s.text_floor:g}"
    if by_vector(hit, s, alone=True) >= 1.0 and not hit.foreign:
        return f"cosine {hit.cosine:.2f} >= {s.vector_floor:g}" + (
            f", {hit.z:.1f} deviations above its background" if hit.z is not None else "")
    return None


DISAGREE = 0.6  # of the way to the vector test, under which the embeddings contradict a coverage match


def contradicted(hit: Hit, s: Settings) -> bool:
    """The embeddings, consulted, put the hit barely nearer the prompt than unrelated text: its figure toward
    the vector test (cosine, and deviations above its own background) is under DISAGREE. A fact sharing
    a few of the prompt's words in another sense ("the places metrics.yaml" against a fact on places
    and its metrics) covers the prompt without being about it; the fact a prompt is about is also near
    it in meaning (on the realistic sets' tune halves every expected fact that passed by coverage with
    its cosine known stood at 0.93 or more, on shop at 0.73)."""
    return hit.cosine is not None and s.vector_floor > UNRELATED_COSINE and by_vector(hit, s) < DISAGREE


def unasked(hit: Hit, s: Settings) -> bool:
    """It passed by coverage alone, and the embeddings were never asked about it (a strong full-text
    share skips them): nothing checked that the words it shares with the prompt are meant in its sense
    ("the history of chess openings" covers a corruption risk 0.37 by `history` and `open`)."""
    return hit.cosine is None and not precise(hit, s) and passed(hit, s) is not None


def consulted(index: Index, text: str, hits: list[Hit]) -> dict[str, Hit]:
    """Copies of `hits` with the cosine (and background) the embeddings give them, for a recall that
    skipped them; {} when they cannot be asked. A hit outside the `POOL` nearest gets the lowest cosine
    among them, which it is under. The hits themselves are left as the search judged them."""
    rows: dict[str, bytes] = {}
    vec, error = vector_hits(index, text, POOL, rows)
    if error or not vec:
        return {}
    cos = dict(vec)
    lowest = min(cos.values())
    backgrounds = background_of(index, rows, [h.id for h in hits if h.id in cos])
    out = {}
    for h in hits:
        background, spread = backgrounds.get(h.id, (None, None))
        out[h.id] = replace(h, cosine=cos.get(h.id, lowest), background=background, spread=spread)
    return out


def by_name(hit: Hit, s: Settings) -> bool:
    """It holds an identifier the prompt names (a weak name only with other evidence nearly there)."""
    return bool(hit.named) and (strong_name(hit.named) or max(by_text(hit, s), by_vector(hit, s)) >= AGREE)


def by_lead(hit: Hit, s: Settings) -> bool:
    """It clearly leads on a long prompt, and the embeddings do not contradict it."""
    return hit.leads and (hit.cosine is None or by_vector(hit, s) >= AGREE)


def covered(hit: Hit, s: Settings) -> bool:
    """It passes the coverage floor by the prompt's words, and the embeddings, when consulted, do not
    contradict it."""
    return by_text(hit, s) >= 1.0 and not contradicted(hit, s)


def precise(hit: Hit, s: Settings) -> bool:
    """It passed by what points at one fact (a named identifier, a clear lead), not by coverage or
    cosine, which also measure how near the prompt is to the record's domain (`unrecorded`)."""
    return by_name(hit, s) or by_lead(hit, s)


def evidence(hit: Hit, s: Settings) -> float:
    """How far `hit` goes toward the relevance floors: at least 1 when it `passed` one, else the stronger
    of its two figures, short of 1 (a cosine with no word of note in common supports a seed, it does
    not make one)."""
    own = max(by_text(hit, s), by_vector(hit, s))
    return max(1.0, own) if passed(hit, s) else min(own, NEAR)


_SEPARATED = lazy(r"_|\.|::|^[a-z]+[A-Z]")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def strong_name(name: str) -> bool:
    """A name only code has: snake_case, a dotted or `::` path, lowerCamel, or three or more parts."""
    return bool(_SEPARATED.search(name)) or len(_PARTS.findall(name)) >= 3


def relevant(hits: list[Hit], s: Settings) -> list[Hit]:
    """The hits that pass the absolute test (on top of the relative `min_seed_strength`), best first.
    The prompt has something on the record only when a hit `passed` a test; then the other hits need
    `seed_support` of the way there: a second fact bearing on one part of a two-part question covers
    less of it. Without this a prompt the record has nothing on still found "the best" of what was
    there, and everything walked and called out from it followed."""
    if not any(passed(h, s) for h in hits):
        return []
    return [h for h in hits if evidence(h, s) >= s.seed_support]


def missed(hit: Hit, s: Settings) -> str:
    """Why `hit` is short of the floors, in their own terms (what `stele why` shows)."""
    if hit.foreign and by_vector(hit, s, alone=True) >= 1.0:
        return (f"cosine {hit.cosine:.2f} >= {s.vector_floor:g}, but it holds no word of the prompt and "
                f"{hit.foreign}")
    if hit.cosine is None:
        cos = "no embedding match"
    elif hit.cosine < s.vector_floor:
        cos = f"cosine {hit.cosine:.2f} < {s.vector_floor:g}"
    else:
        cos = (f"cosine {hit.cosine:.2f} only {hit.z or 0:.1f} deviations above its background "
               f"(< {z_needed(hit, s, alone=True):g})")
    if by_text(hit, s) >= 1.0:  # covered, but the embeddings contradicted it
        return (f"coverage {hit.coverage:.2f} >= {s.text_floor:g}, but the embeddings contradict it "
                f"({cos}; under {DISAGREE:g} of the way to the vector test)")
    return f"coverage {hit.coverage:.2f} < {s.text_floor:g} and {cos}"


class Coverage:
    """How much of the prompt each hit covers: the share of the prompt's content words it holds, each
    word weighted by its rarity in the record (`TextIndex.content_words`, `TextIndex.rarity`). Unlike
    a BM25 score it is on one scale for every prompt and every record: 1 holds every word the prompt
    could be about, 0.1 one common word of several. Asked of the text index once per hit, one small
    query per term the record holds at all; a long prompt is judged by its `MAX_WORDS` rarest words
    (the rest weigh least)."""

    MAX_WORDS = 48

    def __init__(self, text_index: TextIndex, text: str) -> None:
        self.text_index = text_index  # the record's TextIndex, or the code index's
        words = text_index.content_words(text)
        rarity = text_index.rarity([t for w in words for t in w])
        self.weight = {w: rarity[w[0]][0] for w in words}
        self.total = sum(self.weight.values())
        self.held_terms = {t for t, (_, df) in rarity.items() if df > 0}
        findable = [w for w in words if w[0] in self.held_terms or (len(w) > 1 and set(w[1:]) <= self.held_terms)]
        self.words = sorted(findable, key=lambda w: -self.weight[w])[:self.MAX_WORDS]
        self.known: dict[str, float] = {}

    def load(self, ids: list[str]) -> None:
        ids = [i for i in dict.fromkeys(ids) if i not in self.known]
        if not ids:
            return
        got = dict.fromkeys(ids, 0.0)
        if self.total > 0 and self.words:
            terms = [t for w in self.words for t in w if t in self.held_terms]
            holders = self.text_index.holders(list(dict.fromkeys(terms)), ids)
            for w in self.words:
                have = holders.get(w[0], set())
                if len(w) > 1:
                    have = have | set.intersection(*(holders.get(t, set()) for t in w[1:]))
                for i in have:
                    got[i] += self.weight[w] / self.total
        self.known.update(got)

    def of(self, item_id: str) -> float:
        self.load([item_id])
        return self.known[item_id]

    def held(self, terms: set[str]) -> set[tuple[str, ...]]:
        """The prompt's words a text holds, given the text's terms."""
        return {w for w in self.words if w[0] in terms or (len(w) > 1 and set(w[1:]) <= terms)}

    def by_passage(self, item_id: str, body: str) -> float:
        """Coverage of a long fact by its best passage (`passages`), plus what its title, tags and
        anchors hold: a runbook of many paragraphs holds a few words of every prompt of its domain, and
        must not cover each of them better than the short fact it is actually about."""
        if self.total <= 0 or not self.words:
            return 0.0
        whole = self.held(set(self.text_index.terms(body)))
        holders = self.text_index.holders(list({t for w in self.words for t in w if t in self.held_terms}),
                                          [item_id])
        doc = {w for w in self.words
               if item_id in holders.get(w[0], set())
               or (len(w) > 1 and all(item_id in holders.get(t, set()) for t in w[1:]))}
        outside = doc - whole  # held by the title, tags or anchors: every passage has those
        best = max((sum(self.weight[w] for w in outside | (self.held(set(self.text_index.terms(p))) & doc))
                    for p in passages(body)), default=0.0)
        return best / self.total

    def best(self, ids: list[str]) -> float:
        self.load(ids)
        return max((self.known[i] for i in ids), default=0.0)


LONG_FACT = 1500  # characters of body from which a fact is judged by its best passage
PASSAGE = 700  # characters of one passage, about a paragraph or two


def passages(body: str) -> list[str]:
    """`body` in passages of about PASSAGE characters: paragraphs, merged while they fit, a longer one
    cut at a word."""
    out: list[str] = []
    current = ""
    for para in (p.strip() for p in body.split("\n\n")):
        while len(para) > PASSAGE:
            cut = para.rfind(" ", 0, PASSAGE)
            cut = cut if cut > PASSAGE // 2 else PASSAGE
            out.append(para[:cut])
            para = para[cut:].strip()
        if current and len(current) + len(para) + 2 > PASSAGE:
            out.append(current)
            current = ""
        current = f"{current}\n\n{para}" if current else para
    if current:
        out.append(current)
    return out


def strengths(hits: list[Hit], wb: float, wv: float, k: float) -> None:
    """Set each hit's match strength, 1 for the best. Ranks decide which hits become seeds; the
    strength says how much better the best is: on the full-text side the BM25 score as a share of the
    top score (a pasted error that one lesson contains outscores the rest by far), on the embedding
    side the reciprocal rank relative to the first (cosines of a static model are too flat to say more),
    weighted as in the fusion."""
    top_bm25 = max((h.bm25 for h in hits if h.bm25), default=0.0)
    raw = {}
    for h in hits:
        sb = (h.bm25 or 0.0) / top_bm25 if top_bm25 > 0 else 0.0
        sv = (k + 1) / (k + h.vector_rank) if h.vector_rank else 0.0
        raw[h.id] = (wb * sb + wv * sv) / ((wb + wv) or 1.0)
    best = max(raw.values(), default=0.0) or 1.0
    for h in hits:
        h.strength = raw[h.id] / best


def bm25_share(index: Index, text: str, boosts: dict[str, float], bm25: list[tuple[str, float]]) -> float:
    """The top BM25 hit's score as a share of what the query's terms could score at best."""
    if not bm25:
        return 0.0
    ceiling = index.text.ceiling(text, boosts)
    return bm25[0][1] / ceiling if ceiling > 0 else 0.0


def weights(s: Settings, share: float) -> tuple[float, float]:
    """Fusion weights for one query. When full text matched only weakly (the best hit holds a small
    share of what the prompt's words could score: a paraphrase, no rare word in common), the
    embeddings lead; as the match gets stronger BM25 takes over, and from `strong_match` on the
    embeddings are not consulted at all (measured: that costs nothing on either evaluation, and it
    spares most prompts loading numpy and the model)."""
    if share >= s.strong_match:
        return s.bm25_weight, 0.0
    lo, hi = s.weak_match, s.strong_match
    t = min(1.0, max(0.0, (hi - share) / (hi - lo))) if hi > lo else 0.0
    return s.bm25_weight * (1 - 0.5 * t), s.vector_weight + (1.0 - s.vector_weight) * t


def vector_hits(index: Index, text: str, k: int, rows: dict[str, bytes] | None = None,
                encoded: dict[str, Any] | None = None) -> tuple[list[tuple[str, float]], str | None]:
    """(id, cosine) best first, or ([], why not) when the model or the vectors cannot be used. Given
    `rows`, fills it with each hit's float32 vector (what `background_of` judges it by). `encoded`
    keeps the query's vector for a second, deeper draw of the same text (the encoder is deterministic)."""
    from ..index.encoder import EncoderUnavailable
    from ..index.nearest import nearest

    if not index.model_id:
        return [], no_vectors(index.project)
    try:
        enc = query_encoder(index.project)
        query = encoded.get(text) if encoded is not None else None
        if query is None:
            query = enc.encode([text])[0]
            if encoded is not None:
                encoded[text] = query
        # ties by id, never by row (rows follow the index's history); items still to be embedded included
        found = nearest(index, enc, query, k)
    except EncoderUnavailable as e:
        return [], str(e)
    except (OSError, ValueError) as e:
        return [], f"the vectors cannot be read ({e}); `stele rebuild` rebuilds them"
    if rows is not None:
        rows.update((n.id, n.row) for n in found)
    return [(n.id, n.cosine) for n in found], None


def background_of(index: Index, rows: dict[str, bytes], ids: list[str]) -> dict[str, tuple[float, float]]:
    """Each of `ids`' (mean, deviation) of cosines to unrelated text (`vectors.background_of`), from the
    float rows `vector_hits` found them by: only the few hits whose cosine is judged."""
    from ..index import vectors
    from ..index.encoder import EncoderUnavailable

    ids = [i for i in ids if i in rows]
    if not ids:
        return {}
    try:
        background = background_rows(index, query_encoder(index.project))
    except (EncoderUnavailable, OSError, ValueError):
        return {}
    return dict(zip(ids, vectors.background_of([rows[i] for i in ids], background), strict=False))


_BACKGROUNDS: dict[str, bytes] = {}


def background_rows(index: Index, enc: Encoder) -> bytes:
    """The background prompts' vectors: kept in the model's store by the build, else embedded here once
    per process (the same encoder, so the same rows)."""
    from ..index import vectors

    model = index.model_id
    if model not in _BACKGROUNDS:
        kept = vectors.read_background(index.dir, model, index.matrix().dim)
        _BACKGROUNDS[model] = kept if kept is not None else vectors.embed_background(enc)
    return _BACKGROUNDS[model]


_ENCODERS: dict[str, Encoder] = {}


def query_encoder(project: Project) -> Encoder:
    """The lean query encoder of the configured model, loaded once per process."""
    from ..index import vectors

    ref = vectors.model_ref(project)
    if ref.model_id not in _ENCODERS:
        _ENCODERS[ref.model_id] = vectors.load_encoder(ref, bulk=False, index_dir=project.index_dir)
    return _ENCODERS[ref.model_id]
