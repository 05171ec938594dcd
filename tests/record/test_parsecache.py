import os
from pathlib import Path

import pytest

from stele.project import Project
from stele.record import frontmatter, parsecache
from stele.record.load import load

FILES = {
    "decisions/DEC-AAAA.md": "---\nid: DEC-AAAA\nkind: decision\ntitle: Use a queue\n# a comment\n"
                             "tags: [a, b]\nlinks:\n  caused-by: [RISK-BBBB]\n---\nBody of the decision.\n",
    "risks/RISK-BBBB.md": "\ufeff---\r\nid: RISK-BBBB\r\nkind: risk\r\ntitle: 'Quoted: title'\r\n"
                          "anchors:\n  - src/a.py::f\n---\r\nmentions DEC-AAAA\r\n",
    "notes/NOTE-1111.md": "---\n{id: NOTE-1111, kind: note, title: flow style}\n---\nOne-line mapping.\n",
    "notes/NOTE-2222.md": "---\nid: NOTE-2222\nkind: note\ntitle: &t anchored\nsummary: *t\nextra: !!binary aGk=\n"
                          "when: !!timestamp 2026-01-02\n---\nunusual values\n",
    "notes/bad.md": "---\nid: NOTE-3333\nkind: [\n---\nbroken YAML\n",
}


@pytest.fixture
def project(plain_repo: Path) -> Project:
    for rel, text in FILES.items():
        path = plain_repo / "docs" / "memory" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return Project(plain_repo)


def parses(monkeypatch) -> list[str]:
    """Count calls of the real parser from here on."""
    calls: list[str] = []
    real = frontmatter.parse

    def counted(text: str) -> frontmatter.Document:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(frontmatter, "parse", counted)
    return calls


def snapshot(project: Project) -> tuple:
    """Everything a load gives, to compare a load from the cache with a load that parsed."""
    record = load(project)
    docs = {fid: (f.doc.meta, f.doc.body, f.doc.raw, f.doc.key_lines, f.doc.item_lines, f.doc.blocks,
                  f.doc.preamble) for fid, f in record.facts.items() if f.doc}
    return {fid: f.as_dict() for fid, f in record.facts.items()}, docs, [str(p) for p in record.problems]


def test_a_second_load_parses_only_what_it_must_and_gives_the_same_record(project, monkeypatch):
    first = snapshot(project)
    assert parsecache.location(project).is_file()
    calls = parses(monkeypatch)
    assert snapshot(project) == first
    # the broken file is parsed (and reported) every time; so is the one with a `!!timestamp` date,
    # a value the cache cannot hold; the rest come from the cache
    assert sorted(text.split("\n")[1] for text in calls) == ["id: NOTE-2222", "id: NOTE-3333"]
    monkeypatch.setenv(parsecache.ENV, "0")
    assert snapshot(project) == first


def test_an_edit_is_seen_even_when_size_and_mtime_stay_the_same(project):
    path = project.memory_dir / "decisions" / "DEC-AAAA.md"
    load(project)
    stat = path.stat()
    path.write_text(path.read_text().replace("Use a queue", "Use a QUEUE"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert load(project).facts["DEC-AAAA"].title == "Use a QUEUE"


def test_the_cache_keeps_only_the_current_files(project):
    load(project)
    (project.memory_dir / "decisions" / "DEC-AAAA.md").unlink()
    load(project)
    assert len(parsecache._read(parsecache.location(project))) == 2  # RISK-BBBB and NOTE-1111 (not the dated note)


@pytest.mark.parametrize("damage", [
    b"",
    b"not a cache at all",
    parsecache.MAGIC + b"another parser's stamp\n" + b"\x00",
    "header",  # the right header, then garbage
    "truncated",
    "entries",  # valid marshal data of the wrong shape
])
def test_a_damaged_or_foreign_cache_is_ignored_and_written_anew(project, monkeypatch, damage):
    import marshal

    first = snapshot(project)
    path = parsecache.location(project)
    good = path.read_bytes()
    head = parsecache.MAGIC + parsecache._stamp()
    path.write_bytes({"header": head + b"\xff\xfe garbage",
                      "truncated": good[: len(good) // 2],
                      "entries": head + marshal.dumps({key: marshal.dumps((1, 2, 3)) for key in
                                                       parsecache._read(path)})}.get(damage, damage))
    assert snapshot(project) == first
    assert path.read_bytes() == good
    calls = parses(monkeypatch)
    assert snapshot(project) == first and len(calls) == 2


def test_the_cache_lives_in_the_git_dir_and_never_in_the_work_tree(project, tmp_path):
    load(project)
    assert parsecache.location(project) == project.root / ".git" / "stele" / "parse-cache"
    assert not list(project.root.glob(".stele/**/parse-cache"))
    plain = tmp_path / "no-git"
    (plain / "docs" / "memory").mkdir(parents=True)
    (plain / "docs" / "memory" / "DEC-AAAA.md").write_text(FILES["decisions/DEC-AAAA.md"])
    assert list(load(Project(plain)).facts) == ["DEC-AAAA"]
    assert not (plain / ".git").exists()  # no git dir is made to hold a cache


def test_turned_off_it_is_neither_read_nor_written(project, monkeypatch):
    monkeypatch.setenv(parsecache.ENV, "0")
    load(project)
    assert not parsecache.location(project).exists()


def test_an_unwritable_cache_is_no_error(project, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(parsecache.atomic, "write", refuse)
    assert sorted(load(project).facts) == ["DEC-AAAA", "NOTE-1111", "NOTE-2222", "RISK-BBBB"]
