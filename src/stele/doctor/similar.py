"""Near-duplicate facts: every pair of texts whose word-bigram Jaccard similarity reaches a threshold.

Comparing all pairs is quadratic (50M pairs for 10k facts), so this is a prefix-filtered set-similarity
join: with tokens ordered rarest first, two sets with Jaccard >= t must share a token among the first
|x| - ceil(t * |x|) + 1 of each. Exact (no pair is missed), and fast because rare bigrams have short
posting lists.
"""
from __future__ import annotations

import itertools
import math
import re
from collections import Counter

_WORD = re.compile(r"\w+")


def shingles(text: str) -> frozenset[str]:
    words = _WORD.findall(text.lower())
    if len(words) < 2:
        return frozenset(words)
    return frozenset(f"{a} {b}" for a, b in itertools.pairwise(words))


def similar_pairs(texts: dict[str, str], threshold: float) -> list[tuple[str, str, float]]:
    """(id, id, similarity) for every pair at or above `threshold`, in a stable order."""
    sets = {k: shingles(v) for k, v in texts.items()}
    sets = {k: s for k, s in sets.items() if s}
    freq = Counter(tok for s in sets.values() for tok in s)
    postings: dict[str, list[str]] = {}
    pairs = []
    for key in sorted(sets, key=lambda k: (len(sets[k]), k)):
        mine = sets[key]
        ordered = sorted(mine, key=lambda tok: (freq[tok], tok))
        prefix = len(ordered) - math.ceil(threshold * len(ordered)) + 1
        candidates: set[str] = set()
        for tok in ordered[:prefix]:
            candidates.update(postings.get(tok, ()))
            postings.setdefault(tok, []).append(key)
        for other in sorted(candidates):
            theirs = sets[other]
            if len(theirs) < threshold * len(mine):
                continue
            score = len(mine & theirs) / len(mine | theirs)
            if score >= threshold:
                pairs.append((other, key, score))
    return pairs
