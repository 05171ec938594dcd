"""Anchor path matching and the in-memory anchor index."""
import pytest

from stele.anchors.paths import AnchorIndex, covers, literal_dir


@pytest.mark.parametrize("pattern, folder", [("src/api/**/*.py", "src/api"), ("*.md", ""),
                                             ("src/*/x.py", "src"), ("a/b/c.py", "a/b")])
def test_literal_dir_is_the_folder_a_glob_cannot_leave(pattern, folder):
    assert literal_dir(pattern) == folder


def test_index_agrees_with_covers_for_every_anchor_and_file():
    anchors = ["src/auth.py", "src/auth.py::RateLimiter.check", "src", "src/api/**/*.py", "*.md",
               "src/*/x.py", "docs/", "./lib/a.js", "src/api/v?.py", "[ab].txt"]
    files = ["src/auth.py", "src/api/v1/a.py", "src/api/a.py", "README.md", "docs/x/README.md", "src/q/x.py",
             "x.py", "docs/a/b.md", "lib/a.js", "src/api/v2.py", "a.txt", "c.txt", "srcx/a.py"]
    index = AnchorIndex()
    for a in anchors:
        index.add(a, a)
    for f in files:
        assert sorted(a for a, _ in index.lookup(f)) == sorted(a for a in anchors if covers(a, f)), f
