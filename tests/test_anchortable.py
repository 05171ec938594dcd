"""The anchors table: fact headers in a derived SQLite file, re-parsed only when a fact file changes."""
import os

from stele import anchortable
from stele.anchortable import TABLE_FILE, facts_anchored_to, heads
from stele.project import Project
from tests.factfiles import write, write_fact


def age(root, seconds=10):
    """Backdate every fact file so none is 'racy' (modified in the clock tick the table was written)."""
    for path in (root / "docs/memory").rglob("*.md"):
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns - seconds * 10**9, st.st_mtime_ns - seconds * 10**9))


def counting(monkeypatch):
    parsed = []
    real = anchortable._parse_head
    monkeypatch.setattr(anchortable, "_parse_head", lambda root, rel: parsed.append(rel) or real(root, rel))
    return parsed


def test_table_is_built_reused_and_refreshed(repo, monkeypatch):
    p = Project(repo)
    rel = write_fact(repo, "RISK-AAAA", "risk", anchors=["src/a.py::f"])
    write_fact(repo, "DEC-BBBB", "decision", anchors=["src/**/*.py"])
    write(repo, "docs/memory/notes/plain.md", "no frontmatter\n")
    age(repo)
    parsed = counting(monkeypatch)

    assert sorted(h.id for h in heads(p)) == ["DEC-BBBB", "RISK-AAAA"]
    assert len(parsed) == 3 and (repo / ".stele/index" / TABLE_FILE).is_file()
    parsed.clear()
    assert sorted(h.id for h in heads(p)) == ["DEC-BBBB", "RISK-AAAA"] and parsed == []

    write_fact(repo, "RISK-AAAA", "risk", title="Changed", anchors=["src/b.py"])
    assert {h.id: h.title for h in heads(p)}["RISK-AAAA"] == "Changed" and parsed == [rel]
    assert [f.id for _, f in facts_anchored_to(p, ["src/b.py"])["src/b.py"]] == ["DEC-BBBB", "RISK-AAAA"]
    (repo / rel).unlink()
    assert [h.id for h in heads(p)] == ["DEC-BBBB"]


def test_a_racy_file_is_read_again_until_it_is_old_enough(repo, monkeypatch):
    p = Project(repo)
    rel = write_fact(repo, "RISK-AAAA", "risk", anchors=["src/a.py"])
    parsed = counting(monkeypatch)
    heads(p)
    heads(p)
    assert parsed == [rel, rel]  # just written: not trusted yet
    age(repo)
    heads(p)
    parsed.clear()
    heads(p)
    assert parsed == []


def test_a_corrupt_table_is_rebuilt(repo):
    write_fact(repo, "RISK-AAAA", "risk", anchors=["src/a.py"])
    path = repo / ".stele/index" / TABLE_FILE
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    assert [h.id for h in heads(Project(repo))] == ["RISK-AAAA"]
    assert path.read_bytes().startswith(b"SQLite format 3")


def test_lookup_matches_paths_folders_globs_and_symbols(repo):
    write_fact(repo, "RISK-AAAA", "risk", anchors=["src/a.py::f"])
    write_fact(repo, "DEC-BBBB", "decision", anchors=["src/**/*.py"])
    write_fact(repo, "NOTE-CCCC", "note", anchors=["docs/", "*.md"])
    files = ["src/a.py", "src/x/b.py", "README.md", "docs/a/b.txt", "src/a.txt"]
    found = facts_anchored_to(Project(repo), files)
    assert sorted(f.id for _, f in found["src/a.py"]) == ["DEC-BBBB", "RISK-AAAA"]
    assert [a for a, _ in found["src/a.py"] if a.endswith("::f")] == ["src/a.py::f"]
    assert [f.id for _, f in found["src/x/b.py"]] == ["DEC-BBBB"]
    assert [(a, f.id) for a, f in found["README.md"]] == [("*.md", "NOTE-CCCC")]
    assert [f.id for _, f in found["docs/a/b.txt"]] == ["NOTE-CCCC"]
    assert found["src/a.txt"] == []


def test_no_table_is_written_where_stele_is_not_initialised(plain_repo):
    write_fact(plain_repo, "RISK-AAAA", "risk", anchors=["src/a.py"])
    assert [h.id for h in heads(Project(plain_repo))] == ["RISK-AAAA"]
    assert not (plain_repo / ".stele").exists()
