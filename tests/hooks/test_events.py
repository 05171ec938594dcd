"""The agent hooks end to end through `stele hook EVENT`, in a real repository."""
import json

import pytest

from stele import textcut
from stele.hooks.run import CUT_MARK
from tests.helpers import hook, invoke, write_fact


def claude(event_name: str, repo, session="s1", **fields) -> dict:
    return {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": str(repo),
            "hook_event_name": event_name, "permission_mode": "default", **fields}


def context(result) -> str:
    assert result.code == 0, result.err
    return json.loads(result.out)["hookSpecificOutput"]["additionalContext"]


def test_session_start_delivers_standing_rules_and_open_tasks(record):
    text = context(hook("session-start", claude("SessionStart", record, source="startup")))
    assert text.index("CON-0002") < text.index("INS-0001")  # high priority first
    assert "INS-0003" not in text and "INS-0004" not in text
    assert "TASK TASK-0005 [in-progress]  Rate limiter rewrite" in text and "TASK-0006" not in text
    assert "stele recall" in text and "stele-researcher" in text


def test_session_alias_and_clear_resets_what_was_injected(record):
    first = context(hook("session", claude("SessionStart", record, source="startup")))
    assert "INS-0001" in first
    pre = context(hook("pre-edit", claude("PreToolUse", record, tool_name="Edit",
                                          tool_input={"file_path": str(record / "src/auth/middleware.py")})))
    assert "RISK-0007" in pre
    again = hook("pre-edit", claude("PreToolUse", record, tool_name="Edit",
                                    tool_input={"file_path": str(record / "src/auth/middleware.py")}))
    assert again.out == ""  # every fact shown and the nudge given already
    hook("session-start", claude("SessionStart", record, source="clear"))
    after_clear = context(hook("pre-edit", claude("PreToolUse", record, tool_name="Edit",
                                                  tool_input={"file_path": str(record / "src/auth/x.py")})))
    assert "RISK-0007" in after_clear


def test_pre_edit_shows_anchored_facts_risks_first_with_a_one_time_nudge(record):
    payload = claude("PreToolUse", record, tool_name="Edit",
                     tool_input={"file_path": str(record / "src/auth/middleware.py"), "old_string": "a"})
    text = context(hook("pre-edit", payload))
    assert text.index("RISK-0007") < text.index("DEC-0008") and "DEC-0009" not in text
    assert "First edit of this session" in text
    billing = {**payload, "tool_input": {"file_path": str(record / "src/billing.py")}}
    other = context(hook("pre-edit", billing))
    assert "DEC-0009" in other and "First edit" not in other


def test_pre_edit_outside_the_repo_or_without_facts_says_nothing_after_the_nudge(record):
    hook("pre-edit", claude("PreToolUse", record, tool_name="Write", tool_input={"file_path": "/etc/hosts"}))
    outside = claude("PreToolUse", record, tool_name="Write", tool_input={"file_path": "/etc/hosts"})
    r = hook("pre-edit", outside)
    assert (r.code, r.out) == (0, "")


