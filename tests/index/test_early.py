"""The freshness scan a hook forks at its start (`index/early.py`) is the scan it would have taken.

Each case runs in a fresh interpreter: a pytest worker has threads of its own, and `early.start`
never forks beside another thread."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stele.index import early
from stele.index.sources import scan_early
from stele.project import Project
from tests.factfiles import backdate
from tests.fakes import write_fact
from tests.helpers import invoke

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the early scan forks on Linux only")

SCRIPT = """
import json, os, sys
from pathlib import Path
from stele.index import early, sources
from stele.project import Project
root, other = Path(sys.argv[1]), sys.argv[2]
p = Project(root)
taken = []
real_take = early.take
def spy(project, where):
    found = real_take(project, where)
    taken.append(found is not None)
    return found
early.take = spy
started = sources.scan_early(Project(Path(other)) if other else p)
got = sources.scan(p)
mine = sources.scan(p)  # the early result is taken once: this one is scanned here
try:
    os.waitpid(-1, os.WNOHANG)  # any child left behind?
    left = True
except ChildProcessError:
    left = False
print(json.dumps({"started": started, "taken": taken[0], "same": got.stats() == mine.stats(), "paths": len(got.paths),
                  "left": left, "again": early.take(p, sources.folders(p)) is None}))
"""


def run(root, other=""):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(root), other], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_early_scan_is_the_scan_and_leaves_no_child(repo):
    for n in range(30):
        write_fact(repo, f"DEC-{n:04d}", "decision", f"Decision number {n}")
    out = run(repo)
    assert out == {"started": True, "taken": True, "same": True, "paths": 30, "left": False, "again": True}


def test_an_early_scan_of_another_project_is_not_taken(repo, tmp_path):
    other = tmp_path / "other"
    (other / ".stele").mkdir(parents=True)
    write_fact(repo, "DEC-0001", "decision", "Decision number one")
    out = run(repo, str(other))
    assert out["started"] and not out["taken"] and out["same"] and out["paths"] == 1 and not out["left"]


def test_nothing_is_forked_beside_another_thread_or_outside_a_project(repo, tmp_path):
    import threading

    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not scan_early(Project(repo))  # this process has a second thread now
    finally:
        stop.set()
        t.join()
    assert early.take(Project(repo), []) is None
    out = run(repo, str(tmp_path))  # no .stele there: nothing to scan early
    assert out["started"] is False and not out["taken"] and out["same"] and not out["left"]


def test_a_prompt_hook_answers_the_same_with_the_early_scan(repo, tmp_path):
    """The console script forks the scan when the working directory is the project; run from
    elsewhere (the payload still names the project) it scans itself. Same record, same answer."""
    write_fact(repo, "DEC-AAAA", "decision", "Retries back off with jitter everywhere",
               "Every client retries with exponential backoff and full jitter.")
    backdate(repo, 60)
    assert invoke("rebuild").code == 0
    stele = str(Path(sys.executable).parent / "stele")
    outs = []
    for n, cwd in enumerate((repo, tmp_path)):
        payload = {"session_id": f"early-{n}", "transcript_path": "/t", "cwd": str(repo),
                   "hook_event_name": "UserPromptSubmit", "prompt": "how do our clients retry with backoff?"}
        done = subprocess.run([stele, "hook", "prompt", "--harness", "claude"], input=json.dumps(payload),
                              capture_output=True, text=True, cwd=cwd, timeout=60,
                              env={**os.environ, "STELE_RESIDENT": "0"})
        assert done.returncode == 0 and done.stderr == "", done.stderr
        outs.append(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])
    assert "DEC-AAAA" in outs[0] and outs[0] == outs[1]


def test_a_paused_repository_forks_no_scan(repo):
    """`stele pause`: the hooks read and write nothing, the early scan included (it would write the
    folders' listing)."""
    write_fact(repo, "DEC-AAAA", "decision", "Retries back off with jitter everywhere")
    assert invoke("rebuild").code == 0
    assert invoke("pause").code == 0
    listing = repo / ".stele/index/listing.marshal"
    listing.unlink(missing_ok=True)
    payload = {"session_id": "paused", "transcript_path": "/t", "cwd": str(repo),
               "hook_event_name": "UserPromptSubmit", "prompt": "how do our clients retry with backoff?"}
    done = subprocess.run([str(Path(sys.executable).parent / "stele"), "hook", "prompt", "--harness", "claude"],
                          input=json.dumps(payload), capture_output=True, text=True, cwd=repo, timeout=60,
                          env={**os.environ, "STELE_RESIDENT": "0"})
    assert done.returncode == 0 and "DEC-AAAA" not in done.stdout
    assert not listing.exists()


def test_a_pause_leaves_recall_its_early_scan(repo):
    """`stele pause` and `STELE_OFF` silence the hooks, not `stele recall`: it reads the index (and
    writes the folders' listing) whatever they say, so its scan still starts early."""
    write_fact(repo, "DEC-AAAA", "decision", "Retries back off with jitter everywhere",
               "Every client retries with exponential backoff and full jitter.")
    backdate(repo, 60)
    assert invoke("rebuild").code == 0
    assert invoke("pause").code == 0
    listing = repo / ".stele/index/listing.marshal"
    stele = str(Path(sys.executable).parent / "stele")
    code = ("import sys; from stele.cli import entry; from stele.index import early; entry._scan_early(hook=False);"
            " print(early._pending is not None); entry._scan_early(hook=True)")
    for env in ({}, {"STELE_OFF": "1"}):
        listing.unlink(missing_ok=True)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, timeout=60,
                              env={**os.environ, "STELE_RESIDENT": "0", **env})
        assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr
        done = subprocess.run([stele, "recall", "how do our clients retry with backoff?"], capture_output=True,
                              text=True, cwd=repo, timeout=60, env={**os.environ, "STELE_RESIDENT": "0", **env})
        assert done.returncode == 0 and "DEC-AAAA" in done.stdout, done.stderr
        assert listing.exists()
