"""The resident server answers exactly as a fresh process would, sees every edit, and steps aside."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stele.serve import resident
from tests import factfiles
from tests.helpers import git, write_fact

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"),
                                reason="the resident server is Linux only")
STELE = [sys.executable, "-m", "stele"]


def env(**extra: str) -> dict:
    return {**os.environ, "STELE_RESIDENT": "1", **extra}


@pytest.fixture
def server(repo, request):
    write_fact(repo, "DEC-AAA1", "decision", "Payment webhooks are deduplicated by their event id")
    write_fact(repo, "LSN-BBB2", "lesson", "Cache keys carry the tenant so tenants never share entries")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "facts")
    factfiles.backdate(repo)  # out of the racy window: an edit must be seen by its stamp, not by content
    root = str(repo.resolve())
    proc = subprocess.Popen([sys.executable, "-m", "stele", "resident-serve", root], cwd=root,
                            env=env(STELE_RESIDENT_IDLE_S="120", **getattr(request, "param", {})),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    os.environ["STELE_RESIDENT"] = "1"  # for resident.request in this process (conftest restores it)
    deadline = time.monotonic() + 30
    while resident.request(root, "status") is None:
        assert proc.poll() is None, (repo / ".stele/run/resident.log").read_text(encoding="utf-8")
        assert time.monotonic() < deadline, "the server did not come up"
        time.sleep(0.05)
    yield repo
    resident.request(root, "stop")
    proc.wait(timeout=30)


def run(repo: Path, *args: str, stdin: str = "", resident_on: bool = True, usage: Path | None = None):
    extra = {"STELE_RESIDENT_USAGE": str(usage)} if usage else {}
    return subprocess.run([*STELE, *args], cwd=repo, input=stdin, capture_output=True, text=True,
                          env=env(**extra) if resident_on else {**os.environ, "STELE_RESIDENT": "0"})


def calls(usage: Path) -> int:
    return len(usage.read_text(encoding="utf-8").splitlines()) if usage.exists() else 0


def prompt(repo: Path, text: str, usage: Path, session: str = "s-1") -> str:
    payload = json.dumps({"session_id": session, "prompt": text, "hook_event_name": "UserPromptSubmit",
                          "cwd": str(repo)})
    done = run(repo, "hook", "prompt", "--harness", "claude", stdin=payload, usage=usage)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_answers_as_a_fresh_process_does(server, tmp_path):
    usage = tmp_path / "usage"
    here = run(server, "recall", "--json", "how are payment webhooks deduplicated", resident_on=False)
    there = run(server, "recall", "--json", "how are payment webhooks deduplicated", usage=usage)
    assert there.returncode == here.returncode == 0, there.stderr
    assert calls(usage) == 1  # it ran in the server
    drop = ("elapsed_ms", "timings")
    assert {k: v for k, v in json.loads(there.stdout).items() if k not in drop} == {
        k: v for k, v in json.loads(here.stdout).items() if k not in drop}
    bad = run(server, "search", "x", "--limit", "0", usage=usage)
    assert bad.returncode == 2 and "--limit 0" in bad.stderr  # exit code and stderr come back too


def each_kind_of_edit(repo: Path, usage: Path, first=lambda: None) -> None:
    """Save DEC-AAA1 in place (as VS Code does), by rename (as vim does) and put it back with git:
    the prompt after each finds the new text. `first` runs before each edit."""
    path = next((repo / "docs/memory").rglob("*AAA1*"))
    first()
    with open(path, "r+", encoding="utf-8") as f:
        text = f.read().replace("Payment webhooks are deduplicated by their event id",
                                "Zebra crossings switch to green after ninety seconds")
        f.seek(0)
        f.write(text)
        f.truncate()
    assert "DEC-AAA1" in prompt(repo, "when do zebra crossings switch to green?", usage, "s-2")
    first()
    other = path.with_name(".other.tmp")
    other.write_text(text.replace("Zebra crossings", "Harbour cranes").replace("switch to green", "lock down"),
                     encoding="utf-8")
    os.replace(other, path)
    assert "DEC-AAA1" in prompt(repo, "when do harbour cranes lock down after ninety seconds?", usage, "s-3")
    first()
    git(repo, "checkout", "-q", "--", ".")
    assert "DEC-AAA1" in prompt(repo, "how are payment webhooks deduplicated by event id?", usage, "s-4")


def test_every_kind_of_edit_reaches_the_next_hook(server, tmp_path):
    usage = tmp_path / "usage"
    assert "DEC-AAA1" in prompt(server, "how are payment webhooks deduplicated by event id?", usage)
    each_kind_of_edit(server, usage)
    assert calls(usage) == 4
    status = resident.request(str(server.resolve()), "status")
    assert status is not None and status["calls"] >= 4 and status["watching"]


def warm_spare(repo: Path) -> dict:
    """Wait until the server has a warm spare (after a call, its refresh, then the warm-up)."""
    deadline = time.monotonic() + 30
    while (status := resident.request(str(repo.resolve()), "status") or {}).get("spare") != "warm":
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    return status


def test_a_warm_spare_answers_as_a_fresh_process_does_and_sees_every_edit(server, tmp_path):
    usage = tmp_path / "usage"
    question = "how are payment webhooks deduplicated by event id?"
    assert "DEC-AAA1" in prompt(server, question, usage)  # the first call is forked: no spare yet
    before = warm_spare(server)["spared"]
    here = run(server, "recall", "--json", question, resident_on=False)
    there = run(server, "recall", "--json", question, usage=usage)
    drop = ("elapsed_ms", "timings")
    assert {k: v for k, v in json.loads(there.stdout).items() if k not in drop} == {
        k: v for k, v in json.loads(here.stdout).items() if k not in drop}
    assert warm_spare(server)["spared"] == before + 1  # the spare answered it, and a new one is warm
    each_kind_of_edit(server, usage, first=lambda: warm_spare(server))  # each while a spare waits
    assert calls(usage) == 5


def test_refuses_another_root_and_another_protocol(server):
    root = str(server.resolve())
    sock = resident._connect(root)
    assert sock is not None
    resident._send(sock, (resident.PROTOCOL, "status", root + "-not", [], "", {}, 0))
    assert resident._reply(sock) == b"R"
    sock.close()
    sock = resident._connect(root)
    resident._send(sock, (resident.PROTOCOL + 1, "status", root, [], "", {}, 0))
    assert resident._reply(sock) == b"R"
    sock.close()


def test_a_hook_starts_one_unless_the_config_says_no(repo, tmp_path):
    root = str(repo.resolve())
    config = repo / ".stele" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("  resident: true", "  resident: false"),
                      encoding="utf-8")
    assert resident.wanted(root) is False and resident.start(root) is False
    config.write_text(config.read_text(encoding="utf-8").replace("  resident: false", "  resident: true"),
                      encoding="utf-8")
    payload = json.dumps({"session_id": "s-1", "prompt": "anything at all about the record, at length",
                          "hook_event_name": "UserPromptSubmit", "cwd": root})
    done = run(repo, "hook", "prompt", "--harness", "claude", stdin=payload)
    assert done.returncode == 0
    os.environ["STELE_RESIDENT"] = "1"
    deadline = time.monotonic() + 30
    while (status := resident.request(root, "status")) is None:
        assert time.monotonic() < deadline, "the hook did not start a server"
        time.sleep(0.05)
    assert resident.start(root) is False  # not again within RESPAWN_S
    resident.request(root, "stop")
    while resident.request(root, "status") is not None:
        time.sleep(0.05)
    assert status["root"] == root


def test_status_and_stop_commands(server):
    from tests.helpers import invoke

    status = json.loads(invoke("resident", "status", "--json").out)
    assert status["running"] is True and status["root"] == str(server.resolve())
    assert "resident process" in invoke("resident", "status").out
    assert invoke("resident", "stop").out.strip() == "resident process stopped"
    deadline = time.monotonic() + 30
    while json.loads(invoke("resident", "status", "--json").out)["running"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert invoke("resident", "stop").out.strip() == "no resident process was running"
    assert "the next hook starts one" in invoke("resident", "status").out


CLIENT = """
import sys
before = set(sys.modules)
from stele.cli.entry import main
code = main(sys.argv[2:])
open(sys.argv[1], "w").write("\\n".join(sorted(set(sys.modules) - before)) + "\\n" + str(code))
"""


def test_a_call_the_server_answers_imports_next_to_nothing(server, tmp_path):
    report = tmp_path / "modules"
    usage = tmp_path / "usage"
    done = subprocess.run([sys.executable, "-c", CLIENT, str(report), "recall", "payment webhooks deduplicated"],
                          cwd=server, capture_output=True, text=True, env=env(STELE_RESIDENT_USAGE=str(usage)))
    assert done.returncode == 0 and "DEC-AAA1" in done.stdout, done.stderr
    *loaded, code = report.read_text(encoding="utf-8").splitlines()
    assert code == "0" and calls(usage) == 1
    heavy = {"socket", "json", "pathlib", "re", "typing", "tantivy", "sqlite3", "stele.project", "stele.index",
             "stele.retrieve", "stele.hooks", "stele.config"}
    assert not heavy & set(loaded), sorted(heavy & set(loaded))


@pytest.mark.parametrize("server", [{"STELE_BACKGROUND": "1"}], indirect=True)
def test_the_build_a_hook_leaves_is_finished_by_the_server(server, tmp_path):
    """A hook's refresh leaves new lines' vectors to the detached builder (DEC-QFQT), and the server's
    own refresh after the call does the same: the vectors arrive without anyone waiting for them."""
    from stele.index.catalog import Catalog

    usage = tmp_path / "usage"
    payload = json.dumps({"session_id": "s-bg", "prompt": "how are payment webhooks deduplicated by event id?",
                          "hook_event_name": "UserPromptSubmit", "cwd": str(server)})
    done = subprocess.run([*STELE, "hook", "prompt", "--harness", "claude"], cwd=server, input=payload,
                          capture_output=True, text=True, env=env(STELE_BACKGROUND="1",
                                                                   STELE_RESIDENT_USAGE=str(usage)))
    assert done.returncode == 0 and "DEC-AAA1" in done.stdout, done.stderr
    root = str(server.resolve())
    deadline = time.monotonic() + 60
    while True:
        status = resident.request(root, "status")
        cat = Catalog(server / ".stele/index/catalog.sqlite")
        try:
            whole = cat.meta("vectors_done") == "1"
        finally:
            cat.close()
        if whole and status and status["refreshes"] >= 1:
            break
        assert time.monotonic() < deadline, (status, whole)
        time.sleep(0.1)


PRELOAD_CHECK = r"""
import io, json, sys
root, note = sys.argv[1], sys.argv[2]
sys.argv = ["stele"]
from stele.serve import resident_server
resident_server._preload()
from stele import redact
from stele.cli import entry, fast  # entry.here imports fast before it starts the server
calls = [
    (["hook", "prompt", "--harness", "claude"], {"hook_event_name": "UserPromptSubmit",
                                                 "prompt": "are payment webhooks deduplicated? token=abc"}),
    (["hook", "session-start", "--harness", "claude"], {"hook_event_name": "SessionStart", "source": "startup"}),
    (["hook", "pre-edit", "--harness", "claude"], {"hook_event_name": "PreToolUse", "tool_name": "Edit",
                                                   "tool_input": {"file_path": note, "old_string": "a",
                                                                  "new_string": "b"}}),
    (["hook", "stop", "--harness", "claude"], {"hook_event_name": "Stop"}),
    (["recall", "payment webhooks deduplicated"], None),
    (["search", "cache keys tenant"], None),
]
out = {}
for argv, payload in calls:
    before, compiled = set(sys.modules), redact._compiled.cache_info().currsize
    sys.stdin = io.StringIO(json.dumps({"session_id": "s-9", "cwd": root, **payload}) if payload else "")
    real, sys.stdout = sys.stdout, io.StringIO()
    try:
        entry.here(argv)
    except SystemExit:
        pass
    finally:
        sys.stdout = real
    out[" ".join(argv[:2])] = [sorted(m for m in set(sys.modules) - before if m.startswith("stele")),
                               redact._compiled.cache_info().currsize - compiled]
print(json.dumps(out))
"""


def test_a_call_imports_and_compiles_nothing_the_server_did_not_preload(server):
    """What a forked child imports (or compiles) it pays for on every call: the server's PRELOAD
    covers every module and built-in pattern the hooks, `recall` and `search` reach."""
    root = str(server.resolve())
    note = str(next((server / "docs/memory").rglob("*.md")))
    run(server, "hook", "prompt", "--harness", "claude", stdin=json.dumps(
        {"session_id": "s-0", "prompt": "warm the index", "hook_event_name": "UserPromptSubmit", "cwd": root}),
        resident_on=False)
    done = subprocess.run([sys.executable, "-c", PRELOAD_CHECK, root, note], cwd=server, capture_output=True,
                          text=True, env={**os.environ, "STELE_RESIDENT": "0"})
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found == {name: [[], 0] for name in found} and len(found) == 6, json.dumps(found)
