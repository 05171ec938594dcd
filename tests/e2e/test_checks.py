"""Executable constraints in the real harnesses: a pre-edit check with `enforce: deny` stops an edit
that adds the forbidden pattern, and the model is told why (issue 29).

The record gets a constraint anchored to queue.py whose check forbids what the turn's second edit
adds (`SKIP LOCKED`), written with `stele remember --check-forbid ... --enforce deny`. The model makes
the demo turn (edit gc.py, edit queue.py, answer). From the requests and the disk: a request after the
queue.py edit carries Stele's refusal naming the fact's id and title and the offending line, queue.py
is unchanged (the edit was stopped, not undone), the gc.py edit went through, and the turn completed.
"""
from __future__ import annotations

import pytest

from . import checks as checks_mod
from . import observe
from .conftest import need
from .drivers import remember, run_turn
from .mockmodel import ANSWER, FOLLOW_UP, GC, GC_NEW, QUEUE, QUEUE_NEW, QUEUE_OLD, demo_script

REFUSED = "Stele refused this edit"
TITLE = "Job claims never use SKIP LOCKED"
CAN_DENY = ("claude", "codex")


def add_constraint(root) -> str:
    """The constraint with its deny check, through the CLI; its id."""
    return remember(root, "Claims take the row lock in a short transaction; the queue "
                    "scan is ordered by priority, and skipping locked rows starves urgent jobs.",
                    "--kind", "constraint", "--title", TITLE, "--anchor", QUEUE,
                    "--check-forbid", "SKIP LOCKED", "--enforce", "deny")


@pytest.mark.parametrize("name", CAN_DENY)
def test_a_deny_check_stops_the_edit_and_the_model_is_told_why(name, demo_repo, tmp_path):
    need(name)
    added: list[str] = []
    run = run_turn(name, demo_repo, tmp_path, after_install=lambda root: added.append(add_constraint(root)),
                   script=demo_script())
    (fact,) = added
    ch = checks_mod.Checks(name, run.describe())
    gc, queue = (run.root / GC).read_text(encoding="utf-8"), (run.root / QUEUE).read_text(encoding="utf-8")
    ch.check("turn-completed", run.returncode == 0 and run.answer.endswith((ANSWER, FOLLOW_UP)),
             f"exit {run.returncode}, answer {run.answer[:200]!r}")
    ch.check("other-edit-applied", GC_NEW in gc, "gc.py was not edited")
    ch.check("edit-stopped", QUEUE_NEW not in queue and QUEUE_OLD in queue, "queue.py was changed")
    told = [r for r in observe.carried(run.server.agent_requests(), REFUSED) if fact in r.text]
    ch.check("model-told", bool(told), f"no request carried the refusal naming {fact}")
    text = told[0].text if told else ""
    ch.check("told-why", TITLE in text and "(FOR UPDATE SKIP LOCKED)" in text and "/SKIP LOCKED/" in text,
             "the refusal lacks the title, the offending line or the pattern")
    ch.verdict()
