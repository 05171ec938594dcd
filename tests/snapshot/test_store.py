"""Stored snapshots: written whole, never replaced, found by run id or a unique prefix."""
import json
import stat

import pytest

from stele.config import load as load_config
from stele.errors import SteleError, UsageError
from stele.project import Project
from stele.snapshot import store
from stele.snapshot.model import Budgets, Item, Snapshot

BUDGETS = Budgets.from_config(load_config(None))


def snap(run: str, text: str = "the text\n") -> Snapshot:
    item = Item("always", "INS-0001", "[INS-0001] instruction: Rule\nbody\n", {"kind": "instruction"})
    return Snapshot(run=run, created="2026-11-29T00:00:00Z", budgets=BUDGETS, records_limit=12, code_limit=32768,
                    inputs={"task": {"id": "TASK-0001", "title": "t", "status": "open"}}, items=[item], text=text)


def test_save_writes_a_read_only_file_that_loads_back(tmp_path):
    project = Project(tmp_path)
    path = store.save(project, snap("01JAAAAAAAAAAAAAAAAAAAAAAA"))
    assert path == tmp_path / ".stele/snapshots/01JAAAAAAAAAAAAAAAAAAAAAAA.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    data = store.load(project, "01jaaaa")
    assert data["run"] == "01JAAAAAAAAAAAAAAAAAAAAAAA"
    assert data["stored"] == ".stele/snapshots/01JAAAAAAAAAAAAAAAAAAAAAAA.json"
    assert data["parts"]["always"][0]["text"] == "[INS-0001] instruction: Rule\nbody\n"
    assert data["text"] == "the text\n" and [p.name for p in path.parent.iterdir()] == [path.name]  # no temp left


def test_a_stored_run_is_never_replaced(tmp_path):
    project = Project(tmp_path)
    path = store.save(project, snap("01JBBBBBBBBBBBBBBBBBBBBBBB", "first\n"))
    with pytest.raises(SteleError, match="already exists: a stored run is never replaced"):
        store.save(project, snap("01JBBBBBBBBBBBBBBBBBBBBBBB", "second\n"))
    assert json.loads(path.read_text())["text"] == "first\n"


def test_runs_are_listed_oldest_first_and_prefixes_must_be_unique(tmp_path):
    project = Project(tmp_path)
    for run in ("01JC0000000000000000000002", "01JC0000000000000000000001"):
        store.save(project, snap(run))
    (tmp_path / ".stele/snapshots/01JD0000000000000000000000.json").write_text("{not json")
    rows = list(store.runs(project))
    assert [r["run"] for r in rows] == ["01JC0000000000000000000001", "01JC0000000000000000000002",
                                        "01JD0000000000000000000000"]
    assert rows[0]["task"] == "TASK-0001" and rows[0]["records"] == 1 and rows[0]["bytes"] > 0
    assert rows[2]["error"].startswith("cannot read .stele/snapshots/01JD0000000000000000000000.json")
    with pytest.raises(UsageError, match="ambiguous"):
        store.load(project, "01JC")
    with pytest.raises(SteleError, match="no stored snapshot 01JE"):
        store.load(project, "01JE")
    with pytest.raises(UsageError, match="is not a run id"):
        store.load(project, "../etc")
    with pytest.raises(SteleError, match="cannot read the stored snapshot"):
        store.load(project, "01JD")


def test_temporaries_stay_out_of_the_runs_and_a_killed_writers_are_cleared(tmp_path):
    import os

    project = Project(tmp_path)
    left = tmp_path / ".stele/tmp/.01JCCCCCCCCCCCCCCCCCCCCCCC.json.0a1b2c.tmp"  # what a kill -9 leaves
    left.parent.mkdir(parents=True)
    left.write_text("{half")
    fresh = left.with_name(".01JDDDDDDDDDDDDDDDDDDDDDDD.json.3d4e5f.tmp")  # another writer's, still busy
    fresh.write_text("{")
    os.utime(left, (1, 1))
    path = store.save(project, snap("01JEEEEEEEEEEEEEEEEEEEEEEE"))
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    assert not left.exists() and fresh.exists()
