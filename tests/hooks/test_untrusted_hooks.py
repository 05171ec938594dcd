"""The 20 dangerous payloads of a merged pull request (tests/untrusted_payloads.py DANGEROUS): none
reaches an agent unmarked, through any hook that delivers a fact. Session start passes standing rules,
the prompt hook passes what recall found (here: the id named in the prompt, whole), pre-edit passes
the facts anchored where the edit lands; each comes prefixed `[FLAGGED by stele doctor (...)`."""
from __future__ import annotations

import json

import pytest

from tests.helpers import hook, invoke, write_fact
from tests.untrusted_payloads import DANGEROUS

MARK = "[FLAGGED by stele doctor ("


def context(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"]


def marked(text: str, fact_id: str) -> bool:
    """Every line naming the fact starts with the mark (after the callout's `! RISK on your path: `)."""
    lines = [line for line in text.splitlines() if f" {fact_id}" in line]
    return bool(lines) and all(MARK in line.split(fact_id)[0] for line in lines)


@pytest.fixture
def payload_record(repo):
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src/pay.py").write_text("def retry():\n    pass\n")
    for n, (_, text, _) in enumerate(DANGEROUS):
        write_fact(repo, f"INS-{n:04d}", "instruction", f"Payment retry rule {n}", text)
        write_fact(repo, f"DEC-{n:04d}", "decision", f"Payment retry decision {n}", text, anchors=["src/pay.py"])
    write_fact(repo, "DEC-9999", "decision", "Payments retry three times", "With exponential backoff.",
               anchors=["src/pay.py"])
    assert invoke("rebuild").code == 0
    return repo


def test_session_start_marks_every_flagged_standing_rule(payload_record):
    text = context(hook("session-start", {"session_id": "s1", "cwd": str(payload_record), "source": "startup",
                                          "hook_event_name": "SessionStart"}, "--harness", "claude").out)
    missing = [DANGEROUS[n][0] for n in range(len(DANGEROUS)) if not marked(text, f"INS-{n:04d}")]
    assert not missing, missing


@pytest.mark.parametrize("n", range(len(DANGEROUS)), ids=[p[0] for p in DANGEROUS])
def test_the_prompt_hook_marks_a_flagged_fact(payload_record, n):
    for fact_id in (f"INS-{n:04d}", f"DEC-{n:04d}"):
        out = hook("prompt", {"session_id": f"p{n}-{fact_id}", "cwd": str(payload_record),
                              "hook_event_name": "UserPromptSubmit",
                              "prompt": f"what does {fact_id} say about retrying payments?"}, "--harness", "claude").out
        text = context(out)
        assert marked(text, fact_id), text


def test_pre_edit_marks_every_flagged_anchored_fact(payload_record):
    cfg = payload_record / ".stele/config.yaml"
    cfg.write_text(cfg.read_text().replace("hold_edits: true", "hold_edits: false"))
    seen: set[str] = set()
    for _ in range(4):  # a few facts per edit: the rest come with the next edits of the session
        out = hook("pre-edit", {"session_id": "e1", "cwd": str(payload_record), "hook_event_name": "PreToolUse",
                                "tool_name": "Edit", "tool_input": {"file_path": str(payload_record / "src/pay.py")}},
                   "--harness", "claude").out
        if not out.strip():
            break
        text = context(out)
        for n in range(len(DANGEROUS)):
            if f" DEC-{n:04d}" in text:
                assert marked(text, f"DEC-{n:04d}"), text
                seen.add(f"DEC-{n:04d}")
        assert "DEC-9999" not in text or not marked(text, "DEC-9999")  # a clean fact is not marked
    assert seen


def test_a_clean_fact_is_not_marked(payload_record):
    text = context(hook("prompt", {"session_id": "clean", "cwd": str(payload_record),
                                   "hook_event_name": "UserPromptSubmit",
                                   "prompt": "what does DEC-9999 say about retrying payments?"}, "--harness",
                        "claude").out)
    # the session's first prompt also carries the standing rules (flagged ones marked), when no session
    # start took them on first: what matters is that no line naming the clean fact is marked
    lines = [line for line in text.splitlines() if " DEC-9999" in line]
    assert lines and not any(MARK in line for line in lines), text
