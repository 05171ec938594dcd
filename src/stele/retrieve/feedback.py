"""Pseudo-relevance feedback for `stele search`: the best full-text hits lend the query a few words.

A short query ("statin breast cancer", "alias swap") names its subject with a word or two, while the
facts about it use their own words for the rest. The first pass of BM25 finds the facts that match
best; the words those facts share, weighted by how well each fact matched and by how rare the word
is, are added to the query, and BM25 runs again (RM3, Lavrenko and Croft's relevance model mixed with
the query, as Anserini does it, with two changes that keep it safe on records of any size):

- A feedback fact counts by exp(its BM25 score - the top score): BM25 is a log-odds of relevance, so
  a fact that scores 3 below the best counts 1/20 as much, and a query whose top hit stands out takes
  its words from that hit (RM3 weights by query likelihood, which is also exponential in the score).
- The added words together weigh `MASS` query words, whatever the query's length: they complete a
  short query (half of a two-word one's weight) and barely move a long one, which already says what
  it is about. RM3's fixed mix (0.5) moved long claims off their subject (SciFact 0.62 on half of it).
- Not for a lookup: a query every word of which one of the first pass's best facts has in its title
  names that fact, and feedback would only rank the fact's neighbours over it (known-item searches on
  project records lost 0.008 MRR without this; docs/retrieval.md).

Only `stele search` uses it: the prompt hook and `stele recall` judge a prompt's own words (coverage,
the relevance floors), and a feedback word is not something the prompt said. Deterministic: ties
between words go by the word. Measured in docs/retrieval.md ("Pseudo-relevance feedback").
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..index.text import TextIndex

KEYWORDS = 3  # distinct terms up to which a query is a few keywords naming a subject (longer: a question)
DOCS = 10  # facts of the first pass the words are taken from
TERMS = 5  # words added (a word of the query may be among them: it then weighs more)
MASS = 2.0  # what the added words weigh together, in query words


def expanded(text_index: TextIndex, text: str, boosts: dict[str, float], kinds: Sequence[str] = (),
             source: str | None = None) -> dict[str, float] | None:
    """The query's analyzed terms (weight: how often it says each) plus the feedback words; None for
    a longer query (a question or a claim says what it is about), when the first pass finds nothing to
    learn from, and for a lookup: when every word of the query is in the title of one of the first
    pass's best facts. A title is a name, and a few words that a best hit's title holds all of are
    most likely that name, typed by someone who knows the fact is there; feedback would lend the query
    the words of its neighbours and rank them over it. A query that names a subject no title names
    whole is a topic, what feedback helps."""
    query = Counter(text_index.terms(text))
    if not query or len(query) > KEYWORDS:
        return None
    first = text_index.search(text, DOCS, boosts, kinds=kinds, source=source)
    if not first:
        return None
    titles = text_index.term_counts([i for i, _ in first], fields=("title",))
    if any(set(query) <= set(t) for t in titles.values()):
        return None  # a lookup: one of the best hits is named by every word of the query (`expanded`)
    top = first[0][1]
    counts = text_index.term_counts([i for i, _ in first])
    live = text_index.live()
    model: dict[str, float] = {}
    for item_id, score in first:
        terms = counts.get(item_id)
        if not terms:
            continue
        weight = math.exp(score - top)
        size = sum(terms.values())
        for term, n in terms.items():
            model[term] = model.get(term, 0.0) + weight * n / size
    words = sorted(((v * live.idf("body", t), t) for t, v in model.items()),
                   key=lambda x: (-x[0], x[1]))[:TERMS]
    total = sum(v for v, _ in words)
    if total <= 0:
        return None
    out: dict[str, float] = {t: float(n) for t, n in query.items()}
    for v, t in words:
        out[t] = out.get(t, 0.0) + MASS * v / total
    return out
