from pathlib import Path

import pytest

from stele.agenteval.suite import load, parse
from stele.errors import UsageError


def test_a_task_with_every_check(tmp_path):
    (tmp_path / "fix.patch").write_text("")
    suite = parse({"timeout": 120, "tasks": [{
        "id": "gc-1", "prompt": "simplify mark", "about": "CON-1", "setup": {"patch": "fix.patch"}, "max_turns": 5,
        "expect": {"touched": ["a.py"], "not_touched": "b/**", "forbid": "DELETE", "require": ["grace"],
                   "paths": ["a.py"], "commands": ["true", {"run": "make test", "timeout": 9}], "cite": ["CON-1"],
                   "check": {"forbid": ["DROP"], "in": ["c.py"]}}}]}, tmp_path / "s.yaml")
    t = suite.tasks[0]
    assert (t.id, t.about, t.max_turns, t.timeout) == ("gc-1", "CON-1", 5, 120)
    assert t.patch == str((tmp_path / "fix.patch").resolve())
    assert t.expect.not_touched == ["b/**"] and t.expect.forbid == ["DELETE", "DROP"]
    assert t.expect.paths == ["a.py", "c.py"]  # a fact's `check:` mapping joins the task's checks
    assert [(c.run, c.timeout) for c in t.expect.commands] == [("true", 300), ("make test", 9)]


@pytest.mark.parametrize("data, says", [
    ({"tasks": []}, "non-empty `tasks:`"),
    ({"tasks": [{"prompt": "x", "expect": {"cite": ["A"]}}]}, "task 1: `id` is missing"),
    ({"tasks": [{"id": "a", "expect": {"cite": ["A"]}}]}, "task a: `prompt` is missing"),
    ({"tasks": [{"id": "a", "prompt": "x", "expect": {"cite": ["A"]}, "colour": 1}]}, "unknown key 'colour'"),
    ({"tasks": [{"id": "a", "prompt": "x", "expect": {"forbid": "("}}]}, "expect.forbid: '(' is not a regular"),
    ({"tasks": [{"id": "a", "prompt": "x", "expect": {}}]}, "`expect` has no check"),
    ({"tasks": [{"id": "a", "prompt": "x", "expect": {"cite": "A"}}] * 2}, "task a: the id is used twice"),
    ({"tasks": [{"id": "a", "prompt": "x", "expect": {"cite": "A"}, "max_turns": 0}]}, "max_turns: give a positive"),
    ({"tasks": [{"id": "a", "prompt": "x", "expect": {"check": {"forbid": "x", "colour": 1}}}]}, "expect.check: unknown"),
    ({"tasks": [{"id": "a", "prompt": "x", "setup": {"patch": "no.patch"}, "expect": {"cite": "A"}}]},
     "setup.patch 'no.patch' is not a file"),
])
def test_bad_suites_are_refused_naming_the_task_and_key(tmp_path, data, says):
    with pytest.raises(UsageError, match=None) as e:
        parse(data, tmp_path / "s.yaml")
    assert says in str(e.value) and str(tmp_path / "s.yaml") in str(e.value)


def test_a_missing_file_says_how_to_start(tmp_path):
    with pytest.raises(UsageError, match="--agent --init"):
        load(Path(tmp_path / "none.yaml"))
