from stele.index.catalog import Node
from stele.retrieve.callout import causal_risks
from stele.retrieve.walk import Neighbourhood
from tests.retrieve.memgraph import MemStore


def risks(nodes, edges, seeds, hops=2):
    store = MemStore(nodes, edges)
    return causal_risks(seeds, Neighbourhood(store, lambda n: n.status == "current"), hops)


def test_causal_risks_within_two_hops_either_direction_are_lifted():
    found = risks({"DEC": "decision", "LSN": "lesson", "R1": "risk", "R2": "risk", "R3": "risk"},
                  [("DEC", "caused-by", "LSN"), ("LSN", "caused-by", "R1"),   # 2 hops, forward
                   ("R2", "blocks", "DEC"),                                    # 1 hop, reverse
                   ("R3", "contradicts", "LSN")], ["DEC"])                      # 2 hops, reverse
    assert {k: (v.from_id, v.rel, v.hops) for k, v in found.items()} == {
        "R1": ("LSN", "caused-by", 2), "R2": ("DEC", "blocks", 1), "R3": ("LSN", "contradicts", 2)}


def test_topical_edges_and_three_causal_hops_do_not_lift():
    found = risks({"DEC": "decision", "A": "lesson", "B": "decision", "R-FAR": "risk", "R-REL": "risk",
                   "R-MEN": "risk"},
                  [("DEC", "caused-by", "A"), ("A", "caused-by", "B"), ("B", "caused-by", "R-FAR"),
                   ("DEC", "relates-to", "R-REL"), ("DEC", "mentions", "R-MEN")], ["DEC"])
    assert found == {}
    assert set(risks({"DEC": "decision", "A": "lesson", "B": "decision", "R-FAR": "risk"},
                     [("DEC", "caused-by", "A"), ("A", "caused-by", "B"), ("B", "caused-by", "R-FAR")],
                     ["DEC"], hops=3)) == {"R-FAR"}  # the distance is a setting


def test_a_path_through_a_topical_edge_does_not_count():
    found = risks({"DEC": "decision", "X": "note", "R": "risk"}, [("DEC", "relates-to", "X"), ("X", "caused-by", "R")],
                  ["DEC"])
    assert found == {}


def test_ended_risks_and_ended_intermediates_are_skipped():
    retired = Node("R-OLD", "committed", "risk", "old", "retired")
    gone = Node("L-OLD", "committed", "lesson", "gone", "superseded")
    found = risks({"DEC": "decision", "R-OLD": retired, "L-OLD": gone, "R": "risk"},
                  [("DEC", "caused-by", "R-OLD"), ("DEC", "caused-by", "L-OLD"), ("L-OLD", "caused-by", "R")], ["DEC"])
    assert found == {}


def test_a_risk_seed_is_lifted_only_when_another_seed_reaches_it():
    nodes = {"DEC": "decision", "R": "risk"}
    assert risks(nodes, [], ["R", "DEC"]) == {}
    assert set(risks(nodes, [("DEC", "caused-by", "R")], ["R", "DEC"])) == {"R"}


def test_the_shortest_path_wins():
    found = risks({"A": "decision", "B": "decision", "M": "lesson", "R": "risk"},
                  [("A", "caused-by", "M"), ("M", "caused-by", "R"), ("B", "caused-by", "R")], ["A", "B"])
    assert (found["R"].from_id, found["R"].hops) == ("B", 1)
