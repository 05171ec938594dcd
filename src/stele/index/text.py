"""The full-text half of the index: the one module that imports tantivy.

Shaped by what tantivy 0.27 does and does not do (DESIGN.md section 9):
- Custom tokenizers are not stored in the index, so `open()` registers ours after every open.
- The query parser rejects raw user text (`TS2769: No overload`), so user text never reaches it: the
  query is analyzed with the same analyzer as the documents and built from term queries.
- One writer per index: `Writer` is only used under the index lock held by `build.py`.
- No merge policy can be set, and merges run in threads after a commit. A merge that finishes while
  the writer is alive is published; one still running when the writer is dropped without
  `wait_merging_threads()` is abandoned (tantivy's segment updater is killed; nothing half-merged is
  published). So a hook commits without waiting (`commit(merge=False)`: a merge that rewrites the
  10,000-document segment costs ~150 ms), and how many segments its commits leave depends on thread
  timing; the background builder calls `merge()`, an empty commit that waits for the LogMergePolicy
  to merge what the hooks left, once there are MERGE_AT segments. What is guaranteed: hooks never wait
  for a merge, and after the builder fewer than MERGE_AT segments remain.

The code-aware analysis: tokens are `\\w+` runs (so `processed_events_pkey`, `TS2769` and `psycopg2`
stay whole and match exactly), lowercased and English-stemmed; compound identifiers are also indexed
by their parts (`UniqueViolation` -> unique, violation; `_mark_processed` -> mark, processed), on both
sides, so a pasted identifier and a prose description of it meet.

Scores do not depend on the index's history. tantivy counts a deleted document in its BM25 statistics
(documents, document frequencies, average field lengths) until a merge purges it, and tantivy-py cannot
ask for that merge, so an index that saw facts come and go ranked differently from a fresh build of the
same record. So tantivy only finds the candidates (`CANDIDATES` times what was asked for), and `search`
scores them again with BM25 over the live documents alone, exactly as tantivy would on a fresh index:
N is the live count, each term's document frequency a count query (deleted documents are not counted;
tantivy's own when the index holds none, which the `EVERY` field tells), the average field lengths
sums over live documents of the lengths kept in fast fields, and a candidate's term frequencies and
length come from its analyzed fields, stored as their terms (the analysis runs once, in `Writer.add`;
tantivy indexes the terms by whitespace). Ties go by id. `rarity` and `ceiling` read the same live
statistics (`TextIndex.live`, kept while the index stays as it is).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from ..lazyre import lazy
from .items import Item

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TOKENIZER = "stele_terms"  # the search fields hold analyzed terms (`Writer.add`): tantivy splits them by whitespace
SEARCH_FIELDS = ("title", "body", "tags", "anchors")
LENGTH = {f: f"len_{f}" for f in SEARCH_FIELDS}  # fast fields: each field's length in terms, for the live averages
EVERY = "every"  # a raw field holding "1" in every document: its document frequency counts deleted ones too
CANDIDATES = 2  # tantivy finds this many times the hits asked for, which `search` scores again...
CANDIDATES_MIN = 50  # ...and at least this many, so its history-bound ranking cannot decide the top
K1, B = 1.2, 0.75  # tantivy's BM25 parameters
# Words that say nothing about what a prompt is about (the Snowball project's English stop list, plus
# the pieces `\w+` leaves of its contractions). The analyzer keeps most of them, which suits BM25
# (their IDF is small where they are common); but in a record that never says "why" or "should", a
# question word would weigh as much as the rarest term when judging how much of a prompt a hit covers.
FUNCTION_WORDS = frozenset(["i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "would", "should", "could", "ought", "a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very", "can", "will", "just", "cannot", "let", "s", "t", "d", "ll", "m", "re", "ve", "isn", "aren", "wasn", "weren", "hasn", "haven", "hadn", "doesn", "don", "didn", "won", "wouldn", "shan", "shouldn", "couldn", "mustn"])
# Words worth splitting: snake_case, camelCase, ACRONYMWords. Everything else is left to the tokenizer.
# Words are found first (`\w+` cannot backtrack), then tested: a pattern that looks for the marks and
# the word around them in one go (`\w*(?:_|...)\w*`) retries from every position of a run of word
# characters, quadratic in its length (10 KB of hex took 13 s). Words longer than WORD_MAX are not
# split: their parts would be words themselves, while such a run is a hash or a blob.
_WORD = re.compile(r"\w+")
_MARKS = re.compile(r"_|[a-z][A-Z]|[A-Z][A-Z][a-z]")
_CAMEL = lazy(r"[a-z][A-Z]|[A-Z][A-Z][a-z]")
_CAMEL_PART = lazy(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
WORD_MAX = 256
MERGE_AT = 8  # tantivy's LogMergePolicy merges a level of segments once it holds 8 (min_num_segments)
KEPT_DOCS = 5_000  # stored documents a snapshot keeps read (`Live.docs`; a prompt reads ~200-400)...
KEPT_QUERIES = 64  # ...and queries it keeps the scores of (`Live.scores`; a prompt asks one or two)
RARITY_MIN_ITEMS = 100  # `rarity` treats a smaller record as this large (the rest holding none of the words)


def expand(text: str) -> str:
    """`text` followed by the parts of its compound identifiers (the parts only, once each). Linear in
    the length of `text`."""
    parts: dict[str, None] = {}
    for word in _WORD.findall(text):
        if len(word) > WORD_MAX or not _MARKS.search(word):
            continue
        for piece in word.split("_"):
            if not piece:
                continue
            if _CAMEL.search(piece):
                for sub in _CAMEL_PART.findall(piece):
                    parts.setdefault(sub, None)
            elif piece != word:
                parts.setdefault(piece, None)
    return f"{text}\n{' '.join(parts)}" if parts else text


@cache
def _analyzer():
    """Built once per process (a hook opens the text index up to three times: the freshness check,
    the refresh, the read); tantivy copies what it registers."""
    import tantivy

    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\w+"))
            .filter(tantivy.Filter.remove_long(64))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stopword("english"))
            .filter(tantivy.Filter.stemmer("english"))
            .build())


@cache
def _splitter():
    import tantivy

    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def _schema():
    import tantivy

    b = tantivy.SchemaBuilder()
    for name in ("id", "kind", "status", "source", EVERY):
        # raw: one exact term, so delete-by-term and kind filters work
        b.add_text_field(name, stored=name == "id", tokenizer_name="raw")
    for name in SEARCH_FIELDS:
        b.add_text_field(name, stored=True, tokenizer_name=TOKENIZER)
        b.add_integer_field(LENGTH[name], fast=True)
    return b.build()


def fieldnorm(length: int) -> int:
    """The field length tantivy scores a document by: stored on one byte, exact below 24 and rounded down
    to 4 significant bits above (Lucene's `SmallFloat.intToByte4`, which tantivy's table follows)."""
    if length < 24:
        return length
    rest = length - 24
    shift = rest.bit_length() - 4
    if shift < 0:
        return length
    return 24 + ((rest >> shift) << shift)


class Live:
    """BM25 statistics of the live documents of one searcher (a snapshot of the index): deleted
    documents are in none of them (tantivy's own keep them until a merge). A term's document frequency
    is tantivy's when the index holds no deleted document or no document at all holds the term, else
    a count query (~0.1 ms), asked once; the average field lengths are sums of the `LENGTH` fast fields.
    What the snapshot's searches read and scored is kept with it too (`docs`, `scores`; issue 34): a
    prompt's searches and its coverage ask about the same ~200 candidates."""

    def __init__(self, text: TextIndex, searcher: Any, key: tuple[int, int, int]) -> None:
        self.text = text
        self.searcher = searcher
        self.key = key  # (live documents, segments, documents deleted ones included)
        self.n = key[0]
        self._df: dict[tuple[str, str], int] = {}
        self._avg: dict[str, float] | None = None
        # the stored documents read so far, by address, and their search fields by id (`docs`)
        self._docs: dict[tuple[int, int], tuple[str, tuple[str, ...]]] = {}
        self.fields: dict[str, tuple[str, ...]] = {}
        self.scores: dict[tuple, dict[tuple[int, int], float]] = {}  # by query: each candidate's score (`search`)

    def docs(self, addresses: Sequence[Any]) -> list[tuple[str, tuple[str, ...]]]:
        """(id, its `SEARCH_FIELDS` as stored) of each document at `addresses`, each read from the store
        once per snapshot: a prompt's searches draw mostly the same candidates, and `holders` answers
        from what they read (a stored document costs ~7 us to read and convert, ~200 a search)."""
        if len(self._docs) > KEPT_DOCS:  # a long-lived reader of an unchanged index: start again
            self._docs.clear()
            self.fields.clear()
            self.scores.clear()
        out = []
        for a in addresses:
            key = (a.segment_ord, a.doc)
            got = self._docs.get(key)
            if got is None:
                doc = self.searcher.doc(a)
                got = (doc.get_first("id"), tuple(doc.get_first(f) or "" for f in SEARCH_FIELDS))
                self._docs[key] = got
                self.fields[got[0]] = got[1]
            out.append(got)
        return out

    def df(self, field: str, term: str) -> int:
        key = (field, term)
        if key not in self._df:
            df = int(self.searcher.doc_freq(field, term))  # deleted documents included
            if df and self.key[2] != self.n:
                import tantivy

                found = self.searcher.search(tantivy.Query.term_query(self.text.schema, field, term),
                                             limit=1, count=True)
                df = int(found.count or 0)
            self._df[key] = df
        return self._df[key]

    def idf(self, field: str, term: str) -> float:
        """tantivy's IDF over the live documents (0 when no live document holds the term)."""
        import math

        df = self.df(field, term)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5)) if df else 0.0

    def average(self, field: str) -> float:
        if self._avg is None:
            import tantivy

            sums = self.searcher.aggregate(tantivy.Query.all_query(),
                                           {f: {"sum": {"field": LENGTH[f]}} for f in SEARCH_FIELDS})
            self._avg = {f: float(sums.get(f, {}).get("value") or 0.0) / self.n if self.n else 0.0
                         for f in SEARCH_FIELDS}
        return self._avg[field]


