from stele import plain
from stele.index.catalog import Node
from stele.retrieve.rank import ORIGIN_ANCHOR, ORIGIN_ID, ORIGIN_TEXT, Scored, Seed, cap, order, score_all
from stele.retrieve.settings import Settings
from stele.retrieve.walk import Via

S = Settings.defaults()


def node(i, kind, source="committed"):
    return Node(i, source, kind, f"title {i}", "current")


def test_seed_and_walked_scores_follow_the_documented_formula():
    nodes = {"DEC": node("DEC", "decision"), "LSN": node("LSN", "lesson"), "EPIC": node("EPIC", "epic"),
             "TASK": node("TASK", "task")}
    seeds = [Seed("DEC", 1.0, ORIGIN_TEXT), Seed("TASK", 0.5, ORIGIN_TEXT)]
    reached = {"LSN": [Via("DEC", "caused-by", 1, False, "DEC")],
               "EPIC": [Via("TASK", "blocks", 1, False, "TASK")]}
    scored = score_all(seeds, reached, nodes, S)
    m = S.seed_match
    assert scored["DEC"].score == 3 + m                         # kind + seed_match x strength
    assert scored["TASK"].score == 1 + m * 0.5
    assert scored["LSN"].score == 2 + 2 - 0.5 + 0.5 * m * 1.0    # kind + relation - hop + inherited match
    assert scored["EPIC"].score == -3 + 3 * 0.5 - 0.5 + 0.5 * m * 0.5  # both scaled by the seed's strength
    assert scored["LSN"].parts == {"kind": 2, "relation": 2, "hops": -0.5, "seed": 0.5 * m}
    assert scored["LSN"].via.from_id == "DEC" and scored["DEC"].via is None


def test_a_strong_match_outranks_a_weak_one_of_a_heavier_kind():
    """Match quality counts at least as much as kind: a note matching best beats a decision matching
    at a third of it (the match term spans twice the kind weights' range)."""
    nodes = {"DEC": node("DEC", "decision"), "NOTE": node("NOTE", "note")}
    scored = score_all([Seed("NOTE", 1.0, ORIGIN_TEXT), Seed("DEC", 0.34, ORIGIN_TEXT)], {}, nodes, S)
    assert [x.id for x in order(list(scored.values()))] == ["NOTE", "DEC"]
    assert scored["NOTE"].parts == {"kind": 1, "match": S.seed_match}


def test_containers_sink_below_the_child_that_blocks_them():
    nodes = {"TASK": node("TASK", "task"), "EPIC": node("EPIC", "epic")}
    reached = {"EPIC": [Via("TASK", "blocks", 1, True, "TASK")]}
    scored = score_all([Seed("TASK", 1.0, ORIGIN_TEXT)], reached, nodes, S)
    assert [x.id for x in order(list(scored.values()))] == ["TASK", "EPIC"]


def test_a_seed_reached_from_another_seed_keeps_via_null_at_its_better_score():
    nodes = {"EPIC": node("EPIC", "epic"), "TASK": node("TASK", "task")}
    seeds = [Seed("EPIC", 1.0, ORIGIN_ID), Seed("TASK", 0.1, ORIGIN_TEXT)]
    scored = score_all(seeds, {"TASK": [Via("EPIC", "blocks", 1, True, "EPIC")]}, nodes, S)
    assert scored["TASK"].via is None and scored["TASK"].score == 1 + 3 - 0.5 + S.walk_inherit * S.seed_match


def test_named_ids_come_first_and_session_entries_after_every_committed_fact():
    nodes = {"EPIC": node("EPIC", "epic"), "DEC": node("DEC", "decision"), "NOTE": node("NOTE", "note"),
             "S-1": node("S-1", "decision", "session")}
    seeds = [Seed("EPIC", 1.0, ORIGIN_ID), Seed("S-1", 1.0, ORIGIN_TEXT), Seed("DEC", 0.2, ORIGIN_TEXT),
             Seed("NOTE", 0.1, ORIGIN_TEXT)]
    scored = score_all(seeds, {}, nodes, plain.replace(S, session_penalty=0))
    assert [x.id for x in order(list(scored.values()))] == ["EPIC", "DEC", "NOTE", "S-1"]


