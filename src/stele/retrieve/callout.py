"""The risk callout: a risk on the path, lifted out of the ranked list into a warning block.

Only causal relations qualify (caused-by, blocks, contradicts, supersedes), in either direction, at
most `callout_hops` hops from a seed, every hop causal. A risk reached through relates-to or mentions
is a risk in the neighbourhood, not on the path, and stays an ordinary entry. A risk that is itself a
seed is lifted only when another seed reaches it causally: matching the prompt alone makes it an
answer, not a warning.
"""
from __future__ import annotations

from ..kinds import CAUSAL
from .walk import Neighbourhood, Via

RISK_KIND = "risk"


def causal_risks(seeds: list[str], hood: Neighbourhood, hops: int) -> dict[str, Via]:
    """risk id -> how it was reached (the shortest causal path from any seed; ties: the earlier seed)."""
    found: dict[str, Via] = {}
    hood.load_nodes(seeds)
    for seed in seeds:
        if not hood.ok(seed):
            continue
        seen = {seed}
        frontier = [seed]
        for hop in range(1, max(0, hops) + 1):
            nxt = []
            for node, links in hood.around(frontier).items():
                for other, rel, incoming in links:
                    if rel not in CAUSAL or other in seen:
                        continue
                    seen.add(other)
                    nxt.append(other)
                    if hood.nodes[other].kind == RISK_KIND:
                        best = found.get(other)
                        if best is None or hop < best.hops:
                            found[other] = Via(node, rel, hop, incoming)
            frontier = nxt
    return found
