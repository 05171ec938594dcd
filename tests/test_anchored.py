"""Facts anchored to files and to changes, in a real repository."""
from stele import anchored
from stele.project import Project
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