class TextIndex:
    """An open tantivy index at `path`."""

    def __init__(self, path: Path, create: bool = False) -> None:
        import tantivy

        self.path = path
        if create:
            path.mkdir(parents=True, exist_ok=True)
            self.index = tantivy.Index(_schema(), path=str(path), reuse=False)
        else:
            if not (path / "meta.json").is_file():
                raise FileNotFoundError(f"no text index at {path}")
            self.index = tantivy.Index.open(str(path))
        self.analyzer = _analyzer()  # what documents and queries are analyzed with, in Python
        self.index.register_tokenizer(TOKENIZER, _splitter())
        self.schema = self.index.schema
        self._function: frozenset[str] | None = None
        self._live: Live | None = None

    def live(self) -> Live:
        """The live statistics of the index as it stands, kept while it stays so: a read asks search,
        ceiling and rarity about the same terms."""
        searcher = self.index.searcher()
        key = (int(searcher.num_docs), int(searcher.num_segments), int(searcher.doc_freq(EVERY, "1")))
        if self._live is None or self._live.key != key:
            self._live = Live(self, searcher, key)
        return self._live

    def terms(self, text: str) -> list[str]:
        return self.analyzer.analyze(expand(text))

    def content_words(self, text: str) -> list[tuple[str, ...]]:
        """The distinct words of `text` that can say what it is about (function words left out), each
        as the terms that stand for it: its own term, then for a compound identifier the terms of its
        parts (`processed_events` -> processed_events, processed, events). A document holds the word
        when it holds the term or every part: documents are indexed with their parts, so `OpenSearch`
        in a prompt meets `open search` in a fact, and counts as one word of the prompt, not three."""
        if self._function is None:
            self._function = frozenset(t for w in FUNCTION_WORDS for t in self.analyzer.analyze(w))
        out: dict[str, tuple[str, ...]] = {}
        for word in dict.fromkeys(_WORD.findall(text)):
            own = [t for t in self.analyzer.analyze(word) if t not in self._function]
            if not own or own[0] in out:
                continue
            parts = [t for t in self.analyzer.analyze(expand(word))[len(own):] if t not in self._function]
            out[own[0]] = tuple(dict.fromkeys([own[0], *parts]))
        return list(out.values())

    def holders(self, terms: Sequence[str], ids: Sequence[str]) -> dict[str, set[str]]:
        """Which of the items `ids` hold each of `terms` in any search field (what BM25 matched, title,
        body, tags and anchors alike). An item whose document a search of this snapshot has read
        (`Live.docs`: most of them, a prompt's hits) is answered from its stored fields, which hold
        exactly the terms tantivy indexed, each between two spaces of its own; the others by one query
        per term over those items only."""
        import tantivy

        live = self.live()
        known = live.fields
        out: dict[str, set[str]] = {term: set() for term in terms}
        read = [i for i in dict.fromkeys(ids) if i in known]
        rest = [i for i in dict.fromkeys(ids) if i not in known]
        for term in terms:
            pattern = f" {term} "
            out[term].update(i for i in read if any(pattern in text for text in known[i]))
        if not rest:
            return out
        Q, Occur = tantivy.Query, tantivy.Occur
        searcher = live.searcher
        only = Q.term_set_query(self.schema, "id", rest)
        found = [a for _, a in searcher.search(only, limit=max(1, len(rest)), count=False).hits]
        at = {(a.segment_ord, a.doc): got[0] for a, got in zip(found, live.docs(found), strict=True)}
        for term in terms:
            anywhere = Q.boolean_query([(Occur.Should, Q.term_query(self.schema, f, term)) for f in SEARCH_FIELDS])
            query = Q.boolean_query([(Occur.Must, anywhere), (Occur.Must, only)])
            hits = searcher.search(query, limit=max(1, len(at)), count=False).hits
            out[term].update(at[(a.segment_ord, a.doc)] for _, a in hits if (a.segment_ord, a.doc) in at)
        return out

    def rarity(self, terms: Sequence[str]) -> dict[str, tuple[float, int]]:
        """Each term's IDF over the whole index, and its document frequency (the most of any field). Rare
        words say most about what a prompt is about, and a word no item holds weighs most of all: it
        says the prompt is about something the record does not know. The count of items is taken as at
        least RARITY_MIN_ITEMS: in a record of three facts every word is rare, and raw IDF would weigh a
        word the record lacks twice one it holds, so a fact's own question would not cover it."""
        import math

        live = self.live()
        n = max(live.n, RARITY_MIN_ITEMS)
        out = {}
        for term in dict.fromkeys(terms):
            df = max(live.df(field, term) for field in SEARCH_FIELDS)
            out[term] = (math.log(1 + (n - df + 0.5) / (df + 0.5)), df)
        return out

    def holding(self, name: str, limit: int) -> list[str]:
        """Ids of up to `limit` items that hold every term of `name` (an identifier: `render_pdf`,
        `Cart.total`) in some search field, by id."""
        import tantivy

        terms = list(dict.fromkeys(self.analyzer.analyze(name)))
        if not terms:
            return []
        Q, Occur = tantivy.Query, tantivy.Occur
        must = [(Occur.Must, Q.boolean_query([(Occur.Should, Q.term_query(self.schema, f, t)) for f in SEARCH_FIELDS]))
                for t in terms]
        searcher = self.index.searcher()
        hits = searcher.search(Q.boolean_query(must), limit=limit, count=False).hits
        return sorted(searcher.doc(a)["id"][0] for _, a in hits)

    @staticmethod
    def _score(found: list[Any], docs: list[tuple[str, tuple[str, ...]]], counts: dict[str, float], fields: list[str],
               boosts: dict[str, float], live: Live) -> list[float]:
        """The BM25 score of each candidate (at `found`, read as `docs`) for the query's term `counts`."""
        from bisect import bisect_right

        scores = [0.0] * len(found)
        for f in fields:  # one field at a time, each term summed in the query's order: the same floats every time
            # (" term ", its weight): the stored field is " t1  t2 ", so each occurrence is found whole
            weights = [(f" {t} ", boosts.get(f, 1.0) * n * live.idf(f, t) * (1 + K1)) for t, n in counts.items()]
            weights = [(pattern, w) for pattern, w in weights if w > 0]
            if not weights:
                continue
            average = live.average(f) or 1.0
            lengths = live.searcher.fast_field_values(LENGTH[f], found)
            # every candidate's field in one string: a term is looked for once, each occurrence counted
            # for the candidate it falls in (the work goes with the occurrences, not candidates x terms)
            col = SEARCH_FIELDS.index(f)
            texts = [doc[1][col] for doc in docs]
            starts, at = [], 0
            for text in texts:
                starts.append(at)
                at += len(text) + 1
            joined = "\n".join(texts)
            for pattern, w in weights:
                tf: dict[int, int] = {}
                pos = joined.find(pattern)
                while pos >= 0:
                    n = bisect_right(starts, pos) - 1
                    tf[n] = tf.get(n, 0) + 1
                    pos = joined.find(pattern, pos + len(pattern))
                for n, c in tf.items():
                    scores[n] += w * c / (c + K1 * (1 - B + B * fieldnorm(int(lengths[n] or 0)) / average))
        return scores

    def search(self, text: str, limit: int, boosts: dict[str, float], kinds: Sequence[str] = (),
               source: str | None = None, weighted: dict[str, float] | None = None) -> list[tuple[str, float]]:
        """BM25 over the search fields (each term weighted by its field's boost, and by how often the
        query says it), only `kinds` and only items of `source` (committed, session) when given: (id,
        score), best first, ties by id. tantivy finds the candidates; their scores are tantivy's formula
        over the live documents (`Live`). `weighted` (analyzed term -> weight) replaces the terms of
        `text` and how often it says each (`retrieve.feedback` adds words of its own)."""
        import tantivy

        counts = dict(weighted) if weighted is not None else {t: float(n) for t, n in Counter(self.terms(text)).items()}
        fields = [f for f in SEARCH_FIELDS if boosts.get(f, 1.0) > 0]
        if not counts or not fields or limit <= 0:
            return []
        Q, Occur = tantivy.Query, tantivy.Occur
        query = Q.boolean_query([(Occur.Should, Q.term_query(self.schema, f, t)) for f in fields for t in counts])
        if kinds:  # a filter, not a term: it adds nothing to the score
            query = Q.boolean_query([(Occur.Must, query), (Occur.Must, Q.const_score_query(Q.boolean_query(
                [(Occur.Should, Q.term_query(self.schema, "kind", k)) for k in kinds]), 0.0))])
        if source:  # likewise
            query = Q.boolean_query([(Occur.Must, query), (Occur.Must, Q.const_score_query(
                Q.term_query(self.schema, "source", source), 0.0))])
        live = self.live()
        found = [a for _, a in live.searcher.search(query, limit=max(CANDIDATES * limit, CANDIDATES_MIN),
                                                      count=False).hits]
        docs = live.docs(found)
        # a candidate's score depends on it, the query and the snapshot only: one a search of the same
        # query scored (a prompt's pool, then its committed facts apart) is not scored again
        if len(live.scores) > KEPT_QUERIES:
            live.scores.clear()
        known = live.scores.setdefault((tuple(counts.items()), tuple((f, boosts.get(f, 1.0)) for f in fields)), {})
        todo = [n for n, a in enumerate(found) if (a.segment_ord, a.doc) not in known]
        if todo:
            fresh = self._score([found[n] for n in todo], [docs[n] for n in todo], counts, fields, boosts, live)
            for n, score in zip(todo, fresh, strict=True):
                known[(found[n].segment_ord, found[n].doc)] = score
        scores = [known[(a.segment_ord, a.doc)] for a in found]
        scored = sorted(((doc[0], score) for doc, score in zip(docs, scores, strict=True)),
                        key=lambda x: (-x[1], x[0]))
        return scored[:limit]

    def term_counts(self, ids: Sequence[str], fields: Sequence[str] = ("title", "body")) -> dict[str, Counter[str]]:
        """Each of `ids`' analyzed terms and how often it holds them, over `fields` (of `SEARCH_FIELDS`)
        together (what `retrieve.feedback` learns from); ids not in the index are left out. Read from the
        snapshot's documents (`Live.docs`: a search of it has usually read them already)."""
        import tantivy

        live = self.live()
        have = {i: live.fields[i] for i in ids if i in live.fields}
        rest = [i for i in dict.fromkeys(ids) if i not in have]
        if rest:
            only = tantivy.Query.term_set_query(self.schema, "id", rest)
            have.update(live.docs([a for _, a in live.searcher.search(only, limit=len(rest), count=False).hits]))
        cols = [SEARCH_FIELDS.index(f) for f in fields]
        return {i: Counter(t for c in cols for t in have[i][c].split()) for i in ids if i in have}

    def ceiling(self, text: str, boosts: dict[str, float]) -> float:
        """Roughly the best BM25 score a document could get for `text`: per query term, its highest
        boost x IDF over the fields (term frequency saturation taken as 1). The top hit's share of it
        says how much of the query full text actually matched."""
        live = self.live()
        total = 0.0
        for term, count in Counter(self.terms(text)).items():
            best = 0.0
            for field in SEARCH_FIELDS:
                boost = boosts.get(field, 1.0)
                if boost > 0:
                    best = max(best, boost * live.idf(field, term))
            total += count * best
        return total

    def writer(self) -> Writer:
        return Writer(self)

    def segments(self) -> int:
        return int(self.index.searcher().num_segments)

    def merge(self) -> None:
        """Let tantivy merge the segments commits left unmerged (`Writer.commit(merge=False)`)."""
        self.writer().commit()


