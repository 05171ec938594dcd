"""The live scan equals a fresh scan after every kind of change an editor, git or Stele makes."""
from __future__ import annotations

import os
import sys

import pytest

from stele.index import sources, watch
from stele.project import Project
from tests.helpers import git, invoke, write_fact

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")


@pytest.fixture
def live(repo):
    write_fact(repo, "DEC-AAA1", "decision", "Retries use exponential backoff")
    write_fact(repo, "LSN-BBB2", "lesson", "Cache keys carry the tenant")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "facts")
    scan = watch.LiveScan(Project(repo))
    yield scan
    scan.close()


def same(live: watch.LiveScan, repo) -> dict:
    """The live scan's stamps, checked against a fresh scan's."""
    fresh = sources.scan(Project(repo)).stats()
    now = live.current().stats()
    assert now == fresh
    return now


def memory(repo):
    return repo / "docs" / "memory"


def test_starts_equal_to_a_fresh_scan(live, repo):
    assert len([p for p in same(live, repo) if p.endswith(".md")]) == 2


def test_in_place_save_is_seen(live, repo):
    """VS Code's save: the file rewritten through its own inode, the folder untouched."""
    before = same(live, repo)
    path = next(memory(repo).rglob("*.md"))
    if path.name.lower() == "readme.md":
        path = next(p for p in memory(repo).rglob("*.md") if p.name.lower() != "readme.md")
    inode = path.stat().st_ino
    with open(path, "r+", encoding="utf-8") as f:
        text = f.read()
        f.seek(0)
        f.write(text.replace("Body", "Bodx") + "\nmore\n")
        f.truncate()
    assert path.stat().st_ino == inode
    after = same(live, repo)
    assert after != before


def test_rename_save_new_file_new_folder_and_delete_are_seen(live, repo):
    path = next(p for p in memory(repo).rglob("*.md") if p.name.lower() != "readme.md")
    tmp = path.with_name(".save.tmp")
    tmp.write_text(path.read_text(encoding="utf-8") + "\nedited by rename\n", encoding="utf-8")
    os.replace(tmp, path)  # vim, JetBrains, `atomic.write`
    same(live, repo)
    sub = memory(repo) / "team" / "deep"
    sub.mkdir(parents=True)
    write_fact(repo, "FYI-CCC3", "fyi", "A fact written beside the others")
    (sub / "fyi-ddd4.md").write_text("---\nid: FYI-DDD4\nkind: fyi\ntitle: deep\n---\ndeep\n", encoding="utf-8")
    stamps = same(live, repo)
    assert any(p.endswith("team/deep/fyi-ddd4.md") for p in stamps)
    path.unlink()
    same(live, repo)
    import shutil

    shutil.rmtree(memory(repo) / "team")
    stamps = same(live, repo)
    assert not any("team/deep" in p for p in stamps)


def test_git_checkout_is_seen(live, repo):
    git(repo, "checkout", "-qb", "other")
    write_fact(repo, "RISK-EEE5", "risk", "Webhooks arrive twice")
    path = next(p for p in memory(repo).rglob("*.md") if "aaa1" in p.name.lower())
    path.write_text(path.read_text(encoding="utf-8").replace("exponential", "linear"), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "other")
    on_other = same(live, repo)
    git(repo, "checkout", "-q", "main")
    on_main = same(live, repo)
    assert on_main != on_other
    assert not any("eee5" in p.lower() for p in on_main)


def test_session_lines_and_a_replaced_record_folder_are_seen(live, repo):
    assert invoke("session", "start", "--session", "s-watch").code == 0
    same(live, repo)
    assert invoke("session", "log", "--session", "s-watch", "note", "a note").code == 0
    same(live, repo)
    walks = live.walks
    folder = memory(repo)
    folder.rename(repo / "aside")
    same(live, repo)
    (repo / "aside").rename(folder)  # the same inode back, under its name: a root's stamp changes twice
    same(live, repo)
    assert live.walks > walks


def test_a_linked_fact_is_stat_ed_on_every_read(live, repo, tmp_path):
    target = tmp_path / "outside.md"
    target.write_text("---\nid: FYI-FFF6\nkind: fyi\ntitle: linked\n---\nlinked\n", encoding="utf-8")
    (memory(repo) / "fyi-fff6.md").symlink_to(target)
    same(live, repo)
    target.write_text("---\nid: FYI-FFF6\nkind: fyi\ntitle: linked, changed\n---\nlinked and longer\n",
                      encoding="utf-8")  # nothing under the watched folders changed
    same(live, repo)


def test_the_scan_is_reused_until_something_changes(live, repo):
    first = live.current()
    assert live.current() is first
    assert invoke("session", "start", "--session", "s-reuse").code == 0
    assert live.current() is not first


def test_past_the_hard_cap_on_watches_it_gives_up_for_the_scan(repo, monkeypatch):
    """A `memory_dir` with thousands of folders (a dependency tree) takes no watch per folder: past
    MAX_WATCHES the live scan is unavailable, and the resident server scans as a fresh process does."""
    for i in range(4):
        (memory(repo) / f"deep{i}" / "deeper").mkdir(parents=True)
    monkeypatch.setattr(watch, "MAX_WATCHES", 5)
    with pytest.raises(watch.Unavailable, match="more than 5 folders under the sources"):
        watch.LiveScan(Project(repo))
    monkeypatch.setattr(watch, "MAX_WATCHES", 1000)
    watch.LiveScan(Project(repo)).close()
