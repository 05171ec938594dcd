"""`hooks.hold_edits`: the facts reach the model before the edit, in the harnesses that take a reasoned
refusal from a pre-edit hook (Claude Code and Codex; docs/hooks.md has the table).

The record gets a constraint anchored to `JobQueue.claim`, the symbol the turn's second edit lands in,
worded so that the prompt's recall does not bring it (a fact already shown is not held for). The model
makes a refused edit again (`retry_script`). From the requests: the first request after the queue.py
edit attempt carries the held constraint while queue.py is still unchanged on disk, and the retry
goes through, so the turn ends with both edits applied.
"""
from __future__ import annotations

import pytest

from . import checks as checks_mod
from . import observe
from .conftest import need
from .drivers import remember, run_turn
from .mockmodel import QUEUE, QUEUE_NEW, retry_script
from .test_turn import applied, set_config

HELD = "Stele held this edit once"
CAN_HOLD = ("claude", "codex")


def add_constraint(root) -> str:
    """A constraint anchored where the second edit lands; its id."""
    return remember(root, "Job rows are claimed one at a time inside a transaction that "
                    "commits before the handler runs; a handler never holds the row lock.",
                    "--kind", "constraint", "--title", "A claimed job row is never locked while its handler runs",
                    "--anchor", f"{QUEUE}::JobQueue.claim")


@pytest.mark.parametrize("name", CAN_HOLD)
def test_a_held_edit_shows_its_constraint_before_the_edit(name, demo_repo, tmp_path):
    need(name)
    added: list[str] = []

    def prepare(root):
        set_config(root, "hold_edits", "true")
        added.append(add_constraint(root))

    run = run_turn(name, demo_repo, tmp_path, after_install=prepare, script=retry_script())
    (fact,) = added
    ch = checks_mod.Checks(name, run.describe())
    applied(ch, run)
    held = [r for r in observe.carried(run.server.agent_requests(), HELD) if fact in r.text]
    first = min(held, key=lambda r: r.at) if held else None
    ch.check("held-with-the-fact", first is not None, f"no request carried the hold of {fact}")
    ch.check("held-before-the-edit", first is not None and QUEUE_NEW not in first.files.get(QUEUE, QUEUE_NEW),
             "queue.py was already changed when the model read the held fact")
    prompt_ids = {i for d in observe.deliveries(run.server.agent_requests()) if d.step == 0 for i in d.ids}
    ch.check("not-shown-before", fact not in prompt_ids, f"{fact} came with the prompt: nothing to hold")
    ch.verdict()
