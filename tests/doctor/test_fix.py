"""`doctor --fix`: follow renames, re-find moved Python symbols, never delete, mark the rest for review."""
import datetime as dt

from stele.doctor import fix
from stele.doctor import run as doctor_run
from stele.project import Project
from tests.factfiles import AUTH_PY, commit, write, write_fact
from tests.helpers import git

TODAY = dt.date(2026, 11, 29)


def setup(repo, *anchors):
    write(repo, "src/auth.py", AUTH_PY)
    rel = write_fact(repo, "RISK-AAAA", "risk", anchors=list(anchors), body="Order matters.")
    commit(repo, "init")
    return rel


def test_a_renamed_file_is_followed_and_the_diff_shown_first(repo):
    rel = setup(repo, "src/auth.py::RateLimiter.check", "src/auth.py")
    git(repo, "mv", "src/auth.py", "src/limits.py")
    [repair] = fix.plan(Project(repo), TODAY)
    diff = repair.diff()
    assert diff.startswith(f"--- a/{rel}\n+++ b/{rel}\n")
    assert "-  - src/auth.py::RateLimiter.check\n-  - src/auth.py\n" in diff
    assert "+  - src/limits.py::RateLimiter.check\n+  - src/limits.py\n" in diff
    assert (repo / rel).read_text() == repair.before  # planning writes nothing
    fix.apply(Project(repo), [repair])
    assert (repo / rel).read_text() == repair.after
    assert doctor_run.run(Project(repo)).findings == []


def test_a_renamed_folder_is_followed_for_globs_and_folders(repo):
    setup(repo, "src/**/*.py", "src")
    git(repo, "mv", "src", "lib")
    [repair] = fix.plan(Project(repo), TODAY)
    fix.apply(Project(repo), [repair])
    assert "  - lib/**/*.py\n  - lib\n" in (repo / repair.fact.path).read_text()


def test_a_python_symbol_moved_to_another_class_is_refound_by_name(repo):
    setup(repo, "src/auth.py::RateLimiter.check")
    write(repo, "src/auth.py", AUTH_PY.replace("class RateLimiter", "class TokenBucket"))
    [repair] = fix.plan(Project(repo), TODAY)
    assert "+  - src/auth.py::TokenBucket.check\n" in repair.diff()


def test_a_symbol_refound_in_the_renamed_file(repo):
    setup(repo, "src/auth.py::RateLimiter.check")
    git(repo, "mv", "src/auth.py", "src/limits.py")
    write(repo, "src/limits.py", AUTH_PY.replace("class RateLimiter", "class Limiter"))
    [repair] = fix.plan(Project(repo), TODAY)
    assert "+  - src/limits.py::Limiter.check\n" in repair.diff()


def test_an_unrepairable_anchor_marks_the_fact_for_review_and_is_kept(repo):
    rel = setup(repo, "src/auth.py::RateLimiter.check", "src/gone.py")
    [repair] = fix.plan(Project(repo), TODAY)
    fix.apply(Project(repo), [repair])
    text = (repo / rel).read_text()
    assert "  - src/gone.py\n" in text and "review_after: 2026-11-29\n" in text
    assert any("cannot be repaired" in n for n in repair.notes)
    assert fix.plan(Project(repo), TODAY) == []  # nothing more to do: a second run changes nothing


def test_nothing_to_fix_plans_nothing(repo):
    setup(repo, "src/auth.py::RateLimiter.check")
    assert fix.plan(Project(repo), TODAY) == []
