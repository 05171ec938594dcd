"""What a snapshot is asked for: the query text of a task and the facts linked to it."""
import json
import random
from pathlib import Path

from stele.project import Project
from stele.record.load import Record
from stele.record.model import Fact
from stele.snapshot.build import MAX_PIECES, PIECE_WORDS, linked_to, query_for, query_parts
from tests.helpers import invoke, write_fact


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


def _words(n: int, seed: int = 5) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("abcdefghijklmnoprstuvw") for _ in range(rng.randint(4, 9))) + "."
                    for _ in range(n))


def test_a_long_body_or_prompt_is_matched_by_its_start_and_the_cut_is_said():
    """Each piece is a search of the record and of the code: a 1 MB body pasted from a log was 6,000
    pieces and three minutes while the claim stood. Each source gives at most MAX_PIECES."""
    task = Fact(id="TASK-0001", kind="task", title="Limit login", body=_words(150_000))
    warnings: list[str] = []
    parts = query_parts(task, _words(20_000, seed=6), warnings)
    assert parts[0] == "Limit login" and len(parts) == 1 + 2 * MAX_PIECES
    assert all(len(p.split()) <= PIECE_WORDS[1] for p in parts)
    assert len(warnings) == 2 and warnings[0].startswith("stele: TASK-0001's description is long (")
    assert f"only its first {MAX_PIECES} were matched" in warnings[0] and warnings[1].startswith("stele: the prompt")
    short: list[str] = []
    assert query_parts(task, "per route", short)[-1] == "per route" and len(short) == 1  # the body only


def test_a_claim_preview_of_a_task_with_a_huge_body_stays_bounded(repo):
    write_fact(repo, "TASK-0B0D", "task", "Triage the nightly failure", body=_words(12_000), status="open")
    done = invoke("context", "preview", "TASK-0B0D", "--json")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert any("TASK-0B0D's description is long" in w for w in data["warnings"])
    assert len(data["inputs"]["query"].split("\n")) <= 1 + 2 * MAX_PIECES
