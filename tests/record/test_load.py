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
