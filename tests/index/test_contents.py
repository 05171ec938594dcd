"""The record's table of contents at session start: bounded, grouped by kind, byte-stable until the
record changes, and never listing what the session start already shows or a lifecycle rule withholds."""
from stele.index.build import open_index
from stele.index.contents import BUDGET, area, cached, table
from stele.project import Project
from stele.record.scaffold import example_repository
from tests.fakes import write_fact


def toc(project, budget=BUDGET):
    with open_index(project) as index:
        return table(index.catalog, budget)


def test_the_demo_contents_fit_and_stay_the_same(tmp_path):
    project = Project(example_repository(tmp_path / "harbor"))
    first = toc(project)
    assert len(first) <= BUDGET and first == toc(project)
    assert "DEC-8YBJ Registry bearer tokens expire after 5 minutes" in first
    assert "CON-6E8B" not in first  # a standing rule: shown whole above it
    assert "TASK-" not in first and "DEC-MM9X" not in first  # tasks have their list; superseded is out
    assert first.index("decision (") < first.index("lesson (") < first.index("component (")
    small = toc(project, 900)
    assert len(small) <= 900 and "more" in small


def test_it_changes_with_the_record_and_orders_the_linked_first(repo):
    write_fact(repo, "DEC-0001", "decision", "Invoices are numbered per tenant and year",
               anchors=["src/billing/numbers.py"])
    write_fact(repo, "DEC-0002", "decision", "Refunds are new invoices with negative lines",
               links={"relates-to": ["DEC-0001"]})
    write_fact(repo, "DEC-0003", "decision", "Tax is rounded per line, never per invoice",
               links={"relates-to": ["DEC-0001"]})
    project = Project(repo)
    before = toc(project)
    assert before.index("DEC-0001") < before.index("DEC-0002")  # two edges against one
    assert "[src/billing]" in before
    write_fact(repo, "LSN-0004", "lesson", "Rounding per invoice lost cents on large orders")
    after = toc(project)
    assert after != before and "LSN-0004" in after


def test_area_is_two_folders_at_most():
    assert area("pkg/store/bucket.go") == "pkg/store"
    assert area("a/b/c/d.py") == "a/b"
    assert area("main.tf") == "main.tf"


def test_the_index_keeps_the_table_until_the_record_changes(repo):
    write_fact(repo, "DEC-0001", "decision", "Invoices are numbered per tenant and year")
    project = Project(repo)
    with open_index(project) as index:
        kept = index.catalog.meta("contents")
        assert kept and "DEC-0001" in kept and cached(index.catalog) == table(index.catalog)
    write_fact(repo, "DEC-0002", "decision", "Refunds are new invoices with negative lines")
    with open_index(project) as index:
        assert "DEC-0002" in index.catalog.meta("contents") and "DEC-0002" in cached(index.catalog)
        short = cached(index.catalog, 120)
        assert len(short) <= 120 + len("(more: `stele list`)") + 1 and short.endswith("(more: `stele list`)")
