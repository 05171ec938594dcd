"""Exported rule files in the real Claude Code: `stele export rules` writes `.claude/rules/*.md` with
`paths:`, and Claude Code loads a rule only when the model touches a file it matches.

Two turns on `stele demo --keep`, each reading one file and answering. The rule compiled for
`worker/harbor_worker/gc.py` (CON-6E8B and LSN-1HB3, anchored to its symbols) must reach the request
after gc.py is read, and not the one before; after reading `worker/pyproject.toml`, which
no exported fact is anchored to (only a component), no exported rule may reach the model at all. The check reads the
rule's own heading, which only the rule file carries (Stele's hooks name fact ids too).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from . import checks as checks_mod
from .conftest import need
from .drivers import run_turn
from .mockmodel import GC, Answer, Read, Script

RULE_HEADING = "# Project record: `worker/harbor_worker/gc.py`"
ANY_RULE = "# Project record: `"
UNANCHORED = "worker/pyproject.toml"  # anchored only by a component, which is not exported


def export_claude_rules(root: Path) -> None:
    stele = Path(sys.executable).parent / "stele"
    done = subprocess.run([str(stele), "export", "rules", "--harness", "claude"], cwd=root, capture_output=True,
                          text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    rules = sorted((root / ".claude" / "rules").glob("stele-*.md"))
    assert any(RULE_HEADING in p.read_text(encoding="utf-8") for p in rules), [p.name for p in rules]
    assert not any(UNANCHORED in p.read_text(encoding="utf-8") for p in rules)


def test_an_exported_rule_reaches_claude_only_with_a_matching_file(demo_repo, tmp_path):
    need("claude")
    run = run_turn("claude", demo_repo, tmp_path, after_install=export_claude_rules,
                   script=Script([Read(GC), Answer()]))
    ch = checks_mod.Checks("claude", run.describe())
    requests = run.server.agent_requests()
    before = [r for r in requests if r.tool_results == 0]
    after = [r for r in requests if r.tool_results >= 1]
    ch.check("turn-completed", run.returncode == 0 and bool(after), f"exit {run.returncode}")
    ch.check("rule-not-up-front", bool(before) and not any(RULE_HEADING in r.text for r in before),
             "the gc.py rule reached the model before gc.py was read")
    ch.check("rule-after-read", any(RULE_HEADING in r.text and "CON-6E8B" in r.text for r in after),
             "the gc.py rule did not reach the model after gc.py was read")
    ch.verdict()


def test_an_exported_rule_stays_out_for_an_unrelated_file(demo_repo, tmp_path):
    need("claude")
    run = run_turn("claude", demo_repo, tmp_path, after_install=export_claude_rules,
                   script=Script([Read(UNANCHORED), Answer()]))
    ch = checks_mod.Checks("claude", run.describe())
    requests = run.server.agent_requests()
    ch.check("turn-completed", run.returncode == 0 and any(r.tool_results >= 1 for r in requests),
             f"exit {run.returncode}")
    leaked = [r.tool_results for r in requests if ANY_RULE in r.text]
    ch.check("no-rule", not leaked, f"an exported rule reached the model (after {leaked} tool results)")
    ch.verdict()
