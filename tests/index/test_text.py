"""The full-text index: code-aware analysis, user text that never reaches the query parser."""
import pytest

from stele.index import text as text_mod
from stele.index.items import Item
from stele.index.text import TextIndex, expand

BOOSTS = {"title": 0.5, "body": 1.0, "tags": 1.0, "anchors": 0.5}


def item(i, title, body="", kind="lesson", tags=(), anchors=()):
    return Item(i, "committed", kind, title, body, f"docs/memory/{i}.md", tags=list(tags),
                anchors=list(anchors))


def test_compound_identifiers_are_also_indexed_by_their_parts():
    assert expand("psycopg2.errors.UniqueViolation on processed_events_pkey") == (
        "psycopg2.errors.UniqueViolation on processed_events_pkey\nUnique Violation processed events pkey")
    assert expand("TS2769 and plain words") == "TS2769 and plain words"
    assert expand("APIConnectionError") == "APIConnectionError\nAPI Connection Error"


def index_of(tmp_path, *items):
    text = TextIndex(tmp_path / "text", create=True)
    w = text.writer()
    for it in items:
        w.add(it)
    w.commit()
    return TextIndex(tmp_path / "text")  # reopened: the tokenizer is registered again


def test_pasted_errors_and_identifiers_match_exactly(tmp_path):
    text = index_of(tmp_path,
                    item("LSN-1", "Regenerated types break the SDK build",
                         "tsc fails with TS2769: No overload matches this call."),
                    item("LSN-2", "Unique violations on processed events are expected",
                         'duplicate key value violates unique constraint "processed_events_pkey"'),
                    item("DEC-3", "Overloads are fine in handlers", "We use overloads for handlers.",
                         "decision"))
    assert text.search("TS2769: No overload matches this call", 5, BOOSTS)[0][0] == "LSN-1"
    assert text.search("psycopg2.errors.UniqueViolation: processed_events_pkey", 5, BOOSTS)[0][0] == "LSN-2"
    assert text.search("unique violation", 5, BOOSTS)[0][0] == "LSN-2"


def test_any_user_text_is_a_valid_query(tmp_path):
    text = index_of(tmp_path, item("NOTE-1", "A note", "text"))
    for q in ('title:"x" AND (', "-- -- ***", "a:b:c [1 TO", "\\", "", "🙂", 'field:"unterminated'):
        assert isinstance(text.search(q, 5, BOOSTS), list)


def test_kind_filter_and_delete_by_id(tmp_path):
    text = index_of(tmp_path, item("DEC-1", "Retry with backoff", kind="decision"),
                    item("LSN-1", "Retry storms hurt", kind="lesson"))
    assert [i for i, _ in text.search("retry", 5, BOOSTS, kinds=["lesson"])] == ["LSN-1"]
    w = text.writer()
    w.delete("LSN-1")
    w.commit()
    assert [i for i, _ in text.search("retry", 5, BOOSTS)] == ["DEC-1"]


def test_the_kind_is_searchable_and_the_ceiling_bounds_the_best_score(tmp_path):
    text = index_of(tmp_path, item("OBJ-1", "Checkout p95 below 400 ms", kind="objective"),
                    item("TASK-1", "Cache tax rates", kind="task"))
    hits = text.search("the checkout objective", 5, BOOSTS)
    assert hits[0][0] == "OBJ-1"
    assert 0 < hits[0][1] <= text.ceiling("the checkout objective", BOOSTS) * 1.5
    assert text.ceiling("zzz-unknown-word", BOOSTS) == 0.0


ADVERSARIAL = [
    "a" * 40_000,                                    # one long run of word characters
    "0123456789abcdef" * 2_500,                      # 40 KB of hex
    "A" * 40_000,                                    # a long run of capitals (the camel-case parts)
    "aB" * 20_000,                                   # a camel-case word 40 KB long
    "x_" * 20_000,                                   # a snake-case word 40 KB long
    ("processed_events_pkey " * 2_000) + "Z" * 30_000,
]


def test_long_runs_of_word_characters_cost_linear_time(tmp_path):
    """The splitting regex once backtracked on runs of word characters: 10 KB of hex took 13 s and
    40 KB 3.5 minutes of CPU, on the document side and the query side alike. Linear, these take
    milliseconds; the bound leaves a loaded machine two orders of magnitude of room."""
    import time

    text = index_of(tmp_path, *(item(f"NOTE-{n}", "A pasted blob", body) for n, body in enumerate(ADVERSARIAL)))
    t0 = time.process_time()
    for body in ADVERSARIAL:
        expand(body)
        text.search(body, 5, BOOSTS)
        text.ceiling(body, BOOSTS)
    assert time.process_time() - t0 < 5.0
    assert expand("x" * 300 + "_y") == "x" * 300 + "_y"  # too long to be an identifier: not split
    assert expand("short_one " + "q" * 300) == "short_one " + "q" * 300 + "\nshort one"