@pytest.fixture
def attended(monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ATTENDED", "1")


def test_post_edit_logs_to_the_session_wal_and_stop_nudges_once(record, attended):
    from stele.project import Project
    from stele.session import wal

    stop = claude("Stop", record, stop_hook_active=False)
    assert hook("stop", stop).out == ""  # nothing edited yet
    r = hook("post-edit", claude("PostToolUse", record, tool_name="Write",
                                 tool_input={"file_path": str(record / "src/auth/new.py")}, tool_response={}))
    assert (r.code, r.out) == (0, "")
    hook("post-edit", claude("PostToolUse", record, tool_name="Edit",
                             tool_input={"file_path": str(record / "src/auth/new.py")}, tool_response={}))
    entries = list(wal.read_file(wal.wal_path(Project(record), "s1")))
    assert [e.text for e in entries] == ["session started", "edited src/auth/new.py"]
    assert (entries[1].refs, entries[1].agent) == ({"paths": ["src/auth/new.py"]}, "claude-code")
    listed = json.loads(invoke("session", "list", "--json").out)
    assert [(s["id"], s["agent"]) for s in listed["sessions"]] == [("s1", "claude-code")]
    assert hook("stop", {**stop, "stop_hook_active": True}).out == ""  # never loops
    text = context(hook("stop", stop))
    assert "src/auth/new.py" in text and "stele remember" in text and "--retire-when" in text
    assert hook("stop", stop).out == ""  # once per session


def test_stop_is_silent_when_the_session_recorded_something(record, attended):
    hook("post-edit", claude("PostToolUse", record, tool_name="Edit",
                             tool_input={"file_path": str(record / "src/a.py")}))
    write_fact(record, "LSN-0010", "lesson", "Learned today")
    assert hook("stop", claude("Stop", record)).out == ""


def test_every_harness_that_can_speak_at_a_stop_continues_the_turn_once(record, attended):
    camel = {"sessionId": "copilot", "timestamp": 1796120498044, "cwd": str(record)}  # Copilot's own hooks
    for name in ("codex", "gemini", "copilot"):
        edit = {**camel, "toolName": "edit", "toolArgs": json.dumps({"path": str(record / "src/a.py")})} \
            if name == "copilot" else claude("PostToolUse", record, session=name, tool_name="Edit",
                                             tool_input={"file_path": str(record / "src/a.py")})
        hook("post-edit", edit, "--harness", name)
        stop = {**camel, "stopReason": "end_turn", "stop_hook_active": False} if name == "copilot" \
            else claude("Stop", record, session=name)
        r = hook("stop", stop, "--harness", name)
        data = json.loads(r.out)
        assert r.code == 0 and data["decision"] == "block" and "src/a.py" in data["reason"]


def test_an_unattended_run_is_not_nudged_unless_configured(record, monkeypatch):
    """`claude -p` says CLAUDE_CODE_SESSION_ATTENDED=0: continuing its turn would replace its result."""
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ATTENDED", "0")
    edit = claude("PostToolUse", record, tool_name="Edit", tool_input={"file_path": str(record / "src/a.py")})
    hook("post-edit", edit)
    assert hook("stop", claude("Stop", record)).out == ""
    config = record / ".stele/config.yaml"
    config.write_text(config.read_text().replace("nudge_unattended: false", "nudge_unattended: true"))
    assert "src/a.py" in context(hook("stop", claude("Stop", record)))


def test_a_task_done_in_the_session_is_completion_and_the_example_quotes_its_error(record, attended, tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "tool_result", "content": "Traceback (most recent call last):\n"
                                      "psycopg.errors.QueryCanceled: canceling statement due to statement timeout"})
                          + "\n")
    hook("post-edit", claude("PostToolUse", record, tool_name="Edit",  # the session's first hook
                             tool_input={"file_path": str(record / "src/auth/middleware.py")}))
    assert invoke("task", "done", "TASK-0005").code == 0  # the in-progress task of the sample record
    text = context(hook("stop", claude("Stop", record, transcript_path=str(transcript))))
    assert "finished TASK-0005" in text and "--link relates-to:TASK-0005" in text
    assert "psycopg.errors.QueryCanceled: canceling statement due to statement timeout" in text


def test_gemini_gets_edit_facts_after_the_tool(record):
    payload = {"session_id": "g1", "transcript_path": "/t", "cwd": str(record),
               "hook_event_name": "AfterTool", "timestamp": "2026-11-29T10:00:00Z", "tool_name": "replace",
               "tool_input": {"file_path": str(record / "src/billing.py")}, "tool_response": {}}
    before = hook("pre-edit", {**payload, "hook_event_name": "BeforeTool"})
    assert before.out == "{}\n"
    data = json.loads(hook("post-edit", payload).out)["hookSpecificOutput"]
    assert data["hookEventName"] == "AfterTool" and "DEC-0009" in data["additionalContext"]


