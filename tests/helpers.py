"""Test helpers: run git, run `stele` in-process through its real entry point."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

TODAY = "2026-11-29"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@dataclass
class Result:
    code: int
    out: str
    err: str


# Set by the `resident` fixture (tests/conftest.py): hooks, `recall` and `search` then run as the
# console script does, in a process of their own that hands the call to a resident server running for
# the repository, instead of in-process (where a server could not write to the captured output).
RESIDENT: dict[str, bool] = {"on": False}
STARVED = "the resident process did not take this call within"  # the client's line when GO_S passed


def through_server(args: tuple[str, ...], input: str | None) -> Result:
    """`stele ARGS` as a process of its own, answered by the working directory's resident server
    (started first when none runs); fails when the server did not answer it."""
    import os
    import time

    from stele.cli.resident import client

    root = client.find_root(os.getcwd())
    env = {**os.environ, "STELE_RESIDENT": "1"}
    if root is not None and client.request(root, "status") is None:
        subprocess.Popen([sys.executable, "-m", "stele", "resident-serve", root], cwd=root, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while client.request(root, "status") is None:
            assert time.monotonic() < deadline, "the resident server did not come up"
            time.sleep(0.05)
    before = (client.request(root, "status") or {}).get("calls", 0) if root else 0
    done = subprocess.run([sys.executable, "-m", "stele", *args], input=input or "", capture_output=True,
                          text=True, env=env)
    # The one refusal allowed: a server starved past the go-ahead (GO_S) on an overloaded machine (a
    # suite beside a CPU hog and another suite), where the call runs in its own process by design, says
    # so in one stderr line, and answers the same. Any other refusal fails.
    err = "".join(x for x in done.stderr.splitlines(keepends=True) if STARVED not in x)
    if root is not None and err == done.stderr:
        assert (client.request(root, "status") or {}).get("calls", 0) == before + 1, \
            f"the resident server did not take `stele {' '.join(args)}`: {done.stderr}"
    return Result(done.returncode, done.stdout, err)



def invoke(*args: str, input: str | None = None, allow_bug: bool = False) -> Result:
    """Run `stele ARGS` in-process through the real entry point (error handler included); with
    RESIDENT on, hooks, `recall` and `search` through a resident server (`through_server`)."""
    from stele.cli.entry import main

    if RESIDENT["on"] and args[:1] in (("hook",), ("recall",), ("search",)) and args[1:2] != ("pre-commit",):
        result = through_server(args, input)
        if result.code == 3 and not allow_bug:
            raise AssertionError(f"stele {' '.join(args)} hit a bug:\n{result.err}")
        return result

    with CliRunner().isolation(input=input) as (out, err, _):
        try:
            code = main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        sys.stdout.flush()
        sys.stderr.flush()
        result = Result(code or 0, out.getvalue().decode(), err.getvalue().decode())
    if result.code == 3 and not allow_bug:
        raise AssertionError(f"stele {' '.join(args)} hit a bug:\n{result.err}")
    return result


def write_fact(root: Path, fact_id: str, kind: str, title: str, body: str = "", **meta) -> Path:
    """Write a fact file with a fixed id (tests need stable ids; `remember` draws random ones); the
    body defaults to the title. Written by `tests.factfiles`, the one test writer of fact files."""
    from tests import factfiles

    return root / factfiles.write_fact(root, fact_id, kind, title=title, body=body or title, **meta)


def hook(event: str, payload: dict | str | None = None, *flags: str) -> Result:
    """`stele hook EVENT FLAGS` with `payload` (a dict is sent as JSON) on stdin."""
    import json

    text = payload if isinstance(payload, str) or payload is None else json.dumps(payload)
    return invoke("hook", event, *flags, input=text or "")


def write_sample_record(repo: Path) -> Path:
    """A few facts of each delivery, status and anchor shape, with fixed ids so golden outputs can pin
    them, written long before any session starts (their mtime is in 2001)."""
    import os

    write_fact(repo, "INS-0001", "instruction", "Open a pull request for every change",
               "Never push to main directly; open a pull request.")
    write_fact(repo, "CON-0002", "constraint", "Python 3.11 is the floor",
               "We support Python 3.11 and newer.", priority="high", delivery="always")
    write_fact(repo, "INS-0003", "instruction", "Old rule", "Retired.", status="retired")
    write_fact(repo, "INS-0004", "instruction", "Expired rule", "Gone.", expires="2020-01-01")
    write_fact(repo, "TASK-0005", "task", "Rate limiter rewrite", status="in-progress")
    write_fact(repo, "TASK-0006", "task", "Done already", status="done")
    write_fact(repo, "RISK-0007", "risk", "Middleware order is load-bearing",
               "Moving the limiter behind auth let floods reach bcrypt.", anchors=["src/auth/**"],
               links={"caused-by": ["DEC-0008"]})
    write_fact(repo, "DEC-0008", "decision", "Rate limiter runs before the auth middleware",
               "Nov 2025: moving the rate limiter behind auth let unauthenticated floods reach bcrypt. "
               "4h outage.",
               anchors=["src/auth/middleware.py::RateLimiter.check"])
    write_fact(repo, "DEC-0009", "decision", "Invoices are immutable",
               "Billing corrections are new invoices.", anchors=["src/billing.py"])
    write_fact(repo, "LSN-0011", "lesson", "Token bucket refill must use monotonic time",
               "Wall-clock jumps refilled the rate limiter bucket: use time.monotonic().",
               links={"relates-to": ["DEC-0008"]})
    old = 1_000_000_000  # facts written long before any session
    for path in (repo / "docs/memory").rglob("*.md"):
        os.utime(path, (old, old))
    return repo


def approve_store(root: Path) -> None:
    """What `stele session sync --approve` records: this clone syncs with the store its config names."""
    from stele.project import Project
    from stele.session.remote import approve, configured

    project = Project(root)
    remote = configured(project)
    assert remote is not None
    approve(project, remote)


def point_store(repo: Path, store: str, endpoint: str, **session: int) -> None:
    """Point the committed config's `session.store` at `store` on `endpoint`, with the `session.*`
    settings given (`sync_deadline_ms=2000`), and approve it as `stele session sync --approve` does."""
    import re

    path = repo / ".stele" / "config.yaml"
    text = path.read_text().replace('  store: ""', f"  store: {store}")
    text = text.replace('  endpoint: ""', f"  endpoint: {endpoint}")
    for key, value in session.items():
        text, n = re.subn(rf"(?m)^  {key}: \d+", f"  {key}: {value}", text)
        assert n == 1, key
    path.write_text(text)
    approve_store(repo)


def unreachable_store(repo: Path, deadline_ms: int) -> None:
    """Point `session.store` at an S3 endpoint on 127.0.0.1 that nothing answers (a port bound and
    closed again), with a short sync deadline: what hooks do when the team store is down."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    point_store(repo, "s3://team-memory/app", f"http://127.0.0.1:{port}", sync_deadline_ms=deadline_ms)