WORDS = ["registry", "token", "garbage", "blob", "sweep", "manifest", "layer", "cache", "build", "worker", "queue", "upload"]


def _items(n, seed, prefix="A"):
    import random

    rng = random.Random(seed)
    return [item(f"{prefix}-{i:03}", " ".join(rng.choices(WORDS, k=rng.randint(1, 8))),
                 " ".join(rng.choices(WORDS, k=rng.randint(1, 1500 if i % 9 == 0 else 90))), tags=rng.choices(WORDS, k=rng.randint(0, 2)),
                 anchors=["src/registry/gc.py::Sweeper.run"] if i % 3 else []) for i in range(n)]


def test_scores_are_tantivys_own_bm25_on_a_fresh_index(tmp_path):
    """`search` scores candidates again itself; on an index without deletes that is tantivy's BM25 to
    float32 rounding (the boosts, the query's repeated terms and the one-byte field lengths included)."""
    import tantivy

    text = index_of(tmp_path, *_items(200, 1))
    query = "registry garbage sweep sweep of the layer cache"
    Q, Occur = tantivy.Query, tantivy.Occur
    counts: dict[str, int] = {}
    for t in text.terms(query):
        counts[t] = counts.get(t, 0) + 1
    own = Q.boolean_query([(Occur.Should, Q.boost_query(Q.term_query(text.schema, f, t, index_option="freq"),
                                                        BOOSTS[f] * n)) for f in BOOSTS for t, n in counts.items()])
    searcher = text.index.searcher()
    theirs = {searcher.doc(a)["id"][0]: s for s, a in searcher.search(own, limit=200).hits}
    ours = dict(text.search(query, 200, BOOSTS))
    assert ours.keys() == theirs.keys() and len(ours) > 100
    assert all(abs(ours[i] - theirs[i]) <= 1e-5 * theirs[i] for i in ours)


def test_deleted_documents_weigh_in_no_statistic(tmp_path):
    """After documents were added and deleted (tantivy keeps them in its statistics until a merge),
    scores, ranks, rarity and the ceiling are those of an index that never held them."""
    live = _items(60, 2)
    fresh = index_of(tmp_path / "fresh", *live)
    churned = TextIndex(tmp_path / "churned" / "text", create=True)
    w = churned.writer()
    for it in live[:30] + _items(40, 3, prefix="B") + live[30:]:
        w.add(it)
    w.commit(merge=False)
    w = churned.writer()
    for it in _items(40, 3, prefix="B") + live[:5]:
        w.delete(it.id)
    for it in live[:5]:  # edited and put back: deleted and added again
        w.add(it)
    w.commit(merge=False)
    assert churned.index.searcher().num_docs == 60
    for query in ["registry token", "garbage sweep of blobs by the worker queue", "cache", "upload upload layer"]:
        before, after = fresh.search(query, 20, BOOSTS), churned.search(query, 20, BOOSTS)
        assert [i for i, _ in after] == [i for i, _ in before]
        assert [round(s, 9) for _, s in after] == [round(s, 9) for _, s in before]
        assert churned.ceiling(query, BOOSTS) == fresh.ceiling(query, BOOSTS)
        assert churned.rarity(fresh.terms(query)) == fresh.rarity(fresh.terms(query))


def test_ties_go_by_id(tmp_path):
    twins = [item(f"DEC-{c}", "the registry sweeps blobs", "the registry sweeps blobs") for c in "QBXA"]
    text = TextIndex(tmp_path / "text", create=True)
    for twin in twins:  # one commit each: four segments, in an order that is not the ids'
        w = text.writer()
        w.add(twin)
        w.commit(merge=False)
    assert [i for i, _ in text.search("registry sweeps", 3, BOOSTS)] == ["DEC-A", "DEC-B", "DEC-Q"]


def test_field_lengths_round_as_tantivys_one_byte_norms():
    from stele.index.text import fieldnorm

    assert [fieldnorm(n) for n in (0, 23, 24, 39, 40, 41, 42, 43, 100, 1000)] == [0, 23, 24, 39, 40, 40, 42, 42, 96, 984]


