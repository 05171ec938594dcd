"""The code index: what it indexes, how little a refresh redoes, and search over chunks."""
import os

from stele.index import code
from stele.project import Project
from tests.helpers import git


def write(root, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def refresh(root) -> tuple[code.CodeIndex, code.Report]:
    report = code.Report()
    return code.refresh(Project(root), report), report


def test_source_files_git_tracks_or_would_track_are_indexed(repo):
    write(repo, "src/app.py", "def main():\n    return 1\n")
    write(repo, "src/new.py", "def just_written():\n    pass\n")  # untracked, not ignored
    write(repo, ".gitignore", "build/\n")
    write(repo, "build/gen.py", "def generated():\n    pass\n")
    write(repo, "README.md", "# docs are not code\n")
    write(repo, "Makefile", "test:\n\tpytest\n")
    write(repo, "docs/memory/notes/x.py", "def memory_is_not_code():\n    pass\n")
    git(repo, "add", "src/app.py", "README.md", "Makefile", "docs/memory/notes/x.py", ".stele")
    index, report = refresh(repo)
    assert sorted(index.files) == ["Makefile", "src/app.py", "src/new.py"] and report.files == 3
    assert index.chunks_of("src/app.py")[0].text == "def main():\n    return 1"


def test_a_refresh_redoes_only_what_changed(repo):
    for name in ("a", "b", "c"):
        write(repo, f"src/{name}.py", f"def {name}_function():\n    return '{name}'\n")
    git(repo, "add", "-A")
    _, first = refresh(repo)
    assert first.chunked == ["src/a.py", "src/b.py", "src/c.py"]
    _, again = refresh(repo)
    assert again.chunked == [] and again.removed == []
    os.utime(repo / "src/b.py", ns=(1, 1))  # touched, same content: rehashed, not re-chunked
    write(repo, "src/c.py",
          "def c_function():\n    return 'changed'\n\n\ndef brand_new_helper():\n    pass\n")
    (repo / "src/a.py").unlink()
    index, report = refresh(repo)
    assert report.chunked == ["src/c.py"] and report.removed == ["src/a.py"]
    assert [c.path for c in index.search("brand new helper", 5)] == ["src/c.py"]
    assert "src/a.py" not in {c.path for c in index.search("a_function", 5)}


def test_search_ranks_chunks_and_drops_stray_matches(repo):
    write(repo, "src/limit.py",
          "class RateLimiter:\n    def check(self, addr):\n        return self.rate_limit(addr)\n")
    write(repo, "src/misc.py", "def unrelated():\n    # one stray mention of a limit\n    return 0\n")
    git(repo, "add", "-A")
    index, _ = refresh(repo)
    hits = index.search("rate limiter check for an address", 10)
    assert [h.path for h in hits] == ["src/limit.py"]
    assert hits[0].names == ("RateLimiter", "check") and hits[0].text.startswith("class RateLimiter:")


def test_a_damaged_or_missing_index_is_rebuilt(repo):
    write(repo, "src/app.py", "def main():\n    return 1\n")
    git(repo, "add", "-A")
    refresh(repo)
    folder = code.code_dir(Project(repo))
    (folder / "manifest.json").write_text("{broken")
    index, report = refresh(repo)
    assert report.chunked == ["src/app.py"] and index.search("main", 5)[0].path == "src/app.py"
    for f in (folder / "text").iterdir():
        if f.name != "meta.json" and f.is_file():
            f.write_bytes(b"garbage")
    index, _ = refresh(repo)
    assert index.search("main", 5)[0].path == "src/app.py"


def test_python_files_are_cut_where_ast_says_definitions_start(repo):
    body = "".join(f"    step_{n}()\n" for n in range(30))
    write(repo, "src/tricky.py",
          f'def real():\n    doc = """\nunindented text\n\ndef not_a_definition():\n"""\n'
          f'{body}\n\ndef second():\n{body}')
    git(repo, "add", "-A")
    index, _ = refresh(repo)
    assert [c.start for c in index.chunks_of("src/tricky.py")] == [1, 39]


def test_no_code_index_where_stele_is_not_set_up(plain_repo):
    import pytest

    from stele.index.catalog import IndexUnavailable

    write(plain_repo, "src/app.py", "def main():\n    return 1\n")
    with pytest.raises(IndexUnavailable, match="stele init"):
        refresh(plain_repo)
    assert not (plain_repo / ".stele").exists()  # it would be untracked files in `git status`
