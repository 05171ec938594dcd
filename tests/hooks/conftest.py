"""The record the hook tests share: a few facts of each delivery, status and anchor shape, with fixed
ids so golden outputs can pin them, written long before any session starts."""
import os

import pytest

from tests.helpers import write_fact


@pytest.fixture
def record(repo):
    write_fact(repo, "INS-0001", "instruction", "Open a pull request for every change",
               "Never push to main directly; open a pull request.")
    write_fact(repo, "CON-0002", "constraint", "Python 3.11 is the floor", "We support Python 3.11 and newer.",
               priority="high", delivery="always")
    write_fact(repo, "INS-0003", "instruction", "Old rule", "Retired.", status="retired")
    write_fact(repo, "INS-0004", "instruction", "Expired rule", "Gone.", expires="2020-01-01")
    write_fact(repo, "TASK-0005", "task", "Rate limiter rewrite", status="in-progress")
    write_fact(repo, "TASK-0006", "task", "Done already", status="done")
    write_fact(repo, "RISK-0007", "risk", "Middleware order is load-bearing",
               "Moving the limiter behind auth let floods reach bcrypt.", anchors=["src/auth/**"],
               links={"caused-by": ["DEC-0008"]})
    write_fact(repo, "DEC-0008", "decision", "Rate limiter runs before the auth middleware",
               "Nov 2025: moving the rate limiter behind auth let unauthenticated floods reach bcrypt. 4h outage.",
               anchors=["src/auth/middleware.py::RateLimiter.check"])
    write_fact(repo, "DEC-0009", "decision", "Invoices are immutable", "Billing corrections are new invoices.",
               anchors=["src/billing.py"])
    write_fact(repo, "LSN-0011", "lesson", "Token bucket refill must use monotonic time",
               "Wall-clock jumps refilled the rate limiter bucket: use time.monotonic().",
               links={"relates-to": ["DEC-0008"]})
    old = 1_000_000_000  # facts written long before any session
    for path in (repo / "docs/memory").rglob("*.md"):
        os.utime(path, (old, old))
    return repo