def scored(i, score, source="committed"):
    return Scored(i, node(i, "note", source), score)


FULL = plain.replace(S, window_cut=0.0)  # the cap alone, nothing trimmed for relevance


def test_the_cap_keeps_room_for_callouts_and_session_slots():
    ranked = [scored(f"N{n}", 10 - n / 10) for n in range(30)]
    ranked += [scored(f"S-{n}", -1, "session") for n in range(6)]
    risks = [scored(f"R{n}", 1) for n in range(3)]
    w = cap(ranked, risks, FULL)
    assert len(w.risks) == 3 and len(w.risks) + len(w.entries) == 20
    assert [x.id for x in w.entries if x.id.startswith("S-")] == ["S-0", "S-1", "S-2", "S-3"]  # 4 slots
    assert [x.id for x in w.entries][:13] == [f"N{n}" for n in range(13)]
    assert {x.id for x in w.cut} == {f"N{n}" for n in range(13, 30)} | {"S-4", "S-5"}


def test_the_cap_is_never_above_twenty_and_callouts_are_capped():
    many = [scored(f"R{n}", 1) for n in range(9)]
    w = cap([scored(f"N{n}", 1) for n in range(40)], many, plain.replace(FULL, max_entries=20))
    assert len(w.risks) == S.max_callouts and len(w.risks) + len(w.entries) == 20


def test_unused_committed_room_goes_to_more_session_entries():
    w = cap([scored("N0", 5)] + [scored(f"S-{n}", 0, "session") for n in range(8)], [], FULL)
    assert len(w.entries) == 9


def test_entries_far_below_the_best_are_cut_so_the_window_is_not_padded():
    """The window is as large as relevance supports: under `window_cut` of the best score is cut
    (a session entry judged before its penalty), named ids never are, callouts are not entries."""
    named = Scored("DEC-OLD", node("DEC-OLD", "decision"), -2.0, seed=Seed("DEC-OLD", 1.0, ORIGIN_ID))
    ranked = [named, scored("A", 9.0), scored("B", 4.0), scored("C", 3.0), scored("S-1", 0.0, "session"),
              scored("S-2", -2.0, "session")]
    w = cap(ranked, [scored("R1", 0.5)], plain.replace(S, window_cut=0.4, session_penalty=4.0))
    assert [x.id for x in w.entries] == ["DEC-OLD", "A", "B", "S-1"]  # 3.0 < 0.4 x 9; S-2 merits 2
    assert [x.id for x in w.risks] == ["R1"] and {x.id for x in w.trimmed} == {"C", "S-2"} and not w.cut
    assert len(cap([scored(f"N{n}", 5.0) for n in range(30)], [], S).entries) == 20  # the cap still holds


def test_a_support_seed_counts_in_proportion_to_how_near_it_came_to_a_floor(repo):
    """On a real record (the rust-mobile set's, eval/sets/): the instruction a developer's question is
    about nearly reaches the coverage floor (0.97 of the way) and ranks 4th on full text; a decision
    ranked 2nd on full text by the words it shares with the question goes 0.71 of the way. Ranked by
    their strength among the hits alone, the decision came first and the instruction 4th; weighed by
    how near each came to a floor, the instruction is in the top 3 (`rank.standing`)."""
    import shutil
    from pathlib import Path

    from stele.project import Project
    from stele.retrieve.recall import recall
    from tests.helpers import window

    record = Path(__file__).resolve().parents[2] / "eval" / "sets" / "rust-mobile" / "record"
    shutil.copytree(record, repo / "docs" / "memory", dirs_exist_ok=True)
    r = recall(Project(repo), "I landed a change to the suggest component this morning. How does it actually get "
               "into Firefox desktop builds?")
    assert "INS-0Q3H" in window(r)[:3], window(r)
    support = {x.id: x for x in r.trace.scored}["DEC-H8QF"]
    assert support.parts["match"] < S.seed_match * support.seed.strength  # 0.71 of the way: 0.71 of its match


