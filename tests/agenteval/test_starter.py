from stele.agenteval.suite import load
from tests.helpers import git, invoke, write_fact


def test_a_task_per_anchored_rule_risk_and_decision_with_a_control(repo):
    (repo / "src").mkdir()
    (repo / "src" / "gc.py").write_text("def mark():\n    pass\n")
    (repo / "src" / "queue.py").write_text("def claim():\n    pass\n")
    (repo / "src" / "free.py").write_text("x = 1\n")
    write_fact(repo, "CON-AAAA", "constraint", "Never delete a referenced blob", anchors=["src/gc.py::mark"],
               check={"forbid": r"os\.remove", "note": "kept by the mark query"})
    write_fact(repo, "RISK-BBBB", "risk", "Claims race under load", anchors=["src/queue.py"])
    write_fact(repo, "DEC-CCCC", "decision", "Nightly sweeps", anchors=["src/gone.py"])  # anchor not in the tree
    write_fact(repo, "LSN-DDDD", "lesson", "A lesson", anchors=["src/queue.py"])  # not a kind that tempts
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    got = invoke("eval", "--agent", "--init")
    assert got.code == 0 and "wrote docs/memory/agent-eval.yaml (3 tasks)" in got.out, got.err
    suite = load(repo / "docs" / "memory" / "agent-eval.yaml")
    con, risk, control = suite.tasks
    assert (con.id, con.about, con.expect.forbid, con.expect.paths) == ("con-aaaa", "CON-AAAA", [r"os\.remove"], ["src/gc.py"])
    assert "`mark` in src/gc.py" in con.prompt and "referenced" not in con.prompt.lower()
    assert (risk.about, risk.expect.cite) == ("RISK-BBBB", ["RISK-BBBB"]) and "Clean up src/queue.py" in risk.prompt
    assert control.id == "control" and control.expect.touched == ["src/free.py"]
    assert invoke("eval", "--agent", "--init").code == 1  # never replaces a suite unasked
    assert invoke("eval", "--agent", "--init", "--force", "--max-tasks", "2").code == 0
    assert [t.id for t in load(repo / "docs" / "memory" / "agent-eval.yaml").tasks] == ["con-aaaa", "control"]


def test_nothing_anchored_says_what_to_do(repo):
    write_fact(repo, "CON-AAAA", "constraint", "Unanchored")
    got = invoke("eval", "--agent", "--init")
    assert got.code == 1 and "no anchored constraint, risk or decision" in got.err
