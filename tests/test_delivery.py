def test_inactive_reads_facts_and_index_nodes_alike():
    import datetime as dt
    from types import SimpleNamespace as NS

    from stele.delivery import inactive
    from stele.record.model import Fact

    on = dt.date(2026, 11, 29)
    fact = Fact(id="DEC-AAAA", kind="decision", title="t", expires=dt.date(2026, 1, 1), source=["S-01J"])
    assert inactive(fact, on) == "expired 2026-01-01"  # a provenance list is not a session
    node = NS(source="committed", status="current", expires=None, review_after="2026-05-01")
    assert inactive(node, on) == "review overdue since 2026-05-01"
    assert inactive(NS(source="session", status="", expires="2020-01-01", review_after=None), on) is None
    assert inactive(NS(source="committed", status="retired", expires="not a date", review_after=None),
                    on) == "retired"


def test_priority_order_has_one_home_and_ranks_unknown_as_normal():
    from stele.kinds import PRIORITIES, priority_rank

    assert [priority_rank(p) for p in PRIORITIES] == [0, 1, 2, 3]
    assert priority_rank(None) == priority_rank("urgent!") == priority_rank("normal")


def test_a_standing_rule_is_a_current_always_context_record_for_facts_and_nodes_alike():
    import datetime as dt
    from types import SimpleNamespace as NS

    from stele.delivery import is_standing_rule, standing_rules
    from stele.record.model import Fact

    on = dt.date(2026, 11, 29)

    def node(**kw):
        base = dict(source="committed", kind="instruction", status="current", delivery="always",
                    priority="normal", expires=None, review_after=None, id="INS-0001")
        return NS(**{**base, **kw})

    assert is_standing_rule(node(), on)
    assert is_standing_rule(Fact(id="INS-0001", kind="instruction", title="t"), on)  # always by default
    assert not is_standing_rule(node(kind="document"), on)  # knowledge is pulled, not pushed
    assert not is_standing_rule(Fact(id="DOC-0001", kind="document", title="t", delivery="always",
                                     status="current"), on)
    assert not is_standing_rule(node(kind="epic"), on)
    assert not is_standing_rule(node(status="draft"), on)
    assert not is_standing_rule(node(delivery="ranked"), on)
    assert not is_standing_rule(node(expires="2026-01-01"), on)
    assert not is_standing_rule(node(source="session"), on)
    rules = standing_rules([node(id="INS-0003", priority="low"), node(id="CON-0002", kind="constraint"),
                            node(id="GOAL-0004", kind="goal", priority="critical"),
                            node(id="DEC-0001", kind="decision")], on)
    assert [r.id for r in rules] == ["GOAL-0004", "CON-0002", "DEC-0001", "INS-0003"]


def test_withheld_names_why_retrieval_must_not_deliver_a_fact_unasked():
    import datetime as dt
    from types import SimpleNamespace as NS

    from stele.delivery import withheld

    on = dt.date(2026, 11, 29)

    def node(**kw):
        base = dict(source="committed", kind="decision", status="current", delivery="ranked",
                    expires=None, review_after=None)
        return NS(**{**base, **kw})

    assert withheld(node(), on) is None
    assert withheld(node(delivery="manual"), on) == "delivery manual"
    assert withheld(node(status="superseded"), on) == "superseded"
    assert withheld(node(kind="task", status="open"), on) is None
    assert withheld(node(kind="task", status="done"), on) == "done"
    assert withheld(node(kind="task", status="done"), on, reached_by_edge=True) is None  # history
    assert withheld(node(kind="task", status="cancelled"), on, reached_by_edge=True) == "cancelled"
    assert withheld(node(kind="epic", status="cancelled"), on) == "cancelled"
