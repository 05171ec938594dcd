from pathlib import Path

from stele.project import Project
from stele.record.load import load


def write(root: Path, rel: str, text: str) -> None:
    path = root / "docs" / "memory" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fact(fid: str, kind: str, extra: str = "", body: str = "body") -> str:
    return f"---\nid: {fid}\nkind: {kind}\ntitle: {fid} title\n{extra}---\n{body}\n"


def test_loads_facts_and_skips_readme_and_plain_markdown(tmp_path):
    write(tmp_path, "README.md", "# Memory\n")
    write(tmp_path, "notes.md", "just notes, no frontmatter\n")
    write(tmp_path, "decisions/DEC-AAAA.md", fact("DEC-AAAA", "decision"))
    record = load(Project(tmp_path))
    assert list(record.facts) == ["DEC-AAAA"] and record.problems == []


def test_duplicate_ids_and_dangling_links_are_problems_with_lines(tmp_path):
    write(tmp_path, "a/DEC-AAAA.md", fact("DEC-AAAA", "decision", "links:\n  caused-by: [RISK-ZZZZ]\n"))
    write(tmp_path, "b/DEC-AAAA-copy.md", fact("DEC-AAAA", "decision"))
    record = load(Project(tmp_path))
    messages = [str(p) for p in record.problems]
    assert any(m.startswith("docs/memory/b/DEC-AAAA-copy.md:2: duplicate id DEC-AAAA") for m in messages), messages
    assert any(m.startswith("docs/memory/a/DEC-AAAA.md:6: dangling link caused-by -> RISK-ZZZZ") for m in messages)


def test_graph_has_declared_edges_and_mentions_both_ways(tmp_path):
    write(tmp_path, "DEC-AAAA.md", fact("DEC-AAAA", "decision", "links:\n  caused-by: [RISK-BBBB]\n",
                                        body="see TASK-CCCC and TASK-9999 (unknown)"))
    write(tmp_path, "RISK-BBBB.md", fact("RISK-BBBB", "risk", body="mentions DEC-AAAA"))
    write(tmp_path, "TASK-CCCC.md", fact("TASK-CCCC", "task"))
    g = load(Project(tmp_path)).graph
    out = {(e.rel, e.dst) for e in g.out["DEC-AAAA"]}
    assert out == {("caused-by", "RISK-BBBB"), ("mentions", "TASK-CCCC")}
    # RISK-BBBB mentions DEC-AAAA; DEC-AAAA declares caused-by to RISK-BBBB: both directions are walkable
    assert {other for _, other in g.neighbors("RISK-BBBB")} == {"DEC-AAAA"}
    assert {(e.rel, other) for e, other in g.neighbors("TASK-CCCC")} == {("mentions", "DEC-AAAA")}


def test_every_file_that_starts_with_dashes_is_loaded_or_reported(tmp_path):
    write(tmp_path, "notes/NOTE-1111.md", "---\n{id: NOTE-1111, kind: note, title: x}\n---\nOne-line mapping.\n")
    write(tmp_path, "notes/other.md", "---\ntitle: a page with frontmatter\n---\ntext\n")
    write(tmp_path, "notes/open.md", "---\nid: NOTE-2222\n")
    record = load(Project(tmp_path))
    assert list(record.facts) == ["NOTE-1111"] and record.facts["NOTE-1111"].title == "x"
    messages = sorted(str(p) for p in record.problems)
    assert messages[0].startswith("docs/memory/notes/open.md:1: the frontmatter is not closed")
    assert messages[1].startswith("docs/memory/notes/other.md:1: starts with `---` but its frontmatter has no "
                                  "`id` or `kind`")


def test_duplicate_keys_are_refused_naming_the_file_and_key(tmp_path):
    write(tmp_path, "d/DEC-B004.md", "---\nid: DEC-B004\nid: DEC-B005\nkind: decision\ntitle: t\n---\nx\n")
    write(tmp_path, "d/DEC-B006.md", "---\nid: DEC-B006\nkind: decision\ntitle: t\nstatus: current\n"
                                     "status: retired\n---\nx\n")
    record = load(Project(tmp_path))
    assert record.facts == {}
    assert sorted(map(str, record.problems)) == [
        "docs/memory/d/DEC-B004.md:3: duplicate key `id` (also on line 2): keep one",
        "docs/memory/d/DEC-B006.md:6: duplicate key `status` (also on line 5): keep one"]


