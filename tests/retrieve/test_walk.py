from stele.index.catalog import Node
from stele.retrieve.walk import Neighbourhood, Via, walk
from tests.retrieve.memgraph import MemStore


def hood(store, usable=lambda n: n.status == "current"):
    return Neighbourhood(store, usable)


def test_one_hop_follows_edges_both_ways_and_records_the_relation():
    store = MemStore({"DEC-A": "decision", "LSN-B": "lesson", "TASK-C": "task", "RISK-D": "risk"},
                     [("DEC-A", "caused-by", "LSN-B"), ("TASK-C", "relates-to", "DEC-A"),
                      ("LSN-B", "caused-by", "RISK-D")])
    reached, partial = walk(["DEC-A"], hood(store), depth=1)
    assert not partial
    assert reached == {"LSN-B": [Via("DEC-A", "caused-by", 1, False, "DEC-A")],
                       "TASK-C": [Via("DEC-A", "relates-to", 1, True, "DEC-A")]}  # against the edge: incoming


def test_depth_two_keeps_the_shortest_distance_and_the_seed_it_started_from():
    store = MemStore({"A": "decision", "B": "lesson", "C": "risk", "D": "task"},
                     [("A", "caused-by", "B"), ("B", "caused-by", "C"), ("A", "relates-to", "C"),
                      ("D", "blocks", "C")])
    reached, _ = walk(["A"], hood(store), depth=2)
    assert [v.hops for v in reached["C"]] == [1]  # the 2-hop path through B is not recorded
    assert reached["D"] == [Via("C", "blocks", 2, True, "A")]


def test_ended_facts_are_neither_reached_nor_walked_through():
    old = Node("DEC-OLD", "committed", "decision", "old", "superseded")
    store = MemStore({"A": "decision", "DEC-OLD": old, "C": "lesson"},
                     [("A", "supersedes", "DEC-OLD"), ("DEC-OLD", "caused-by", "C")])
    reached, _ = walk(["A"], hood(store), depth=2)
    assert reached == {}


def test_a_seed_reached_from_another_seed_is_noted_but_not_walked_again():
    store = MemStore({"A": "decision", "B": "task", "C": "note"},
                     [("A", "relates-to", "B"), ("B", "relates-to", "C")])
    reached, _ = walk(["A", "B"], hood(store), depth=1)
    assert reached["B"] == [Via("A", "relates-to", 1, False, "A")]
    assert reached["A"] == [Via("B", "relates-to", 1, True, "B")]
    assert reached["C"] == [Via("B", "relates-to", 1, False, "B")]


def test_edges_are_read_once_per_hop_and_cached():
    store = MemStore({"A": "decision", "B": "lesson"}, [("A", "caused-by", "B")])
    h = hood(store)
    walk(["A"], h, depth=1)
    walk(["A"], h, depth=1)
    assert store.edge_queries == 1


def test_a_passed_deadline_stops_the_walk_and_says_so():
    store = MemStore({"A": "decision", "B": "lesson"}, [("A", "caused-by", "B")])
    reached, partial = walk(["A"], hood(store), depth=1, deadline=0.0)
    assert partial and reached == {}


def test_a_still_seed_reaches_other_seeds_and_nothing_else():
    store = MemStore({"A": "decision", "S": "constraint", "N": "fyi", "M": "note"},
                     [("S", "relates-to", "A"), ("S", "relates-to", "N"), ("A", "relates-to", "M")])
    reached, _ = walk(["A"], hood(store), depth=2, still=["S"])
    assert reached["A"] == [Via("S", "relates-to", 1, False, "S")]  # seed to seed: it backs A up
    assert reached["S"] == [Via("A", "relates-to", 1, True, "A")]
    assert "N" not in reached  # only S links to it
    assert reached["M"] == [Via("A", "relates-to", 1, False, "A")]
