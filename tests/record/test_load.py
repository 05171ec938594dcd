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
