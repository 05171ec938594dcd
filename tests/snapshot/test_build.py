"""What a snapshot is asked for: the query text of a task and the facts linked to it."""
from pathlib import Path

from stele.project import Project
from stele.record.load import Record
from stele.record.model import Fact
from stele.snapshot.build import linked_to, query_for


def test_the_query_is_the_task_without_template_headings_plus_the_prompt():
    body = "## Description\n\nFloods reach bcrypt.\n\n## Acceptance criteria\n\n- [ ] 429 after 5 tries\n"
    task = Fact(id="TASK-0001", kind="task", title="Limit login", body=body)
    query = query_for(task, "per route")
    assert query.splitlines()[0] == "Limit login" and "Floods reach bcrypt." in query and "429 after 5" in query
    assert "Description" not in query and "Acceptance" not in query and query.endswith("per route")
    assert query_for(None, None) == ""


def test_facts_the_task_links_to_come_before_facts_linking_to_it():
    task = Fact(id="TASK-0001", kind="task", title="t", links={"relates-to": ["DEC-0002"]})
    facts = {f.id: f for f in (task, Fact(id="DEC-0002", kind="decision", title="d"),
                               Fact(id="RISK-0003", kind="risk", title="r", links={"blocks": ["TASK-0001"]}))}
    record = Record(Project(Path("/nonexistent")), facts)
    assert linked_to(record, task) == ["DEC-0002", "RISK-0003"] and linked_to(record, None) == []
