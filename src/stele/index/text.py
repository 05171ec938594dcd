"""The full-text half of the index: the one module that imports tantivy.

Shaped by what tantivy 0.27 does and does not do (DESIGN.md section 9):
- Custom tokenizers are not stored in the index, so `open()` registers ours after every open.
- The query parser rejects raw user text (`TS2769: No overload`), so user text never reaches it: the
  query is analyzed with the same analyzer as the documents and built from term queries.
- One writer per index: `Writer` is only used under the index lock held by `build.py`.

The code-aware analysis: tokens are `\\w+` runs (so `processed_events_pkey`, `TS2769` and `psycopg2`
stay whole and match exactly), lowercased and English-stemmed; compound identifiers are also indexed
by their parts (`UniqueViolation` -> unique, violation; `_mark_processed` -> mark, processed), on both
sides, so a pasted identifier and a prose description of it meet.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from .items import Item

TOKENIZER = "stele_code"
SEARCH_FIELDS = ("title", "body", "tags", "anchors")
# Words worth splitting: snake_case, camelCase, ACRONYMWords. Everything else is left to the tokenizer.
# Words are found first (`\w+` cannot backtrack), then tested: a pattern that looks for the marks and
# the word around them in one go (`\w*(?:_|...)\w*`) retries from every position of a run of word
# characters, quadratic in its length (10 KB of hex took 13 s). Words longer than WORD_MAX are not
# split: their parts would be words themselves, while such a run is a hash or a blob.
_WORD = re.compile(r"\w+")
_MARKS = re.compile(r"_|[a-z][A-Z]|[A-Z][A-Z][a-z]")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
WORD_MAX = 256


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


def _analyzer():
    import tantivy

    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\w+"))
            .filter(tantivy.Filter.remove_long(64))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stopword("english"))
            .filter(tantivy.Filter.stemmer("english"))
            .build())


def _schema():
    import tantivy

    b = tantivy.SchemaBuilder()
    for name in ("id", "kind", "status", "source"):
        # raw: one exact term, so delete-by-term and kind filters work
        b.add_text_field(name, stored=name == "id", tokenizer_name="raw")
    for name in SEARCH_FIELDS:
        b.add_text_field(name, tokenizer_name=TOKENIZER)
    return b.build()


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
        self.analyzer = _analyzer()
        self.index.register_tokenizer(TOKENIZER, self.analyzer)
        self.schema = self.index.schema

    def terms(self, text: str) -> list[str]:
        return self.analyzer.analyze(expand(text))

    def search(self, text: str, limit: int, boosts: dict[str, float], kinds: Sequence[str] = ()
               ) -> list[tuple[str, float]]:
        """BM25 over the search fields (each term weighted by its field's boost), only `kinds` when
        given: (id, score), best first."""
        import tantivy

        counts = Counter(self.terms(text))
        if not counts:
            return []
        Q, Occur = tantivy.Query, tantivy.Occur
        should = []
        for field in SEARCH_FIELDS:
            boost = boosts.get(field, 1.0)
            if boost <= 0:
                continue
            for term, n in counts.items():
                query = Q.term_query(self.schema, field, term, index_option="freq")
                should.append((Occur.Should, Q.boost_query(query, boost * n)))
        query = Q.boolean_query(should)
        if kinds:
            query = Q.boolean_query([(Occur.Must, query), (Occur.Must, Q.boolean_query(
                [(Occur.Should, Q.term_query(self.schema, "kind", k)) for k in kinds]))])
        searcher = self.index.searcher()
        hits = searcher.search(query, limit=limit, count=False).hits
        return [(searcher.doc(addr)["id"][0], float(score)) for score, addr in hits]

    def ceiling(self, text: str, boosts: dict[str, float]) -> float:
        """Roughly the best BM25 score a document could get for `text`: per query term, its highest
        boost x IDF over the fields (term frequency saturation taken as 1). The top hit's share of it
        says how much of the query full text actually matched."""
        import math

        searcher = self.index.searcher()
        n = searcher.num_docs
        total = 0.0
        for term, count in Counter(self.terms(text)).items():
            best = 0.0
            for field in SEARCH_FIELDS:
                boost = boosts.get(field, 1.0)
                df = searcher.doc_freq(field, term) if boost > 0 else 0
                if df:
                    best = max(best, boost * math.log(1 + (n - df + 0.5) / (df + 0.5)))
            total += count * best
        return total

    def writer(self) -> Writer:
        return Writer(self)


class Writer:
    """Batched changes, applied by `commit()`; the caller holds the index lock."""

    def __init__(self, text: TextIndex) -> None:
        self.text = text
        self.w = text.index.writer(heap_size=50_000_000, num_threads=1)

    def delete(self, item_id: str) -> None:
        self.w.delete_documents_by_term("id", item_id)

    def add(self, item: Item) -> None:
        import tantivy

        self.w.add_document(tantivy.Document(
            id=item.id, kind=item.kind, status=item.status, source=item.source, title=expand(item.title),
            body=expand(item.text),
            # people name facts by kind ("the checkout objective"): the kind is searchable with the tags
            tags=" ".join([item.kind, *item.tags]), anchors=expand(" ".join(item.anchors))))

    def commit(self) -> None:
        self.w.commit()
        self.w.wait_merging_threads()
        self.text.index.reload()
