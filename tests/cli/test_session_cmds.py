"""The session commands through the real entry point: outputs, JSON shapes, limits and errors."""
import json

import pytest

from tests.helpers import invoke

ENTRY_KEYS = ["v", "id", "ts", "session"]


def run_json(*args: str, input: str | None = None) -> dict:
    r = invoke(*args, "--json", input=input)
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.fixture
def sess(repo, monkeypatch) -> str:
    r = invoke("session", "start", "--agent", "codex", "--thread", "impl", "--goal", "Ship the limiter",
               "--task", "TASK-418")
    assert r.code == 0, r.err
    sid = r.out.strip()
    assert r.out == sid + "\n" and f"export STELE_SESSION={sid}" in r.err
    monkeypatch.setenv("STELE_SESSION", sid)
    return sid


def test_start_json_shape(repo):
    d = run_json("session", "start", "--session", "harness-1", "--goal", "G")
    assert list(d) == ["session", "entry", "agent", "thread", "goal", "task"]
    assert d["session"] == "harness-1" and d["goal"] == "G" and d["entry"].startswith("S-")
    again = invoke("session", "start", "--session", "harness-1")
    assert again.code == 1 and "already exists" in again.err


def test_log_note_and_the_golden_preamble(sess):
    assert invoke("session", "log", "stage", "Planned: limiter first.", "--stage", "plan").code == 0
    again = invoke("session", "log", "stage", "Planned again:\nlimiter, then auth.", "--stage", "plan")
    assert again.code == 0
    d = run_json("note", "-", "--path", "src/auth.py", "--issue", "12",
                 input="Bearer tokens expire hourly.\n")
    assert list(d) == ["entry", "redacted"] and d["redacted"] == {}
    assert list(d["entry"])[:4] == ENTRY_KEYS
    assert d["entry"]["refs"] == {"issue": "12", "paths": ["src/auth.py"]}
    assert d["entry"]["agent"] == "codex" and d["entry"]["thread"] == "impl"
    assert invoke("session", "log", "steering", "Do not touch the schema.").code == 0
    r = invoke("session", "preamble")
    assert r.code == 0 and r.err == ""
    assert r.out == (
        "Session history (thread impl, iteration 1, fidelity compact)\n"
        "Goal: Ship the limiter\n"
        "\n"
        "Completed stages:\n"
        "- plan (2 visits): Planned again:\n"
        "  limiter, then auth.\n"
        "\n"
        "Steering (from the operator; it still applies):\n"
        "- Do not touch the schema.\n")
    low = run_json("session", "preamble", "--fidelity", "truncate")
    assert low["stages"] == [] and low["fidelity_source"] == "flag" and "Do not touch" in low["text"]
    assert invoke("session", "preamble", "--thread", "impl").out == r.out


def test_redaction_is_reported_without_the_secret(sess):
    r = invoke("note", "deploy key AKIAQ3EGRSWXYZ2KD7NB works")
    assert r.code == 0 and "1 AWS access key id" in r.err and "AKIAQ3EGRSWXYZ2KD7NB" not in r.err
    shown = run_json("session", "show", r.out.strip())
    assert shown["entry"]["text"] == "deploy key [REDACTED:AWS access key id] works"


def test_errors_are_one_line_with_the_right_exit_code(repo, monkeypatch):
    r = invoke("note", "no session yet")
    assert r.code == 1 and "stele session start" in r.err
    monkeypatch.setenv("STELE_SESSION", "s1")
    cases = [
        (("session", "log", "chat", "x"), 2, "entry type 'chat'"),
        (("session", "log", "stage", "x"), 2, "--stage NAME"),
        (("session", "list", "--q", ""), 2, "--q is empty"),
        (("session", "list", "--q", "x" * 2049), 2, "at most 2048"),
        (("session", "list", "--limit", "0"), 2, "--limit 0"),
        (("session", "preamble", "--session", "a", "--thread", "b"), 2, "not both"),
        (("session", "preamble", "--session", "missing"), 2, "no session missing"),
        (("session", "preamble", "--fidelity", "summary"), 2, "--fidelity 'summary'"),
        (("session", "show", "missing"), 1, "no session missing"),
        (("session", "show", "S-0000000000"), 1, "no session entry"),
        (("session", "compact", "--older-than", "-1"), 2, "--older-than -1"),
        (("promote", "S-0000000000", "--kind", "lesson"), 1, "no session entry"),
    ]
    assert invoke("note", "first").code == 0  # so `s1` exists for the preamble case
    for args, code, message in cases:
        r = invoke(*args)
        assert (r.code, r.err.count("\n")) == (code, 1) and message in r.err, (args, r.err)


