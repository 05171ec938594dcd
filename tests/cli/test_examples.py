"""The Harbor example shipped for `stele demo` is a valid record whose anchors all point at its code."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stele.kinds import KINDS
from stele.project import Project
from stele.record.load import Record, load
from stele.record.scaffold import EXAMPLE


@pytest.fixture(scope="module")
def harbor(tmp_path_factory) -> tuple[Path, Record]:
    """The example laid out as a user's repository: code at the root, the record in docs/memory."""
    root = tmp_path_factory.mktemp("harbor")
    shutil.copytree(EXAMPLE / "code", root, dirs_exist_ok=True)
    shutil.copytree(EXAMPLE / "record", root / "docs" / "memory")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, capture_output=True)
    return root, load(Project(root))


def test_the_example_record_loads_without_problems(harbor):
    _, rec = harbor
    assert [str(p) for p in rec.problems] == []


def test_the_example_is_big_enough_and_covers_every_kind(harbor):
    _, rec = harbor
    assert len(rec.facts) >= 40
    assert {f.kind for f in rec.facts.values()} == set(KINDS)


def test_every_path_and_glob_anchor_matches_a_file(harbor):
    root, rec = harbor
    anchors = [(f.id, a.partition("::")[0]) for f in rec.facts.values() for a in f.anchors]
    assert len({fid for fid, _ in anchors}) >= 20
    unresolved = []
    for fid, path in anchors:
        if any(c in path for c in "*?["):
            hits = [p for p in root.glob(path) if p.is_file() and ".git" not in p.relative_to(root).parts]
            if not hits:
                unresolved.append(f"{fid}: {path}")
        elif not (root / path).is_file():
            unresolved.append(f"{fid}: {path}")
    assert unresolved == []


def test_links_and_mentions_point_at_facts_in_the_example(harbor):
    _, rec = harbor
    dangling = [(f.id, t) for f in rec.facts.values() for _, t in f.targets() if t not in rec.facts]
    dangling += [(f.id, m) for f in rec.facts.values() for m in f.mentions if m not in rec.facts]
    assert dangling == []


def test_prompts_name_questions_and_existing_files():
    lines = [line.strip() for line in (EXAMPLE / "prompts.txt").read_text(encoding="utf-8").splitlines()]
    files = [line.split(":", 1)[1].strip() for line in lines if line.startswith("# file:")]
    prompts = [line for line in lines if line and not line.startswith("#")]
    assert 6 <= len(prompts) <= 8
    assert files and all((EXAMPLE / "code" / f).is_file() for f in files)