def _holders_by_query(text, terms, ids):
    """`holders` as it was before it read stored fields: one tantivy query per term over `ids`."""
    import tantivy

    Q, Occur = tantivy.Query, tantivy.Occur
    searcher = text.index.searcher()
    only = Q.term_set_query(text.schema, "id", list(ids))
    at = {(a.segment_ord, a.doc): searcher.doc(a)["id"][0]
          for _, a in searcher.search(only, limit=max(1, len(ids)), count=False).hits}
    out = {}
    for term in terms:
        anywhere = Q.boolean_query([(Occur.Should, Q.term_query(text.schema, f, term)) for f in BOOSTS])
        hits = searcher.search(Q.boolean_query([(Occur.Must, anywhere), (Occur.Must, only)]), limit=max(1, len(at)),
                               count=False).hits
        out[term] = {at[(a.segment_ord, a.doc)] for _, a in hits if (a.segment_ord, a.doc) in at}
    return out


def test_holders_from_the_documents_a_search_read_are_tantivys_own(tmp_path):
    """`holders` answers the items a search of the same snapshot read from their stored fields, the
    others by query: both give what tantivy's term queries give, in every field (compound parts,
    kind, anchors), for a term no item holds, an id no item has, and after a commit that edits an item
    (a new snapshot: nothing read before it answers)."""
    items = _items(120, 4) + [item("LSN-X", "Processed events", "UniqueViolation on processed_events_pkey",
                                   tags=["billing"], anchors=["src/pay/retry.py::Retrier.run"])]
    text = index_of(tmp_path, *items)
    ids = [it.id for it in items] + ["NOPE-1"]
    for query in ["registry garbage sweep", "unique violation retrier", "billing lesson cache"]:
        terms = [*dict.fromkeys(text.terms(query)), "retrier", "lesson", "zzzunheld"]
        text._live = None
        text.search(query, 20, BOOSTS)  # reads some of the documents: those are answered without a query
        assert 0 < len(text.live().fields) < len(items)
        assert text.holders(terms, ids) == _holders_by_query(text, terms, ids)
        assert text.holders(terms, ids) == _holders_by_query(text, terms, ids)  # all read now
    w = text.writer()  # LSN-X loses the words it held: what was read of it before must not answer
    w.delete("LSN-X")
    w.add(item("LSN-X", "Unrelated now", "nothing of that", kind="decision"))
    w.commit()
    terms = ["retrier", "billing", "violat", "unrel", "lesson", "decis"]
    text.search("unrelated decision", 20, BOOSTS)
    assert text.holders(terms, ids) == _holders_by_query(text, terms, ids)
    assert {t for t, who in text.holders(terms, ["LSN-X"]).items() if who} == {"unrel", "decis"}


@pytest.mark.parametrize("kept", [None, (10, 1)])
def test_a_search_scores_the_same_after_other_searches_of_the_snapshot(tmp_path, monkeypatch, kept):
    """`search` keeps each candidate's score by query (`Live.scores`) and its stored fields (`Live.docs`)
    for the snapshot: a search after others (another limit, a kind or source filter, other boosts,
    another query) gives exactly what it gives first, to the last bit."""
    items = _items(150, 5) + [Item(f"S-{i}", "session", "note", "registry sweep", "garbage of the cache",
                                   f".stele/sessions/s{i}.jsonl") for i in range(30)]
    text = index_of(tmp_path, *items)
    other = {**BOOSTS, "title": 2.0}
    calls = [("registry garbage sweep", 100, BOOSTS, (), None), ("registry garbage sweep", 100, BOOSTS, (), "committed"),
             ("registry garbage sweep", 10, BOOSTS, ("note",), None), ("registry garbage sweep", 30, other, (), None),
             ("cache layer upload", 100, BOOSTS, (), "committed"), ("registry garbage sweep", 5, BOOSTS, ("lesson",), None)]
    if kept:  # what a snapshot keeps is bounded: dropping it changes no answer
        monkeypatch.setattr(text_mod, "KEPT_DOCS", kept[0])
        monkeypatch.setattr(text_mod, "KEPT_QUERIES", kept[1])
    first = []
    for q, limit, boosts, kinds, source in calls:
        text._live = None  # a new snapshot: nothing kept
        first.append(text.search(q, limit, boosts, kinds=kinds, source=source))
    text._live = None
    for (q, limit, boosts, kinds, source), alone in zip(calls * 2, first * 2, strict=True):
        assert text.search(q, limit, boosts, kinds=kinds, source=source) == alone
    assert any(len(r) >= 10 for r in first) and (len(text.live().scores) <= 2 if kept else len(text.live().scores) == 3)
