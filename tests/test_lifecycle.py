def test_inactive_reads_facts_and_index_nodes_alike():
    import datetime as dt
    from types import SimpleNamespace as NS

    from stele.lifecycle import inactive
    from stele.record.model import Fact

    on = dt.date(2026, 11, 29)
    fact = Fact(id="DEC-AAAA", kind="decision", title="t", expires=dt.date(2026, 1, 1), source=["S-01J"])
    assert inactive(fact, on) == "expired 2026-01-01"  # a provenance list is not a session
    node = NS(source="committed", status="current", expires=None, review_after="2026-05-01")
    assert inactive(node, on) == "review overdue since 2026-05-01"
    assert inactive(NS(source="session", status="", expires="2020-01-01", review_after=None), on) is None
    assert inactive(NS(source="committed", status="retired", expires="not a date", review_after=None),
                    on) == "retired"
