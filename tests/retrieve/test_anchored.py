"""Facts anchored to files and to changes, in a real repository."""
import pytest

from stele.project import Project
from stele.record.load import load
from stele.retrieve import anchored
from tests.factfiles import AUTH_PY, commit, write, write_fact
from tests.helpers import git


def setup(root):
    write(root, "src/auth.py", AUTH_PY)
    write_fact(root, "RISK-AAAA", "risk", anchors=["src/auth.py::RateLimiter.check"])
    write_fact(root, "DEC-BBBB", "decision", anchors=["src/auth.py"])
    write_fact(root, "CON-CCCC", "constraint", anchors=["src/**/*.py"], priority="low")
    write_fact(root, "LSN-DDDD", "lesson", anchors=["src/auth.py::login"], status="superseded")
    commit(root, "init")


def ids(found):
    return [a.fact.id for a in found]


def test_staged_symbol_anchor_counts_only_when_its_lines_change(repo):
    setup(repo)
    p = Project(repo)
    write(repo, "src/auth.py", AUTH_PY.replace("return True", "return bool(key)"))
    git(repo, "add", "src/auth.py")
    found = anchored.for_change(p, anchored.staged(repo))
    assert ids(found) == ["RISK-AAAA", "CON-CCCC", "DEC-BBBB"]  # risks and constraints first
    assert found[0].hits[0].lines == (10, 13)

    git(repo, "reset", "-q", "--hard")
    write(repo, "src/auth.py", AUTH_PY.replace("return user is not None", "return bool(user)"))
    git(repo, "add", "src/auth.py")
    assert ids(anchored.for_change(p, anchored.staged(repo))) == ["CON-CCCC", "DEC-BBBB"]
    # ended facts are left out unless asked for
    assert "LSN-DDDD" in ids(anchored.for_change(p, anchored.staged(repo), include_ended=True))


def test_deleting_the_symbol_counts_and_memory_changes_do_not(repo):
    setup(repo)
    p = Project(repo)
    start, end = AUTH_PY.index("    def check"), AUTH_PY.index("    def reset")
    write(repo, "src/auth.py", AUTH_PY[:start] + AUTH_PY[end:])
    write_fact(repo, "NOTE-EEEE", "note", anchors=["docs/**"])
    git(repo, "add", "-A")
    found = anchored.for_change(p, anchored.staged(repo))
    assert "RISK-AAAA" in ids(found) and "NOTE-EEEE" not in ids(found)
    assert found[0].hits[0].lines == (10, 13)  # the old side's lines


def test_changes_since_a_revision_and_between_two(repo):
    setup(repo)
    p = Project(repo)
    first = git(repo, "rev-parse", "HEAD").strip()
    write(repo, "src/auth.py", AUTH_PY.replace("return False", "return None"))
    assert ids(anchored.for_change(p, anchored.since(repo, "HEAD"))) == ["RISK-AAAA", "CON-CCCC", "DEC-BBBB"]
    commit(repo, "two")
    assert ids(anchored.for_change(p, anchored.since(repo, f"{first}..HEAD")))[0] == "RISK-AAAA"
    assert anchored.for_change(p, anchored.since(repo, "HEAD..HEAD")) == []


def test_for_paths_matches_files_and_folders(repo):
    setup(repo)
    p = Project(repo)
    found = anchored.for_paths(p, ["src/auth.py"])
    assert ids(found) == ["RISK-AAAA", "CON-CCCC", "DEC-BBBB"]
    assert found[0].hits[0].lines == (10, 13)
    assert ids(anchored.for_paths(p, ["src"])) == ["RISK-AAAA", "CON-CCCC", "DEC-BBBB"]
    assert ids(anchored.for_paths(p, ["README.md"])) == []


def _lookup(found):
    return {path: sorted((a, f.id) for a, f in pairs) for path, pairs in found.items()}


@pytest.mark.parametrize("source", ["index", "record"])
def test_facts_anchored_to_matches_paths_folders_globs_and_symbols(repo, source):
    write_fact(repo, "RISK-AAAA", "risk", anchors=["src/a.py::f"])
    write_fact(repo, "DEC-BBBB", "decision", anchors=["src/**/*.py"])
    write_fact(repo, "NOTE-CCCC", "note", anchors=["docs/", "*.md"])
    p = Project(repo)
    facts = load(p).facts.values() if source == "record" else None
    files = ["src/a.py", "src/x/b.py", "README.md", "docs/a/b.txt", "src/a.txt", "./src/a.py"]
    assert _lookup(anchored.facts_anchored_to(p, files, facts=facts)) == {
        "src/a.py": [("src/**/*.py", "DEC-BBBB"), ("src/a.py::f", "RISK-AAAA")],
        "src/x/b.py": [("src/**/*.py", "DEC-BBBB")],
        "README.md": [("*.md", "NOTE-CCCC")],
        "docs/a/b.txt": [("docs" if source == "index" else "docs/", "NOTE-CCCC")],
        "src/a.txt": []}
    inside = anchored.facts_anchored_to(p, ["src", ""], inside=["src", ""], facts=facts)
    assert {f.id for _, f in inside["src"]} == {"RISK-AAAA", "DEC-BBBB"}
    assert {f.id for _, f in inside[""]} == {"RISK-AAAA", "DEC-BBBB", "NOTE-CCCC"}


def test_an_edited_or_deleted_fact_is_answered_at_once(repo):
    p = Project(repo)
    rel = write_fact(repo, "RISK-AAAA", "risk", anchors=["src/a.py"])
    assert _lookup(anchored.facts_anchored_to(p, ["src/a.py"]))["src/a.py"] == [("src/a.py", "RISK-AAAA")]
    write_fact(repo, "RISK-AAAA", "risk", title="Moved", anchors=["src/b.py"])
    found = anchored.facts_anchored_to(p, ["src/a.py", "src/b.py"])
    assert found["src/a.py"] == [] and [f.title for _, f in found["src/b.py"]] == ["Moved"]
    (repo / rel).unlink()
    assert anchored.facts_anchored_to(p, ["src/b.py"]) == {"src/b.py": []}


def test_session_entries_are_not_anchored_facts(repo):
    from stele.session import sessions

    write_fact(repo, "DEC-AAAA", "decision", anchors=["src/a.py"])
    sid = sessions.start(Project(repo)).session
    sessions.log(Project(repo), sid, "note", "touched the limiter", paths=["src/a.py"])
    found = anchored.facts_anchored_to(Project(repo), ["src/a.py"])["src/a.py"]
    assert [f.id for _, f in found] == ["DEC-AAAA"]


def test_without_stele_the_record_itself_is_read_and_nothing_is_written(plain_repo):
    write_fact(plain_repo, "RISK-AAAA", "risk", anchors=["src/a.py"])
    found = anchored.facts_anchored_to(Project(plain_repo), ["src/a.py"])
    assert [f.id for _, f in found["src/a.py"]] == ["RISK-AAAA"]
    assert not (plain_repo / ".stele").exists()
