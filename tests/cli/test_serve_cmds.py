"""`stele serve` as a user starts it: a real process on a free port, answered over HTTP the way curl
would ask (the acceptance checks of issue 9), and `stele mcp` failing cleanly outside a repository."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from stele.project import Project
from stele.record import edit
from tests.helpers import invoke


def fetch(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


@pytest.fixture
def served(repo):
    dec = edit.remember(Project(repo), "Rate limiting runs before auth, so floods never reach bcrypt.",
                          kind="decision").fact
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "stele", "serve", "--port", "0"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert "http://127.0.0.1:" in first, first + proc.stderr.read()
        yield first.split(" at ")[1].split()[0].rstrip("/"), dec.id, proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_curl_acceptance_missing_or_long_q_is_400_and_limit_is_capped(served):
    base, dec_id, _ = served
    assert fetch(f"{base}/api/memory/retrieve")[0] == 400
    assert fetch(f"{base}/api/memory/retrieve?q=" + "a" * 2049)[0] == 400
    question = "where+does+rate+limiting+sit+relative+to+auth"
    status, data = fetch(f"{base}/api/memory/retrieve?q={question}&limit=100")
    assert status == 200 and data["limit"] == 32 and len(data["results"]) <= 32
    assert dec_id in [r["id"] for r in data["results"]]
    assert fetch(f"{base}/api/memory/facts/{dec_id}")[1]["id"] == dec_id


def test_requests_are_logged_on_stderr_not_stdout(served):
    base, _, proc = served
    fetch(f"{base}/api/memory/facts")
    proc.terminate()
    out, err = proc.communicate(timeout=10)
    assert out == "" and '"GET /api/memory/facts HTTP/1.1" 200' in err


def test_bad_port_and_busy_port_are_clear_errors(repo):
    r = invoke("serve", "--port", "70000")
    assert r.code == 2 and "--port 70000" in r.err
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        r = invoke("serve", "--port", str(s.getsockname()[1]))
    assert r.code == 1 and "cannot listen on 127.0.0.1" in r.err and "Traceback" not in r.err


def test_mcp_outside_a_repository_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("mcp")
    assert r.code == 1 and "not inside a git repository" in r.err
