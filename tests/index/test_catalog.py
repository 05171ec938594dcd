"""The catalog's anchors table answers "which anchors cover this path?" exactly as the in-memory
`AnchorIndex` does: both file anchors with `anchors.paths.filed_under` and let `path_matches` and
`inside` decide, so the hooks (catalog) and `stele review` at a revision (memory) cannot disagree."""
import pytest

from stele.anchors.paths import AnchorIndex, about, inside, split
from stele.index.catalog import Catalog
from stele.index.items import Item

ANCHORS = {
    "DEC-1": ["src/api/auth.py::RateLimiter.check", "docs"],
    "DEC-2": ["src/api", "src/api/**/*.py"],
    "DEC-3": ["src/*.py", "src/api/auth.py"],
    "DEC-4": ["**/*.md", "src/api/v2/[ab]*.py"],
    "DEC-5": ["src/apiary/x.py", "./src/api/"],
}
PATHS = ["src/api/auth.py", "src/api", "src/api/v2/a.py", "src/api/v2/c.py", "src/main.py", "src",
         "docs/intro.md", "README.md", "src/apiary/x.py", "lib/other.py"]


@pytest.fixture
def catalog(tmp_path):
    cat = Catalog(tmp_path / "catalog.sqlite", create=True)
    cat.add([Item(i, "committed", "decision", i, "", f"{i}.md", anchors=a) for i, a in ANCHORS.items()])
    yield cat
    cat.close()


def in_memory() -> AnchorIndex[str]:
    index: AnchorIndex[str] = AnchorIndex()
    for fact_id, anchors in ANCHORS.items():
        for anchor in anchors:
            index.add(anchor, fact_id)
    return index


def test_the_catalog_and_the_in_memory_index_find_the_same_anchors_in_the_same_order(catalog):
    memory = in_memory()
    rows = catalog.covering(PATHS)
    for path in PATHS:
        from_sql = [(i, f"{p}::{s}" if s else p) for i, p, s, _ in rows[path]]
        from_memory = [(i, "::".join(x for x in split(a) if x is not None)) for a, i in memory.lookup(path)]
        assert from_sql == from_memory, path
    # the nearest folder first
    assert [i for i, *_ in rows["src/api/v2/a.py"]] == ["DEC-4", "DEC-2", "DEC-2", "DEC-5"]
    assert [i for i, *_ in rows["src/apiary/x.py"]] == ["DEC-5"]  # src/api is not a prefix of src/apiary
    assert rows["lib/other.py"] == []


def test_anchors_inside_a_folder_follow_the_same_rule(catalog):
    for folder in ("src/api", "src", "docs", ""):
        expected = [(i, a) for i, anchors in ANCHORS.items() for a in anchors if inside(split(a)[0], folder)]
        got = [(i, f"{p}::{s}" if s else p) for i, p, s, _ in catalog.anchors_inside(folder)]
        assert [i for i, _ in got] == [i for i, _ in expected], folder
    assert {i for i, *_ in catalog.anchors_inside("src/api")} == {"DEC-1", "DEC-2", "DEC-3", "DEC-4", "DEC-5"}
    assert about("src/api/auth.py::X", "src") and about("src", "src/api/auth.py")
    assert not about("src/apiary/x.py", "src/api")
