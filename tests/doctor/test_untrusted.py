"""Every payload of the untrusted-input catalog, committed as a fact, is flagged by `stele doctor` at
its line; and shown through every reader (terminal commands, hooks, MCP) it arrives inert."""
import json
import re

import pytest

from stele.doctor.run import run as doctor_run
from stele.project import Project
from tests.helpers import hook, invoke, write_fact
from tests.untrusted_payloads import CLEAN, PAYLOADS, TAGGED

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\u3164\u00ad"
                 "\u2028\u2029\U000e0000-\U000e0fff]")


@pytest.mark.parametrize("name,text,checks", PAYLOADS, ids=[p[0] for p in PAYLOADS])
def test_doctor_flags_every_payload_at_its_line(repo, name, text, checks):
    path = write_fact(repo, "DEC-AAAA", "decision", "Retry policy", body=f"Retries are capped.\n\n{text}")
    found = [f for f in doctor_run(Project(repo)).findings if f.check in checks]
    assert {f.check for f in found} == checks, [str(f) for f in doctor_run(Project(repo)).findings]
    lines = path.read_text(encoding="utf-8").split("\n")
    assert all(f.path == str(path.relative_to(repo)) and f.fact == "DEC-AAAA" for f in found)
    first = next(i for i, line in enumerate(lines, 1) if text.split("\n")[0][:20] in line)
    assert min(f.line for f in found) >= first


def test_ordinary_text_raises_nothing(repo):
    write_fact(repo, "DEC-AAAA", "decision", "Ordinary", body="\n\n".join(CLEAN))
    assert doctor_run(Project(repo)).findings == []


def test_no_reader_shows_a_raw_escape_or_hidden_character(repo):
    body = "\n\n".join(t for _, t, _ in PAYLOADS if len(t) < 1000)
    write_fact(repo, "INS-AAAA", "instruction", "Deploys need a review" + TAGGED, body=body,
               delivery="always")
    write_fact(repo, "DEC-BBBB", "decision", "Retry policy \x1b]0;owned\x07 is three", body=body,
               tags=["retries"])
    outputs = {
        "show": invoke("show", "INS-AAAA").out, "show --json": invoke("show", "DEC-BBBB", "--json").out,
        "list": invoke("list").out, "why": invoke("why", "retry policy for deploys").out,
        "recall": invoke("recall", "what is the retry policy for deploys?").out,
        "search": invoke("search", "retry policy").out,
        "context": invoke("context", "--record", "DEC-BBBB").out,
        "hook session-start": hook("session-start", {"session_id": "s1", "cwd": str(repo),
                                                     "hook_event_name": "SessionStart", "source": "startup"},
                                   "--harness", "claude").out,
        "hook prompt": hook("prompt", {"session_id": "s2", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
                                       "prompt": "what is the retry policy for deploys?"}, "--harness", "claude").out,
    }
    assert "Deploys need a review" in outputs["hook session-start"]  # the instruction is injected ...
    for name, out in outputs.items():
        text = json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", out) \
            if name.startswith("hook") and out.startswith("{") else out
        assert not RAW.search(text), (name, RAW.search(text))  # ... with nothing hidden in it
    assert "<45 hidden characters>" in outputs["show"] and "^[]0;owned^G" in outputs["list"]
