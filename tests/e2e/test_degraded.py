"""The same turn must complete, both edits applied, whatever state Stele is in.

Hooks fail open in every harness: with Stele switched off, its index corrupt, its config broken, a
1 ms hook budget, its state folder unwritable, or `stele` not on PATH at all (a teammate who never
installed it, in a repository whose hook config is committed), the harness runs the turn as if Stele
were not there. Where the harness reports hook outcomes (Claude Code's stream-json), no Stele hook
may show as failed either.
"""
from __future__ import annotations

import shutil

import pytest

from . import checks as checks_mod
from .conftest import need
from .drivers import DRIVERS, run_turn
from .test_turn import applied, set_config


def _corrupt_index(root):
    for path in (root / ".stele" / "index").rglob("*"):
        if path.is_file():
            path.write_bytes(b"\x00garbage\xff" * 64)


def _broken_config(root):
    (root / ".stele" / "config.yaml").write_text("retrieval: [this is not: valid yaml\n", encoding="utf-8")


def _tiny_budget(root):
    set_config(root, "hook_budget_ms", "1")


def _unwritable_state(root):
    # The suite runs as root in CI, where permission bits do not stop a write: a regular file where the
    # folder should be makes every write under it fail (ENOTDIR), as an unwritable folder would.
    state = root / ".stele" / "state"
    shutil.rmtree(state, ignore_errors=True)
    state.write_text("not a folder\n", encoding="utf-8")


CONDITIONS = {
    "stele-off": (None, {"STELE_OFF": "1"}, True),
    "corrupt-index": (_corrupt_index, {}, True),
    "broken-config": (_broken_config, {}, True),
    "1ms-budget": (_tiny_budget, {}, True),
    "unwritable-state": (_unwritable_state, {}, True),
    "stele-not-on-path": (None, {}, False),
}


@pytest.mark.parametrize("condition", list(CONDITIONS))
@pytest.mark.parametrize("name", list(DRIVERS))
def test_turn_completes(name, condition, demo_repo, tmp_path):
    need(name)
    damage, env, on_path = CONDITIONS[condition]
    run = run_turn(name, demo_repo, tmp_path, stele_on_path=on_path, extra_env=env, after_install=damage)
    ch = checks_mod.Checks(name, run.describe())
    applied(ch, run)
    failed_hooks = [e for e in run.events if e.get("subtype") == "hook_response"
                    and e.get("exit_code") not in (0, None) and e.get("outcome") != "cancelled"]
    ch.check(f"hooks-silent-{condition}", not failed_hooks,
             "; ".join(f"{e.get('hook_name')} exit {e.get('exit_code')}: {str(e.get('stderr'))[:200]}"
                       for e in failed_hooks))
    ch.results = [(f"{n}-{condition}" if not n.startswith("hooks-silent") else n, ok, d)
                  for n, ok, d in ch.results]
    ch.verdict()
