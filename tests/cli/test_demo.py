import json

from stele.cli.demo import example_inputs, script
from stele.record.scaffold import EXAMPLE
from stele.record.scaffold import example_repository as build
from tests.helpers import invoke


def test_the_demo_tours_recall_anchors_tasks_and_doctor():
    steps = script()
    prompts, files = example_inputs()
    commands = [args for _, args in steps]
    recalls = [a for a in commands if a[0] == "recall"]
    assert [a[-1] for a in recalls] == prompts[:3]
    assert all("--max-chars" in a for a in recalls)  # shortened, so the demo stays short
    assert ("anchored", files[0]) in commands
    assert {a[0] for a in commands} >= {"list", "recall", "anchored", "task", "doctor"}
    assert all(note for note, _ in steps)


def test_the_demo_prompts_show_what_they_promise(tmp_path, monkeypatch):
    """The narration says the first prompt's risk is called out and the third finds a lesson."""
    root = build(tmp_path / "harbor")
    monkeypatch.chdir(root)
    prompts, _ = example_inputs()
    first = json.loads(invoke("recall", "--json", prompts[0]).out)
    assert any(r["via"]["hops"] == 2 or r["via"]["rel"] == "caused-by" for r in first["risks"])
    second = json.loads(invoke("recall", "--json", prompts[1]).out)
    assert second["risks"], "the second prompt's narration promises a called-out risk"
    third = json.loads(invoke("recall", "--json", prompts[2]).out)
    assert third["entries"][0]["kind"] == "lesson"


def test_demo_runs_end_to_end(tmp_path):
    r = invoke("demo", "--keep", str(tmp_path / "kept"))
    assert r.code == 0, r.err
    assert "$ stele recall" in r.out and "$ stele doctor" in r.out
    assert (tmp_path / "kept" / "docs" / "memory").is_dir()
    assert EXAMPLE.is_dir()