def test_stele_off_and_pause_silence_the_hooks(record, monkeypatch):
    payload = claude("SessionStart", record, source="startup")
    assert invoke("pause").code == 0
    assert hook("session-start", payload).out == ""
    assert invoke("resume-hooks").code == 0
    monkeypatch.setenv("STELE_OFF", "1")
    assert hook("session-start", payload).out == ""
    assert hook("session-start", payload, "--harness", "gemini").out == "{}\n"
    monkeypatch.setenv("STELE_OFF", "0")
    assert "INS-0001" in context(hook("session-start", payload))


def test_not_a_stele_project_is_silent(plain_repo):
    r = hook("session-start", claude("SessionStart", plain_repo, source="startup"))
    assert (r.code, r.out, r.err) == (0, "", "")


@pytest.mark.parametrize("event", ["session-start", "prompt", "pre-edit", "post-edit", "stop"])
def test_failures_exit_0_with_one_stderr_line(record, event):
    bad = hook(event, "{not json")
    assert (bad.code, bad.out) == (0, "") and bad.err.count("\n") == 1 and "not JSON" in bad.err
    (record / ".stele/config.yaml").write_text("hooks: [broken\n")
    broken = hook(event, claude("X", record, prompt="a long enough prompt about rate limiting",
                                tool_input={"file_path": str(record / "src/a.py")}))
    assert (broken.code, broken.out) == (0, "") and broken.err.count("\n") == 1, broken.err
    assert "config.yaml" in broken.err


def test_unknown_event_exits_0_with_one_stderr_line():
    r = hook("frobnicate", {})
    assert (r.code, r.out) == (0, "") and r.err.count("\n") == 1 and "unknown event" in r.err


def test_cap_cuts_at_a_line_and_says_so():
    text = "\n".join(f"line {i} " + "x" * 50 for i in range(400))
    out = textcut.lines(text, 9000, CUT_MARK)
    assert len(out) <= 9000 and out.endswith(CUT_MARK) and out[: -len(CUT_MARK)].endswith("x")


def test_configured_cap_holds(record):
    for n in range(40):
        write_fact(record, f"INS-1{n:03d}", "instruction", f"Rule number {n}", "word " * 200)
    (record / ".stele/config.yaml").write_text("hooks:\n  max_chars: 3000\n")
    text = context(hook("session-start", claude("SessionStart", record, source="startup")))
    assert len(text) <= 3000 and text.endswith(CUT_MARK)


@pytest.mark.parametrize("event", ["session-start", "prompt", "pre-edit"])
def test_a_missing_index_is_built_and_a_damaged_one_costs_one_stderr_line(record, event):
    import shutil

    expect = "INS-0001" if event == "session-start" else "RISK-0007"
    payload = claude("X", record, session=f"idx-{event}", prompt="why does the rate limiter run before auth?",
                     tool_input={"file_path": str(record / "src/auth/middleware.py")})
    shutil.rmtree(record / ".stele/index", ignore_errors=True)
    built = hook(event, payload)
    assert built.code == 0 and expect in built.out and built.err.count("\n") <= 1
    (record / ".stele/index/catalog.sqlite").write_text("not a database")
    damaged = hook(event, {**payload, "session_id": f"idx2-{event}"})
    assert damaged.code == 0 and expect in damaged.out
    assert damaged.err.count("\n") == 1 and "unreadable" in damaged.err
    shutil.rmtree(record / ".stele/index")
    (record / ".stele/index").write_text("a file where the index folder should be")
    blocked = hook(event, {**payload, "session_id": f"idx3-{event}"})
    assert blocked.code == 0 and blocked.err.count("\n") == 1 and expect not in blocked.out


