"""Near-duplicate facts: every pair of texts whose word-bigram Jaccard similarity reaches a threshold.

Comparing all pairs is quadratic (50M pairs for 10k facts), so this is a prefix-filtered set-similarity
join: with tokens ordered rarest first, two sets with Jaccard >= t must share a token among the first
|x| - ceil(t * |x|) + 1 of each. Exact (no pair is missed), and fast because rare bigrams have short
posting lists. A token no other set has (most word bigrams of real prose) can never bring a
candidate, so only the shared ones are sorted and posted, and a set whose whole prefix is such tokens
is skipped outright: on 10k facts that is most of them.
"""
from __future__ import annotations

import math
import re
from collections import Counter

_WORD = re.compile(r"\w+")


def shingles(text: str) -> frozenset[str]:
    words = _WORD.findall(text.lower())
    if len(words) < 2:
        return frozenset(words)
    return frozenset(f"{a} {b}" for a, b in zip(words, words[1:]))


def similar_pairs(texts: dict[str, str], threshold: float) -> list[tuple[str, str, float]]:
    """(id, id, similarity) for every pair at or above `threshold`, in a stable order."""
    sets = {k: shingles(v) for k, v in texts.items()}
    sets = {k: s for k, s in sets.items() if s}
    freq = Counter(tok for s in sets.values() for tok in s)
    once = frozenset(tok for tok, n in freq.items() if n == 1)
    postings: dict[str, list[str]] = {}
    pairs = []
    for key in sorted(sets, key=lambda k: (len(sets[k]), k)):
        mine = sets[key]
        prefix = len(mine) - math.ceil(threshold * len(mine)) + 1
        alone = len(mine & once)  # rarest first: these fill the prefix before any shared token
        if alone >= prefix:
            continue
        shared = sorted(mine - once, key=lambda tok: (freq[tok], tok))
        candidates: set[str] = set()
        for tok in shared[:prefix - alone]:
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
