"""A stand-in ranking until `stele.retrieve.search` lands: word overlap weighted by rarity.

Temporary: `build.rank` is the one place that calls it, and will call retrieval instead.
"""
from __future__ import annotations

import math
import re
from collections import Counter

from ..record import Record

_WORD = re.compile(r"[a-z0-9]{3,}")


def rank(record: Record, query: str, limit: int, kinds: list[str]) -> list[str]:
    words = set(_WORD.findall(query.lower()))
    facts = [f for f in record.facts.values() if f.kind in kinds]
    bags = {f.id: set(_WORD.findall(f"{f.title} {f.body}".lower())) for f in facts}
    df = Counter(w for bag in bags.values() for w in bag & words)
    scores = {fid: sum(math.log(1 + len(bags) / df[w]) for w in bag & words) for fid, bag in bags.items()}
    return [fid for fid, s in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])) if s > 0][:limit]
