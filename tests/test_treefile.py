"""treefile: a working-tree file an anchor or an edit names is read only when it is a regular file."""
import os
import subprocess
import sys

import pytest

from stele import treefile
from tests.factfiles import write_fact


def test_a_regular_file_reads_like_path_read_text(tmp_path):
    (tmp_path / "a.py").write_bytes(b"one\r\ntwo\rthree\n")
    assert treefile.read_text(tmp_path / "a.py") == (tmp_path / "a.py").read_text(encoding="utf-8")
    assert treefile.read_bytes(tmp_path / "a.py") == b"one\r\ntwo\rthree\n"


def test_a_device_a_fifo_and_a_folder_are_refused_without_reading_or_blocking(tmp_path):
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo.py")
    for name in ("zero.py", "fifo.py", "."):
        with pytest.raises(OSError):
            treefile.read_bytes(tmp_path / name)


@pytest.mark.parametrize("args", [("anchored", "src/zero.py"), ("doctor",)])
def test_an_anchor_on_a_link_to_dev_zero_does_not_read_it(repo, args):
    """A pull request's `src/zero.py -> /dev/zero` and a fact anchored to it: every reader of the
    anchored code read the "file" until memory ran out (exit 3, MemoryError, under a 2 GB limit)."""
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src/zero.py").symlink_to("/dev/zero")
    write_fact(repo, "DEC-2E70", "decision", title="The zero module", body="About zero.",
               anchors=["src/zero.py::Thing"])
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
    run = subprocess.run([sys.executable, "-c", limit + "from stele.cli.entry import main; raise SystemExit(main())", *args],
                         cwd=repo, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert "MemoryError" not in run.stderr and run.returncode in (0, 1), run.stderr
    if args[0] == "anchored":
        assert "DEC-2E70" in run.stdout


def test_a_link_out_of_the_root_is_refused_and_one_inside_it_is_read(tmp_path):
    """A pull request's `src/mod.py -> /elsewhere/mod.py` with a fact anchored to a symbol in it: the
    anchor resolved through the link, and the outside file's lines could reach an agent's context."""
    outside, repo = tmp_path / "outside", tmp_path / "repo"
    (outside).mkdir()
    (repo / "src").mkdir(parents=True)
    (outside / "mod.py").write_text("def SECRETFN():\n    pass\n", encoding="utf-8")
    (repo / "src/real.py").write_text("def inside():\n    pass\n", encoding="utf-8")
    (repo / "src/mod.py").symlink_to(outside / "mod.py")
    (repo / "src/alias.py").symlink_to(repo / "src/real.py")
    with pytest.raises(OSError):
        treefile.read_bytes(repo / "src/mod.py", repo)
    assert treefile.read_text(repo / "src/alias.py", root=repo).startswith("def inside")
    assert treefile.read_bytes(repo / "src/mod.py").startswith(b"def SECRETFN")  # no root: not asked

    from stele.anchors.resolve import WorkTree

    tree = WorkTree(repo)
    assert tree.read("src/mod.py") is None
    assert tree.read("src/alias.py") is not None


def test_a_file_over_the_limit_is_refused_from_its_size(tmp_path):
    """`stele import` reads whole files a pull request may add: a 200 MB "ADR" was read into memory
    (and twice over as text) before anything looked at it."""
    (tmp_path / "big.md").write_bytes(b"x" * 5000)
    with pytest.raises(OSError, match="5,000 bytes, over the limit of 4,999"):
        treefile.read_bytes(tmp_path / "big.md", limit=4999)
    assert treefile.read_bytes(tmp_path / "big.md", limit=5000) == b"x" * 5000
