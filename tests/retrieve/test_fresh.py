"""Freshness in what the agent is told (retrieve/fresh.py): drift labels, their rank, `stele verify`.

The acceptance of issue 29 item 2 and issue 32 item 4, end to end through the CLI and the hooks in a
real git repository."""
from __future__ import annotations

import json
import re

import pytest

from stele.index.catalog import Node
from stele.plain import replace
from stele.retrieve.rank import Scored, Seed, cap, order
from stele.retrieve.settings import Settings
from tests.helpers import git, hook, invoke

V1 = "def charge(amount):\n    return amount\n\n\ndef refund(amount):\n    return -amount\n"
V2 = "def charge(amount):\n    amount = round(amount, 2)\n    return amount\n\n\ndef refund(amount):\n    return -amount\n"
V3 = "def charge(amount):\n    return quantize(amount)\n\n\ndef refund(amount):\n    return -amount\n"
V4 = "def charge(amount):\n    return quantize(amount)\n\n\ndef refund(amount):\n    return 0 - amount\n"
PROMPT = "how are card charges rounded to cents before we send them?"


def commit_code(root, text, message):
    (root / "src").mkdir(exist_ok=True)
    (root / "src/pay.py").write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def recall_json(*args):
    r = invoke("recall", PROMPT, *args, "--json")
    assert r.code == 0, r.err
    return {e["id"]: e for e in json.loads(r.out)["entries"]}


@pytest.fixture
def verified(repo, fake_model):
    """A decision anchored to `charge`, verified, then `charge` changed in two commits and `refund` in one."""
    commit_code(repo, V1, "pay")
    r = invoke("remember", "Charges are rounded to cents with Decimal quantize, never with float.",
               "--title", "Card charges are rounded to cents before sending", "--kind", "decision",
               "--anchor", "src/pay.py::charge")
    fact_id = re.search(r"DEC-\w+", r.out).group(0)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fact")
    assert invoke("verify", fact_id).code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "verified")
    before = recall_json()[fact_id]
    assert before["drift"] is None and before["freshness"] == "verified today"
    commit_code(repo, V2, "round")
    commit_code(repo, V3, "quantize")
    commit_code(repo, V4, "refund only")
    return repo, fact_id


def test_a_function_changed_in_two_commits_is_labelled_in_recall_and_pre_edit_and_verify_clears_it(verified):
    repo, fact_id = verified
    entry = recall_json()[fact_id]
    assert entry["drift"]["commits"] == 2 and entry["drift"]["anchors"] == ["src/pay.py::charge"]
    assert (entry["drift"]["added"], entry["drift"]["removed"]) == (1, 1)
    label = "anchor changed in 2 commits since verified (+1/-1 lines)"
    assert entry["freshness"] == label
    assert f"DECISION {fact_id} [{label}]" in invoke("recall", PROMPT).out
    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(repo / "src/pay.py"), "old_string": "    return quantize(amount)",
                              "new_string": "    return amount"}}
    text = json.loads(hook("pre-edit", payload, "--harness", "claude").out)["hookSpecificOutput"]["additionalContext"]
    assert f"DECISION {fact_id} [{label}]" in text
    prompt = {"session_id": "s2", "cwd": str(repo), "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    text = json.loads(hook("prompt", prompt, "--harness", "claude").out)["hookSpecificOutput"]["additionalContext"]
    assert f"[{label}]" in text
    assert invoke("verify", fact_id).code == 0
    after = recall_json()[fact_id]
    assert after["drift"] is None and after["freshness"] == "verified today"


def test_doctor_lists_drifted_facts_with_their_commits_as_a_warning(verified):
    repo, fact_id = verified
    r = invoke("doctor", "--json")
    found = [f for f in json.loads(r.out)["findings"] if f["check"] == "drift"]
    assert len(found) == 1 and fact_id in found[0]["message"] and found[0]["severity"] == "warning"
    shas = [git(repo, "rev-parse", "--short=7", f"HEAD~{n}").strip() for n in (2, 1)]
    assert all(s in found[0]["message"] for s in shas)
    assert git(repo, "rev-parse", "--short=7", "HEAD").strip() not in found[0]["message"]  # refund only
    invoke("verify", fact_id)
    assert not [f for f in json.loads(invoke("doctor", "--json").out)["findings"] if f["check"] == "drift"]


def test_a_session_entry_written_before_its_code_changed_is_stale_and_ranks_below_a_newer_one(repo, fake_model):
    commit_code(repo, V1, "pay")
    invoke("session", "start", "--session", "s1")
    old = invoke("note", "card charges are rounded to cents with float before we send them", "--path",
                 "src/pay.py", "--session", "s1", "--json")
    old_id = json.loads(old.out)["entry"]["id"]
    commit_code(repo, V3, "quantize")
    new = invoke("note", "card charges are now rounded to cents with quantize before we send them", "--path", "src/pay.py", "--session", "s1", "--json")
    new_id = json.loads(new.out)["entry"]["id"]
    r = invoke("recall", PROMPT, "--json")
    entries = json.loads(r.out)["entries"]
    order_ = [e["id"] for e in entries]
    assert old_id in order_ and new_id in order_, r.out
    by_id = {e["id"]: e for e in entries}
    assert by_id[old_id]["drift"]["commits"] == 1 and by_id[new_id]["drift"] is None
    assert order_.index(new_id) < order_.index(old_id)
    assert "[stale: anchor changed in 1 commit since written" in invoke("recall", PROMPT).out


def _scored(i, score, session=False):
    node = Node(i, "session" if session else "committed", "note" if session else "decision", i)
    return Scored(i, node, score, {"kind": score}, None, Seed(i, 1.0, "text"))


def test_drift_downranks_and_never_excludes():
    s = replace(Settings.defaults(), window_cut=0.9)
    fresh, drifted = _scored("DEC-A", 5.0), _scored("DEC-B", 5.2)
    drifted.parts["drift"] = -0.5
    drifted.score = 4.7
    ranked = order([fresh, drifted])
    assert [x.id for x in ranked] == ["DEC-A", "DEC-B"]
    assert [x.id for x in cap(ranked, [], s).entries] == ["DEC-A", "DEC-B"]  # judged before the penalty


def test_a_stale_session_entry_ranks_below_every_fresh_one():
    stale, fresh = _scored("S-1", 9.0, session=True), _scored("S-2", 1.0, session=True)
    stale.parts["drift"] = -0.5
    assert [x.id for x in order([stale, fresh])] == ["S-2", "S-1"]
