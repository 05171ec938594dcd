import re

from stele import ids
from stele.kinds import KINDS


def test_new_ids_have_the_kind_prefix_and_crockford_suffix():
    for kind in KINDS:
        fid = ids.new_id(kind)
        assert ids.is_fact_id(fid)
        assert fid.startswith(KINDS[kind].prefix + "-")
        assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{4}", fid.split("-")[1])


def test_collisions_are_redrawn():
    taken = {f"DEC-{a}{b}{c}{d}" for a in "0123" for b in ids.CROCKFORD for c in ids.CROCKFORD
             for d in ids.CROCKFORD}
    fid = ids.new_id("decision", taken)
    assert fid not in taken


def test_mentions_in_text():
    text = "see TASK-418 and RISK-2M9Q, not XTASK-418 or TASK-418x; again TASK-418. S-01JD3KX0000000000000000000"
    assert ids.mentioned_ids(text) == ["TASK-418", "RISK-2M9Q", "S-01JD3KX0000000000000000000"]


def test_ids_reject_unknown_prefixes_and_bad_characters():
    assert not ids.is_fact_id("FOO-1234")
    assert not ids.is_fact_id("DEC-IL0U")  # I, L, U are not Crockford
    assert ids.is_fact_id("TASK-418")


def test_an_id_is_bounded_in_length_named_alone_or_in_text():
    longest = "TASK-" + "A" * ids.MAX_SUFFIX
    assert ids.is_fact_id(longest) and not ids.is_fact_id(longest + "A")
    assert ids.mentioned_ids(f"see {longest} and {longest}A.") == [longest]


def test_ulids_sort_by_time():
    a, b = ids.ulid(1_000.0), ids.ulid(2_000.0)
    assert len(a) == 26 and a < b
    assert ids.session_entry_id().startswith("S-")


def test_a_derived_id_depends_only_on_its_seed_and_steps_past_taken_ids():
    from stele.ids import derived_id, is_fact_id

    first = derived_id("decision", "docs/adr/1.md#L1-L9\nUse X")
    assert first == derived_id("decision", "docs/adr/1.md#L1-L9\nUse X") and is_fact_id(first)
    assert first.startswith("DEC-") and first != derived_id("decision", "docs/adr/2.md#L1-L9\nUse Y")
    second = derived_id("decision", "docs/adr/1.md#L1-L9\nUse X", {first})
    assert second != first and is_fact_id(second)