def test_a_reader_sets_a_bad_file_aside_with_one_line_and_keeps_the_rest(tmp_path):
    write(tmp_path, "a/DEC-AAAA.md", fact("DEC-AAAA", "decision", "links:\n  caused-by: [RISK-ZZZZ]\n"))
    write(tmp_path, "a/DEC-BBBB.md", fact("DEC-BBBB", "decision", "created: 2026-02-30\nreview_after: soon\n"))
    write(tmp_path, "a/DEC-CCCC.md", fact("DEC-CCCC", "decision", "links:\n  relates-to: [DEC-AAAA]\n"))
    said = []
    record = load(Project(tmp_path)).usable(said.append)
    assert sorted(record.facts) == ["DEC-AAAA", "DEC-CCCC"]
    assert record.facts["DEC-AAAA"].links == {} and [e.dst for e in record.graph.out["DEC-CCCC"]] == ["DEC-AAAA"]
    assert said == [
        "docs/memory/a/DEC-AAAA.md:6: dangling link caused-by -> RISK-ZZZZ: no fact has that id; fix the id or "
        "remove the link; link ignored (`stele doctor` lists every problem)",
        "docs/memory/a/DEC-BBBB.md:5: `created` '2026-02-30' is not a date: write it as YYYY-MM-DD (and 1 more in "
        "the file); skipped (`stele doctor` lists every problem)"]


def test_one_walk_reads_the_files_paths_would_and_keeps_their_bytes(tmp_path):
    """`read_files` (one scandir walk, each file read once) finds, orders and reads exactly what
    `rglob`, path sorting and `read_text` did, and keeps the text as stored for the untrusted checks."""
    import os

    from stele.record.load import OUTSIDE, _is_candidate, read_files

    memory = tmp_path / "docs" / "memory"
    texts = {"a/x.md": "---\nid: A\n---\n", "a-b/x.md": "lone\rcarriage\r\nreturn", "a.b/y.md": "y",
             "A/z.md": "z", "z.md": "top", ".hidden/h.md": "h", "a/.h.md": "h", "README.md": "r",
             "deep/er/still/f.md": "f", "notes.MD": "n", "d.md/inner.md": "inner", "bom.md": "\ufeff---\n"}
    for rel, text in texts.items():
        (memory / rel).parent.mkdir(parents=True, exist_ok=True)
        (memory / rel).write_bytes(text.encode())
    (memory / "latin1.md").write_bytes(b"caf\xe9")
    (tmp_path / "outside.md").write_text("secret")
    os.symlink(tmp_path / "outside.md", memory / "out.md")  # a link out of the memory folder: read
    os.symlink(memory / "z.md", memory / "in-link.md")
    os.symlink(memory / "deep", memory / "linked-dir")  # never descended, as rglob does not
    os.symlink(memory / "gone.md", memory / "dangling.md")
    project = Project(tmp_path)

    expected = []
    for path in sorted(memory.rglob("*.md")):
        if not (_is_candidate(path.relative_to(memory).as_posix()) and path.is_file()):
            continue
        rel = project.rel(path)
        if path.is_symlink() and not project.contains(path):
            expected.append((rel, None, OUTSIDE))
            continue
        try:
            expected.append((rel, path.read_text(encoding="utf-8"), ""))
        except UnicodeDecodeError as e:
            expected.append((rel, None, str(e)))
    files = read_files(project)
    assert [(f.rel, f.text, f.error) for f in files] == expected
    assert len(expected) == 11 and expected[0][0] == "docs/memory/A/z.md"
    raw = {f.rel: f.raw for f in files}
    assert raw["docs/memory/a-b/x.md"] == "lone\rcarriage\r\nreturn"  # as stored
