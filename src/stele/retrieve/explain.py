"""`explain()` (`stele why`): one recall taken apart, as plain data.

The seeds with their BM25 and vector ranks, every edge the walk followed, each score's parts, which
risks were lifted into the callout and why (and which risks in reach were not), what lifecycle rules
kept out, and what the cap cut. Built from the same `Trace` the recall records, so it explains the
real run rather than a re-enactment.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..kinds import CAUSAL
from ..project import Project
from ..textcut import counted
from .rank import ORIGIN_ANCHOR, ORIGIN_SUCCESSOR, ORIGIN_TEXT, Scored
from .recall import Recall, Trace, recall
from .walk import Via

if TYPE_CHECKING:
    from .seeds import Hit


def explain(project: Project, prompt: str, files: Iterable[str] = (), as_of: str | None = None) -> dict[str, Any]:
    result = recall(project, prompt, files, as_of=as_of)
    return describe(result)


def _via(v: Via) -> dict[str, Any]:
    return {"from": v.from_id, "rel": v.rel, "hops": v.hops, "direction": "in" if v.incoming else "out"}


def _via_or_none(v: Via | None) -> dict[str, Any] | None:
    return None if v is None else _via(v)


def describe(result: Recall) -> dict[str, Any]:
    t = result.trace
    out: dict[str, Any] = {"mode": result.mode, "partial": result.partial, "elapsed_ms": result.elapsed_ms,
                           "warnings": result.warnings}
    if result.when is not None:  # the past it answered for (`--as-of`, or the prompt asked)
        out["as_of"] = result.when.as_dict()
    if t is None:
        return out
    g = t.gate
    out["gate"] = {"skipped": g.skipped, "searched": bool(g.text), "ids": g.ids, "files": g.paths}
    seeds = []
    for n, s in enumerate(t.seeds, 1):
        row: dict[str, Any] = {"rank": n, "id": s.id, "origin": s.origin, "strength": round(s.strength, 3)}
        if s.origin == ORIGIN_TEXT and s.hit is not None:
            h = s.hit
            row.update(bm25_rank=h.bm25_rank, bm25=None if h.bm25 is None else round(h.bm25, 3),
                       vector_rank=h.vector_rank, cosine=None if h.cosine is None else round(h.cosine, 3),
                       fused=round(h.fused, 5))
        elif s.origin == ORIGIN_ANCHOR:
            row["anchor"] = s.anchor
        elif s.origin == ORIGIN_SUCCESSOR:
            row["supersedes"] = s.named
        seeds.append(row)
    out["seeds"] = seeds
    out["floors"] = t.floors
    out["candidates"] = [_candidate(h, t) for h in t.candidates]
    out["unrecorded"] = t.unrecorded
    out["filtered"] = [{"id": i, "why": why} for i, why in t.filtered.items()]
    out["walk"] = [{"id": i, **_via(v)} for i, vias in t.reached.items() for v in vias]
    lifted = {r.id: r for r in result.risks}
    shown = {e.id for e in result.entries}
    out["scores"] = [{"id": x.id, "kind": x.node.kind, "source": x.node.source, "score": x.score,
                      "parts": x.parts, "via": _via_or_none(x.via), "shown": x.id in shown} for x in t.scored]
    out["risks"] = [{"id": r.id, "via": _via(r.via), "why": "causal path of "
                     f"{counted(r.via.hops, 'hop')} from a seed"} for r in result.risks]
    out["risks_not_lifted"] = [{"id": x.id, "why": _not_lifted(x, t)} for x in t.scored
                                if x.node.kind == "risk" and x.id not in lifted]
    out["cut"] = [x.id for x in (t.window.cut if t.window else [])]
    out["trimmed"] = [{"id": x.id, "score": x.score} for x in (t.window.trimmed if t.window else [])]
    out["excluded"] = t.excluded
    out["overridden"] = [{"id": o.id, "by": o.by, "rule": o.rule, "why": o.why} for o in t.overrides.values()]
    out["folded"] = dict(t.folded)
    return out


def _candidate(h: Hit, t: Trace) -> dict[str, Any]:
    """One of the best search hits and the one reason it is, or is not, a seed (`seeds.passed`,
    `seeds.missed`)."""
    from .seeds import evidence, missed, passed

    s = t.settings
    test, way = passed(h, s), evidence(h, s)
    seed = next((x for x in t.seeds if x.id == h.id), None)
    if seed is not None and seed.named and seed.hit is not None and seed.hit.id != h.id:
        why = f"a seed: it stands in for {seed.named}, which it replaced and which matched ({passed(seed.hit, s)})"
    elif seed is not None:
        why = f"a seed: {test}" if test else \
              f"a seed: {way:.2f} of the way to a floor, past the {s.seed_support:g} further seeds need"
    elif h.id in t.rejected:
        why = f"not a seed: {t.rejected[h.id]}"
    elif t.unrecorded and test:
        why = (f"not a seed: {test}, but the prompt names {', '.join(t.unrecorded)}, which the repository has "
               "and the record never mentions (only a named identifier or a clear lead counts then)")
    elif h.foreign and not test:  # its cosine would have passed: say why it did not
        why = f"not a seed: {missed(h, s)}"
    elif not test and way >= s.seed_support:
        why = "not a seed: " + ("no hit named an identifier or led, so nothing counts as support" if t.unrecorded
                                else "no hit reached a floor, so nothing counts as support")
    else:
        why = f"not a seed: {test or missed(h, s)}"
    z = h.z
    return {"id": h.id, "coverage": round(h.coverage, 3), "cosine": None if h.cosine is None else round(h.cosine, 3),
            "background_z": None if z is None else round(z, 2), "named": h.named or None,
            "bm25_rank": h.bm25_rank, "vector_rank": h.vector_rank, "seed": seed is not None,
            "evidence": round(way, 3), "why": why}


def _not_lifted(x: Scored, t: Trace) -> str:
    rels = sorted({v.rel for v in t.reached.get(x.id, [])})
    if x.id in t.withheld:
        return t.withheld[x.id]
    if x.id in t.unconfirmed:
        return "a seed that " + t.unconfirmed[x.id]
    if x.via is None:
        return "a seed (an answer, not a warning) that no well-matching seed reaches causally"
    if set(rels) & CAUSAL:
        if any(v.seed in t.unconfirmed for v in t.reached.get(x.id, [])):
            return "reached causally only from seeds the embeddings contradict or that matched too weakly"
        return "reached causally only from seeds that matched too weakly to start a callout"
    return "reached only through " + ", ".join(rels) + " (not causal)"
