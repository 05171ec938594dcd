"""Whether a prompt speaks the record's language, for a hit that holds none of its words.

A cosine that holds almost no word of the prompt (`seeds.ALONE`) is how a paraphrase is found ("a
buyer was billed two times" against "customers were charged twice"), and also how an everyday
homonym gets in: "my AirPods audio is out of sync" sits at cosine 0.74 from a record's Sync facts,
"as a tenant in Ontario" at 0.68 from a multi-tenancy decision. The difference the words show is how
much of the prompt the record speaks at all: the share of its content-word weight (rarity-weighted,
as coverage is) in words some fact holds. A developer rephrasing a recorded topic still uses the
record's vocabulary around the paraphrase (0.55-1.0 on the realistic sets' tune halves); an everyday
question uses little of it (0.16-0.47).

How much a prompt must speak depends on the record: in a six-fact record of unrelated decisions no
fact shares a word with another, and a true paraphrase speaks none of it. So the line is the
record's own: the share its facts' titles speak of the *other* facts (each title taken as a prompt
against the record without it), at its lower quartile, capped at `SPEAKS` (half the prompt's weight).
A record of 40-150 facts with a language of its own sits at 0.51-0.68 (the cap holds), a record of
20 facts near 0.5, of 10 near 0.3, of 6 unrelated facts at 0 (the test is off). Measured with
`python eval/run_sets.py --half tune` and `bench/floors.py` (docs/retrieval.md).
"""
from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..index.catalog import Catalog
    from ..index.text import TextIndex

SPEAKS = 0.5  # the most a record may ask of a prompt: half its word weight in the record's words
QUANTILE = 0.25  # of the facts' own shares: the line a quarter of the record's facts fall under
SAMPLE = 200  # fact titles the line is measured on (evenly spread by id), bounding its cost


def spoken(weight: dict[tuple[str, ...], float], held: set[str]) -> float:
    """The share of the prompt's content-word weight (`seeds.Coverage.weight`: each word as its terms,
    rarity-weighted) in words some fact holds (`held`: the terms the record holds); 1 for no word."""
    total = sum(weight.values())
    if total <= 0:
        return 1.0
    return sum(v for w, v in weight.items() if w[0] in held or (len(w) > 1 and set(w[1:]) <= held)) / total


_LINES: dict[tuple[str, tuple[int, int, int]], float] = {}


def line(text: TextIndex, catalog: Catalog) -> float:
    """The share a prompt must speak for a hit holding none of its words to make a seed by its cosine:
    the lower quartile of what the record's committed facts' titles speak of the other facts, at most
    SPEAKS. Kept per index state (a resident server measures it once per change of the record)."""
    key = (str(text.path), text.live().key)
    if key not in _LINES:
        titles = [t for (t,) in catalog.db.execute(
            "SELECT title FROM items WHERE source = 'committed' ORDER BY id")]
        _LINES.clear()  # only the index state read now counts: a long-lived server keeps one line
        _LINES[key] = _measure(text, titles)
    return _LINES[key]


def _measure(text: TextIndex, titles: list[str]) -> float:
    from ..index.text import RARITY_MIN_ITEMS

    if len(titles) > SAMPLE:
        step = len(titles) / SAMPLE
        titles = [titles[int(k * step)] for k in range(SAMPLE)]
    words = [text.content_words(t) for t in titles]
    rarity = text.rarity([x for ws in words for w in ws for x in w])
    n = max(text.live().n, RARITY_MIN_ITEMS)
    shares = []
    for ws in words:
        total = held = 0.0
        for w in ws:
            others = [max(0, rarity[x][1] - 1) for x in w]  # the fact itself holds each of its words
            weight = math.log(1 + (n - others[0] + 0.5) / (others[0] + 0.5))
            total += weight
            if others[0] > 0 or (len(w) > 1 and all(d > 0 for d in others[1:])):
                held += weight
        if total > 0:
            shares.append(held / total)
    if not shares:
        return 0.0
    shares.sort()
    return min(SPEAKS, shares[int(QUANTILE * (len(shares) - 1))])