def test_list_filters_json_and_cap(sess, monkeypatch):
    invoke("note", "Limiter needs Redis", "--issue", "12", "--path", "src/limit.py")
    monkeypatch.delenv("STELE_SESSION")
    other = invoke("session", "start", "--goal", "Other work").out.strip()
    invoke("note", "Docs only", "--session", other, "--pr", "7")
    d = run_json("session", "list")
    assert list(d) == ["sessions", "total", "limit"] and d["total"] == 2 and d["limit"] == 20
    first = d["sessions"][0]
    assert list(first) == ["id", "agent", "thread", "goal", "task", "started", "last", "entries", "restarts",
                           "types", "hosts", "matches", "hits"]
    by_issue = run_json("session", "list", "--issue", "12")
    assert [s["id"] for s in by_issue["sessions"]] == [sess]
    assert [h["text"] for h in by_issue["sessions"][0]["hits"]] == ["Limiter needs Redis"]
    assert [s["id"] for s in run_json("session", "list", "--pr", "#7")["sessions"]] == [other]
    assert [s["id"] for s in run_json("session", "list", "--q", "redis limiter")["sessions"]] == [sess]
    assert [s["id"] for s in run_json("session", "list", "--path", "src")["sessions"]] == [sess]
    assert [s["id"] for s in run_json("session", "list", "--thread", "impl")["sessions"]] == [sess]
    assert run_json("session", "list", "--limit", "500")["limit"] == 32
    table = invoke("session", "list", "--q", "nothing-like-this")
    assert table.code == 0 and "no sessions match" in table.out


def test_show_restart_compact_and_promote(sess):
    note = run_json("note", "Flaky upload test races the tmp cleaner.", "--path", "tests/test_upload.py")
    entry_id = note["entry"]["id"]
    restarted = run_json("session", "restart", "--reason", "new approach")
    assert restarted["entry"]["event"] == "restart"

    promoted = run_json("promote", entry_id, "--kind", "lesson")
    assert list(promoted) == ["id", "path", "source", "redacted"]
    assert promoted["source"] == [entry_id] and promoted["id"].startswith("LSN-")
    again = invoke("promote", entry_id, "--kind", "lesson")
    assert again.code == 1 and "--again" in again.err

    shown = run_json("session", "show", sess)
    assert list(shown) == ["session", "entries", "promoted", "delivered"] and shown["delivered"] == []
    assert shown["session"]["restarts"] == 1 and shown["promoted"] == {entry_id: [promoted["id"]]}
    assert [e["type"] for e in shown["entries"]] == ["note", "note", "note"]
    text = invoke("session", "show", sess)
    assert text.code == 0 and f"promoted to {promoted['id']}" in text.out and "note(restart)" in text.out
    one = invoke("session", "show", entry_id)
    assert one.code == 0 and "tests/test_upload.py" in one.out

    before = run_json("session", "show", sess)["entries"]
    compacted = run_json("session", "compact", "--older-than", "0")
    assert list(compacted) == ["archived", "dry_run"]
    assert [a["session"] for a in compacted["archived"]] == [sess]
    assert list(compacted["archived"][0]) == ["session", "segment", "lines", "bytes", "gz_bytes"]
    assert run_json("session", "show", sess)["entries"] == before
    assert invoke("session", "compact").out == "nothing to archive\n"


def test_log_at_records_when_it_happened(sess):
    d = run_json("session", "log", "note", "Switched the API to Fastify.", "--at", "2026-01-09T10:30:00.123+02:00")
    assert d["entry"]["ts"] == "2026-01-09T08:30:00Z"
    plain = run_json("note", "Now.")
    assert plain["entry"]["ts"] > "2026-01-09T08:30:00Z"
    for bad, why in (("2026-01-09T10:30:00", "no zone"), ("2999-01-01T00:00:00Z", "in the future"),
                     ("last tuesday", "not an ISO 8601 time")):
        r = invoke("session", "log", "note", "x", "--at", bad)
        assert r.code != 0 and "--at" in r.err and why in r.err, (bad, r.err)
