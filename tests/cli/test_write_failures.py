"""A machine that cannot take the write (full disk, read-only folder, something of the wrong type in the
way) gets one clear line and exit 1, never "internal error", and the record is as it was."""
import errno
import json
import os
import subprocess
import sys

import pytest

from stele import atomic
from tests.helpers import invoke


def _facts(repo):
    return {p: p.read_bytes() for p in (repo / "docs/memory").rglob("*") if p.is_file()}


@pytest.mark.parametrize("code,hint", [(errno.EROFS, "read-only"), (errno.EACCES, "permissions"),
                                       (errno.ENOSPC, "free some space")])
def test_a_write_the_system_refuses_is_one_line_and_exit_1(repo, monkeypatch, code, hint):
    fid = json.loads(invoke("remember", "Invoices are immutable.", "--kind", "decision", "--json").out)["id"]
    before = _facts(repo)
    real = atomic._fill

    def refuse(fd, tmp, path, *a):
        os.close(fd)
        os.unlink(tmp)
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(atomic, "_fill", refuse)
    for args in (("edit", fid, "--add-tag", "billing"), ("remember", "Another fact entirely.", "--kind", "note")):
        r = invoke(*args)
        lines = r.err.strip().splitlines()
        assert r.code == 1 and len(lines) == 1 and hint in lines[0] and "internal error" not in r.err, r.err
        assert "docs/memory" in lines[0] and "nothing was half-written" in lines[0]
    monkeypatch.setattr(atomic, "_fill", real)
    assert _facts(repo) == before
    assert not list((repo / ".git/stele/tmp").iterdir())


def test_an_index_path_of_the_wrong_type_is_one_line(repo):
    invoke("remember", "Invoices are immutable.", "--kind", "decision")
    index = repo / ".stele/index"
    if index.exists():
        import shutil

        shutil.rmtree(index)
    index.write_text("not a folder")
    r = invoke("rebuild")
    assert r.code == 1 and ".stele/index" in r.err and "move it aside" in r.err and "internal error" not in r.err


def test_a_fact_write_over_the_file_size_limit_changes_nothing(repo):
    invoke("remember", "Invoices are immutable.", "--kind", "decision")
    before = _facts(repo)
    code = ("import resource, signal\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))\n"
            "from stele.cli.entry import main\n"
            "main(['remember', 'A long enough fact to pass the limit of sixty-four bytes.', '--kind', 'note'])\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 1 and "size limit" in done.stderr and "internal error" not in done.stderr
    assert _facts(repo) == before
