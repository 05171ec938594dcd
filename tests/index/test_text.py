"""The full-text index: code-aware analysis, user text that never reaches the query parser."""
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