def test_session_start_puts_this_agents_claimed_tasks_first(record, monkeypatch):
    from tests.helpers import write_fact

    write_fact(record, "TASK-0020", "task", "Billing export", status="open")
    write_fact(record, "TASK-0021", "task", "Someone else's work", status="open")
    monkeypatch.setenv("STELE_AGENT", "other-agent")
    assert invoke("task", "claim", "TASK-0021").code == 0
    monkeypatch.setenv("STELE_AGENT", "claude-code")
    assert invoke("task", "claim", "TASK-0020").code == 0
    text = context(hook("session-start", claude("SessionStart", record, source="startup")))
    tasks = text.split("Open tasks:\n")[1].split("\n\n")[0].splitlines()
    assert tasks == ["TASK TASK-0020 [claimed by you]  Billing export",
                     "TASK TASK-0005 [in-progress]  Rate limiter rewrite",
                     "TASK TASK-0021 [claimed by other-agent]  Someone else's work"]


def test_a_symbol_anchor_counts_only_when_the_edit_touches_the_symbol(record):
    src = record / "src/auth/middleware.py"
    src.parent.mkdir(parents=True)
    src.write_text("import time\n\n\nclass RateLimiter:\n    def check(self, key):\n        return True\n\n\n"
                   "def log_request(req):\n    print(req)\n")
    (record / "docs/memory/risks/RISK-0007.md").unlink()  # its glob anchor would match any edit here
    elsewhere = claude("PreToolUse", record, session="sym1", tool_name="Edit",
                       tool_input={"file_path": str(src), "old_string": "    print(req)",
                                   "new_string": "    pass"})
    assert "DEC-0008" not in context(hook("pre-edit", elsewhere))
    inside = {**elsewhere, "session_id": "sym2",
              "tool_input": {"file_path": str(src), "old_string": "        return True", "new_string": "x"}}
    assert "DEC-0008" in context(hook("pre-edit", inside))
    whole = {**elsewhere, "session_id": "sym3", "tool_name": "Write",
             "tool_input": {"file_path": str(src), "content": "new"}}
    assert "DEC-0008" in context(hook("pre-edit", whole))


def test_the_same_prompt_twice_injects_only_what_is_new(record):
    from stele.ids import mentioned_ids
    from tests.helpers import write_fact

    payload = claude("UserPromptSubmit", record, session="twice",
                     prompt="How is the rate limiter bucket refilled, and why does it run before auth?")
    first = set(mentioned_ids(context(hook("prompt", payload))))
    assert {"DEC-0008", "RISK-0007", "LSN-0011"} <= first
    again = hook("prompt", payload)
    assert (again.code, again.out) == (0, "")  # everything relevant was shown already
    write_fact(record, "LSN-0030", "lesson", "Refill jitter avoids thundering herds",
               "Add jitter to the bucket refill.", links={"relates-to": ["LSN-0011"]})
    third = set(mentioned_ids(context(hook("prompt", payload))))
    assert "LSN-0030" in third and not third & first


def test_post_edit_logs_synchronously_and_leaves_indexing_to_the_next_prompt(record):
    """Every harness waits for post-edit now (an async one died with `codex exec`): it writes the log
    line and nothing else, so the edit costs no index refresh."""
    from stele.project import Project
    from stele.session import wal

    edit = claude("PostToolUse", record, session="sync", tool_name="Edit",
                  tool_input={"file_path": str(record / "src/auth/middleware.py")})
    hook("post-edit", edit, "--harness", "claude")
    assert [e.text for e in wal.read_file(wal.wal_path(Project(record), "sync"))][-1] == "edited src/auth/middleware.py"
    assert not (record / ".stele/index").exists()  # no index was built or refreshed for it