def test_equal_scores_are_ordered_by_how_much_of_the_prompt_each_seed_holds():
    """`order`: two seeds of full strength score the same; the one holding more of the prompt comes first,
    before the seed order (anchor seeds, then search hits) breaks what is still tied."""
    nodes = {"INS-A": node("INS-A", "instruction"), "INS-B": node("INS-B", "instruction")}
    seeds = [Seed("INS-A", 1.0, ORIGIN_TEXT, covers=0.1), Seed("INS-B", 1.0, ORIGIN_TEXT, covers=0.6)]
    scored = score_all(seeds, {}, nodes, S)
    assert scored["INS-A"].score == scored["INS-B"].score
    assert [x.id for x in order(list(scored.values()))] == ["INS-B", "INS-A"]
    seeds[1].covers = 0.1
    assert [x.id for x in order(list(score_all(seeds, {}, nodes, S).values()))] == ["INS-A", "INS-B"]


def test_seeds_at_full_strength_are_not_ordered_by_kind_but_by_how_much_of_the_prompt_they_hold():
    """A pasted error's file anchors decisions at full strength, and the lesson about the error is the
    best search hit, at full strength too: the lesson holds more of the prompt and comes first, where
    its kind weight (2 against 3) put it last. Below full strength kind still orders; a container
    keeps its sink."""
    nodes = {"DEC-A": node("DEC-A", "decision"), "LSN-B": node("LSN-B", "lesson"),
             "DEC-C": node("DEC-C", "decision"), "LSN-D": node("LSN-D", "lesson"), "EPIC-E": node("EPIC-E", "epic")}
    seeds = [Seed("DEC-A", 1.0, ORIGIN_ANCHOR, covers=0.05), Seed("LSN-B", 1.0, ORIGIN_TEXT, covers=0.55),
             Seed("EPIC-E", 1.0, ORIGIN_ANCHOR, covers=0.9),
             Seed("LSN-D", 0.5, ORIGIN_TEXT, covers=0.4), Seed("DEC-C", 0.5, ORIGIN_TEXT, covers=0.1)]
    ranked = [x.id for x in order(list(score_all(seeds, {}, nodes, S).values()))]
    assert ranked == ["LSN-B", "DEC-A", "DEC-C", "LSN-D", "EPIC-E"], ranked


def test_of_the_facts_anchored_to_a_path_a_pasted_error_names_the_one_about_the_error_comes_first(repo):
    """A pasted panic names `xtask/src/tidy.rs`: every fact anchored to it is a seed of full strength (a
    tie). Before, they came in anchor order (by id), and the one about what the prompt asks (the marks)
    came last of three; rust-ide `err-marks` in eval/sets."""
    from stele.project import Project
    from stele.retrieve.recall import recall
    from tests.helpers import track, window, write_fact

    track(repo, "xtask/src/tidy.rs")
    tidy = ["xtask/src/tidy.rs"]
    write_fact(repo, "CON-0001", "constraint", "Tidy requires a module doc comment in every crate file",
               body="Each .rs file under crates/ starts with a //! doc comment, or the tidy test fails.",
               anchors=tidy)
    write_fact(repo, "CON-0002", "constraint", "Tidy rejects trailing whitespace and unlisted licenses",
               body="The tidy test fails on trailing whitespace and on a dependency license outside the list.",
               anchors=tidy)
    write_fact(repo, "INS-0003", "instruction", "Pair each cov_mark hit with the test that checks it",
               body="A branch marked with cov_mark::hit!(name) needs a test starting with cov_mark::check!(name); "
                    "tidy fails on unpaired marks, so deleting that test means deleting the hit too.",
               anchors=tidy)
    prompt = ("I deleted a test that looked redundant and now tidy fails:\n\n"
              "thread 'tidy::test' panicked at xtask/src/tidy.rs:329:13:\n"
              "unpaired marks: [\"functional_update_field\"]\n\n"
              "Is the fix to delete the other half of the mark?")
    r = recall(Project(repo), prompt)
    anchored = [x.id for x in r.trace.seeds if x.origin == "anchor"]
    assert sorted(anchored) == ["CON-0001", "CON-0002", "INS-0003"], anchored
    assert window(r)[0] == "INS-0003", window(r)
