"""Drift of anchored code since a baseline, in a real git repository (anchors/drift.py)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from stele import gitrepo
from stele.anchors import fingerprint
from stele.anchors.drift import Baseline, Checker, Drift, blob_id, changed_lines, days_ago
from tests.helpers import git

V1 = "def pay(amount):\n    return amount\n\n\ndef other():\n    return 1\n"
V2 = "def pay(amount):\n    amount = round(amount, 2)\n    return amount\n\n\ndef other():\n    return 1\n"
V3 = "def pay(amount):\n    return other()\n\n\ndef other():\n    return 1\n"
V4 = "def pay(amount):\n    return other()\n\n\ndef other():\n    return 2\n"  # only `other` changed


def commit(root: Path, text: str, message: str) -> str:
    (root / "shop.py").write_text(text)
    git(root, "add", "shop.py")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def checker(root: Path, cache: Path | None = None) -> Checker:
    return Checker(root, git(root, "rev-parse", "HEAD").strip(), cache)


@pytest.fixture
def history(plain_repo):
    """shop.py verified at V1, then `pay` changed in two commits and `other` in a third."""
    base = commit(plain_repo, V1, "v1")
    shas = [commit(plain_repo, text, m) for text, m in ((V2, "v2"), (V3, "v3"), (V4, "v4"))]
    prints = {"shop.py::pay": fingerprint.of_symbol(V1, "pay", "shop.py"), "shop.py": fingerprint.of_file(V1)}
    return plain_repo, base, shas, prints


def test_a_symbol_drifts_by_the_commits_that_changed_it_only(history):
    root, base, shas, prints = history
    d = checker(root).drift(Baseline(("shop.py::pay",), "2026-01-01", base[:7], prints))
    assert d is not None and d.commits == 2  # v4 touched the file, not `pay`
    assert d.shas == [shas[0][:7], shas[1][:7]] and d.last == shas[1][:7]
    assert (d.added, d.removed, d.uncommitted) == (1, 1, False)  # `return amount` -> `return other()`
    assert d.label() == "anchor changed in 2 commits since verified (+1/-1 lines)"


def test_a_file_anchor_counts_every_commit_that_changed_the_file(history):
    root, base, _, prints = history
    d = checker(root).drift(Baseline(("shop.py",), "2026-01-01", base[:7], prints))
    assert d is not None and d.commits == 3


def test_unchanged_code_is_no_drift_and_asks_no_git(history, monkeypatch):
    root, _, _, _ = history
    now = {"shop.py::pay": fingerprint.of_symbol(V4, "pay", "shop.py")}
    monkeypatch.setattr(gitrepo, "path_changes", lambda *a, **k: pytest.fail("git asked"))
    monkeypatch.setattr(gitrepo, "read_blobs", lambda *a, **k: pytest.fail("git asked"))
    assert checker(root).drift(Baseline(("shop.py::pay",), "2026-01-01", "abc1234", now)) is None


def test_an_uncommitted_edit_is_drift_without_commits(history):
    root, _, _, _ = history
    now = {"shop.py::pay": fingerprint.of_symbol(V4, "pay", "shop.py")}
    (root / "shop.py").write_text(V4.replace("return other()", "return 0"))
    head = git(root, "rev-parse", "HEAD").strip()
    d = checker(root).drift(Baseline(("shop.py::pay",), "2026-01-01", head[:7], now))
    assert d is not None and (d.commits, d.uncommitted) == (0, True)
    assert d.label() == "anchor changed since verified (uncommitted edits)"


def test_without_a_recorded_fingerprint_the_code_at_the_baseline_commit_counts(history):
    root, base, _, _ = history
    d = checker(root).drift(Baseline(("shop.py::pay",), None, base[:7], {}))
    assert d is not None and d.commits == 2


def test_an_unknown_baseline_commit_falls_back_to_the_date(history):
    root, _, _, prints = history
    d = checker(root).drift(Baseline(("shop.py::pay",), "2001-01-01", "deadbee", prints))
    assert d is not None and (d.commits, d.since) == (2, "2001-01-01")  # v1 made the file as verified


def test_globs_folders_and_missing_files_have_no_drift(history):
    root, base, _, _ = history
    c = checker(root)
    for anchor in ("*.py", "nothing.py", "shop.py::gone"):
        assert c.drift(Baseline((anchor,), "2001-01-01", base[:7], {anchor: "0" * 16})) is None


def test_the_cache_answers_the_next_process_without_git(history, monkeypatch, tmp_path):
    root, base, _, prints = history
    cache = tmp_path / "drift.json"
    b = Baseline(("shop.py::pay",), "2026-01-01", base[:7], prints)
    c = checker(root, cache)
    first = c.drift(b)
    c.save()
    monkeypatch.setattr(gitrepo, "path_changes", lambda *a, **k: pytest.fail("git asked"))
    monkeypatch.setattr(gitrepo, "read_blobs", lambda *a, **k: pytest.fail("git asked"))
    assert Checker(root, c.head, cache).drift(b) == first


def test_a_new_head_asks_git_again(history, tmp_path):
    root, base, _, prints = history
    cache = tmp_path / "drift.json"
    b = Baseline(("shop.py::pay",), "2026-01-01", base[:7], prints)
    c = checker(root, cache)
    assert c.drift(b).commits == 2
    c.save()
    commit(root, V4.replace("return other()", "return 3"), "v5")
    assert checker(root, cache).drift(b).commits == 3


def test_head_is_read_without_git(history):
    root, *_ = history
    assert gitrepo.head_id(root / ".git", root / ".git") == git(root, "rev-parse", "HEAD").strip()
    git(root, "pack-refs", "--all")
    assert gitrepo.head_id(root / ".git", root / ".git") == git(root, "rev-parse", "HEAD").strip()


def test_labels_and_helpers():
    assert Drift(1, None, None).label("written") == "anchor changed in 1 commit since written"
    assert Drift(3, 40, 12, uncommitted=True).label() == \
        "anchor changed in 3 commits, and uncommitted edits since verified (+40/-12 lines)"
    assert changed_lines(["a", "b", "c"], ["a", "x", "c", "d"]) == (2, 1)
    today = dt.date(2026, 11, 29)
    assert [days_ago(d, today) for d in ("2026-11-29", "2026-11-28", "2026-11-17T10:00:00Z", "bad", None)] == \
        ["today", "1 day ago", "12 days ago", None, None]
    assert blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object`


def test_a_commit_that_adds_the_file_changed_no_code_the_fact_was_written_against(plain_repo):
    """A record brought from another checkout (or written about an uncommitted file): the fingerprint
    differs, and is labelled, but no commit is counted."""
    commit(plain_repo, "", "an empty file")
    prints = {"shop.py": fingerprint.of_file(V1)}
    d = checker(plain_repo).drift(Baseline(("shop.py",), "2001-01-01", None, prints))
    assert d is not None and (d.commits, d.uncommitted) == (0, False)
    assert d.label("recorded") == "anchor changed since recorded"


def test_the_hooks_check_only_fingerprinted_anchors(history, monkeypatch):
    root, base, _, _ = history
    monkeypatch.setattr(gitrepo, "path_changes", lambda *a, **k: pytest.fail("git asked"))
    c = Checker(root, git(root, "rev-parse", "HEAD").strip(), unpinned=False)
    assert c.check(Baseline(("shop.py::pay",), None, base[:7], {})) == (None, False)


def test_past_the_deadline_git_is_not_asked_and_the_drift_has_no_commits(history, monkeypatch):
    root, base, _, prints = history
    monkeypatch.setattr(gitrepo, "path_changes", lambda *a, **k: pytest.fail("git asked"))
    c = Checker(root, git(root, "rev-parse", "HEAD").strip(), deadline=0.0)
    d = c.drift(Baseline(("shop.py::pay",), "2026-01-01", base[:7], prints))
    assert d is not None and (d.commits, d.uncommitted) == (0, False) and d.since == base[:7]
    assert d.label() == "anchor changed since verified"


def test_commits_count_from_the_last_one_that_left_the_code_as_verified(history):
    """A date baseline reaches back before the fact was written: commits up to the code it recorded
    are not drift."""
    root, _, shas, _ = history
    prints = {"shop.py::pay": fingerprint.of_symbol(V2, "pay", "shop.py")}  # written after v2
    d = checker(root).drift(Baseline(("shop.py::pay",), "2001-01-01", None, prints))
    assert d is not None and d.shas == [shas[1][:7]]  # v3 only
    assert (d.added, d.removed) == (1, 2)  # from v2's `pay`, not v1's


def test_a_verified_at_that_is_a_git_option_is_never_passed_as_one(history, tmp_path):
    """`verified_at` is a fact's text, and a fact arrives in a pull request: `--output=PATH` there
    made the drift check run `git log --output=PATH..HEAD`, which writes a file wherever the pull
    request says. It is a revision git does not know: the drift falls back to the date."""
    root, _, _, prints = history
    out = tmp_path / "out"
    out.mkdir()
    d = checker(root).drift(Baseline(("shop.py",), "2000-01-01", f"--output={out / 'written'}", prints))
    assert list(out.iterdir()) == []
    assert d is not None and d.commits == 3 and d.since == "2000-01-01"  # counted from the date


def test_a_date_baseline_counts_the_commits_made_earlier_that_day(plain_repo, monkeypatch):
    """A fact never verified has only its `created` date as a baseline. git reads `--since=2026-12-03`
    as that day at the current time of day, so the commits made earlier that day were left out: a
    function rewritten in two commits the day its fact was written was labelled `anchor changed since
    recorded (uncommitted edits)`, with nothing uncommitted, and its commits not counted."""
    today = dt.date.today().isoformat()
    shas = []
    for second, (text, message) in enumerate(((V1, "v1"), (V2, "v2"), (V3, "v3")), start=1):
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"{today}T00:00:0{second}")
        monkeypatch.setenv("GIT_AUTHOR_DATE", f"{today}T00:00:0{second}")
        shas.append(commit(plain_repo, text, message))
    prints = {"shop.py::pay": fingerprint.of_symbol(V1, "pay", "shop.py")}
    d = checker(plain_repo).drift(Baseline(("shop.py::pay",), today, None, prints))
    assert d is not None and (d.commits, d.uncommitted) == (2, False)
    assert d.label("recorded").startswith("anchor changed in 2 commits since recorded")