def test_hold_mode_refuses_an_edit_under_a_risk_once_with_the_fact_as_reason(record):
    config = record / ".stele/config.yaml"
    edit = claude("PreToolUse", record, session="h1", tool_name="Edit",
                  tool_input={"file_path": str(record / "src/auth/middleware.py")})
    assert "permissionDecision" not in hook("pre-edit", edit).out  # off by default: nudges never block
    config.write_text(config.read_text().replace("hold_edits: false", "hold_edits: true"))
    edit = {**edit, "session_id": "h2"}
    first = json.loads(hook("pre-edit", edit).out)["hookSpecificOutput"]
    assert first["permissionDecision"] == "deny" and "RISK-0007" in first["permissionDecisionReason"]
    again = hook("pre-edit", edit).out
    assert "permissionDecision" not in again  # held once: the retry goes through


@pytest.mark.parametrize("damage", ["config", "state"])
def test_gemini_gets_json_on_error_paths_and_state_that_cannot_be_written_costs_no_answer(record, damage):
    import shutil

    prompt = {"session_id": "g9", "transcript_path": "/t", "cwd": str(record), "hook_event_name": "BeforeAgent",
              "timestamp": "2026-11-29T10:00:00Z", "prompt": "why does the rate limiter run before auth?"}
    if damage == "config":
        (record / ".stele/config.yaml").write_text("retrieval: [not yaml\n")
        r = hook("prompt", prompt, "--harness", "gemini")
        assert (r.code, r.out) == (0, "{}\n") and r.err.startswith("stele hook prompt:")
    else:
        shutil.rmtree(record / ".stele/state", ignore_errors=True)
        (record / ".stele/state").write_text("not a folder\n")
        r = hook("prompt", prompt, "--harness", "gemini")
        assert r.code == 0 and "RISK-0007" in json.loads(r.out)["hookSpecificOutput"]["additionalContext"]
    bad = hook("prompt", "{not json", "--harness", "gemini")
    assert (bad.code, bad.out) == (0, "{}\n")
    assert hook("no-such-event", prompt, "--harness", "gemini").out == "{}\n"


def test_the_prompt_hook_delivers_the_preamble_of_the_active_stele_session(record, monkeypatch):
    sid = invoke("session", "start", "--goal", "Keep auth floods away from bcrypt").out.split()[-1].split("=")[-1]
    invoke("session", "log", "steering", "Do not move the limiter", "--session", sid)
    monkeypatch.setenv("STELE_SESSION", sid)
    text = context(hook("prompt", claude("UserPromptSubmit", record, session="h9",
                                         prompt="why does the rate limiter run before auth?")))
    assert text.startswith("Session history (iteration 1") and "Goal: Keep auth floods away from bcrypt" in text
    assert "- Do not move the limiter" in text and "RISK-0007" in text
    monkeypatch.delenv("STELE_SESSION")  # the hooks remember which Stele session this harness session works in
    later = context(hook("prompt", claude("UserPromptSubmit", record, session="h9",
                                          prompt="and what about the middleware order?")))
    assert "Goal: Keep auth floods away from bcrypt" in later


def test_steering_past_the_hook_limit_is_kept_whole(record, monkeypatch):
    """Steering over the 9,000-character cap was cut off the end of the preamble: it goes first, whole."""
    sid = invoke("session", "start", "--goal", "Keep auth floods away from bcrypt").out.split()[-1].split("=")[-1]
    for n in range(6):
        invoke("session", "log", "stage", f"stage {n} " + "done and checked; " * 120, "--stage", f"s{n}",
               "--session", sid)
    steering = "Never move the limiter after auth. " + " ".join(f"rule{n}" for n in range(1400)) + " END-OF-STEERING"
    assert len(steering) > 9000
    invoke("session", "log", "steering", steering, "--session", sid)
    monkeypatch.setenv("STELE_SESSION", sid)
    text = context(hook("prompt", claude("UserPromptSubmit", record, session="h9",
                                         prompt="why does the rate limiter run before auth?")))
    assert "END-OF-STEERING" in text and "rule1399" in text and "Never move the limiter after auth." in text