POOL_QUESTION = "why was the connection pool timeout raised after the pool exhaustion alerts?"


def pool_notes(repo: Path) -> list[str]:
    """31 session notes on one topic, the 18th tagged with issue 101, and a 32nd carrying the rare
    token `zqxv9`, indexed: what the filter tests of the HTTP API and MCP ask `POOL_QUESTION` of.
    Returns the notes' ids in order."""
    from stele.project import Project
    from stele.session import sessions

    p = Project(repo)
    s = sessions.start(p, agent="codex", goal="Tune the connection pool").session
    ids = [sessions.log(p, s, "note", f"The connection pool timeout was raised to {30 + n} seconds after "
                        f"the pool exhaustion alerts (attempt {n})", issue="101" if n == 17 else "7").id
           for n in range(31)]
    ids.append(sessions.log(p, s, "note", "The connection pool timeout alerts stopped once zqxv9 was set").id)
    assert invoke("rebuild").code == 0
    return ids


def window(r) -> list[str]:
    """The ids a recall shows, risks first, as the hook prints them."""
    return [x.id for x in r.risks] + [x.id for x in r.entries]


def track(root: Path, *paths: str) -> None:
    """Commit empty files at `paths`: a repository's tree, for the rules that read tracked paths."""
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    subprocess.run(["git", "add", "--", *paths], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "tree"],
                   cwd=root, check=True)
