"""A fact's edges have one home (`Fact.edges`): the record's graph and the index read them there."""
from stele.index.items import from_fact
from stele.record.graph import Graph, edges_of
from stele.record.model import Fact


def test_declared_links_then_mentions_not_already_joined():
    fact = Fact(id="DEC-0001", kind="decision", title="t", links={"caused-by": ["RISK-0002"]},
                body="See RISK-0002 and LSN-0003, and TASK-0404 which does not exist; DEC-0001 is me.")
    assert fact.edges() == [("caused-by", "RISK-0002"), ("mentions", "LSN-0003"), ("mentions", "TASK-0404")]
    known = {"DEC-0001", "RISK-0002", "LSN-0003"}
    assert [(e.rel, e.dst) for e in edges_of(fact, known)] == [("caused-by", "RISK-0002"), ("mentions", "LSN-0003")]
    # the index keeps a mention of an id that may appear later; the walk skips what is not there
    assert from_fact(fact).edges == fact.edges()


def test_the_graph_walks_both_ways():
    a = Fact(id="DEC-0001", kind="decision", title="a", links={"relates-to": ["NOTE-0002"]})
    b = Fact(id="NOTE-0002", kind="note", title="b")
    g = Graph.from_facts({"DEC-0001": a, "NOTE-0002": b})
    assert [(e.rel, other) for e, other in g.neighbors("NOTE-0002")] == [("relates-to", "DEC-0001")]