class Writer:
    """Batched changes, applied by `commit()`; the caller holds the index lock."""

    def __init__(self, text: TextIndex) -> None:
        self.text = text
        self.w = text.index.writer(heap_size=50_000_000, num_threads=1)

    def delete(self, item_id: str) -> None:
        self.w.delete_documents_by_term("id", item_id)

    def add(self, item: Item) -> None:
        """Index `item`: each search field as its analyzed terms (tantivy splits them by whitespace, and
        `search` counts them), with its length in terms."""
        import tantivy

        texts = {"title": expand(item.title), "body": expand(item.text),
                 # people name facts by kind ("the checkout objective"): the kind is searchable with the tags
                 "tags": " ".join([item.kind, *item.tags]), "anchors": expand(" ".join(item.anchors))}
        doc: dict[str, object] = {"id": item.id, "kind": item.kind, "status": item.status, "source": item.source,
                                  EVERY: "1"}
        for field, text in texts.items():
            terms = self.text.analyzer.analyze(text)
            doc[field] = f" {'  '.join(terms)} " if terms else ""  # each term between two spaces of its own
            doc[LENGTH[field]] = len(terms)
        self.w.add_document(tantivy.Document(**doc))

    def commit(self, merge: bool = True) -> None:
        """Publish the changes; with `merge`, wait for the merges the commit starts (else they are
        abandoned when the writer goes, and the segments stay until someone merges)."""
        self.w.commit()
        if merge:
            self.w.wait_merging_threads()
        del self.w  # done either way: dropping it releases tantivy's writer lock
        self.text.index.reload()
