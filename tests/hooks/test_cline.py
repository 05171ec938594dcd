"""Cline's hooks (the CLI's payloads, tests/fixtures/harness/cline/): only the tool hooks speak, so the
first tool hook of a task carries the standing rules and the recall for the task's prompt, read from
Cline's own session record; later tool hooks carry only what is anchored where they edit."""
import json
from pathlib import Path

from stele.hooks import harness, payload
from tests.helpers import hook

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness" / "cline"
PROMPT = "Why does the rate limiter run before the auth middleware? I want to move it behind auth."


def fixture(record: Path, event: str, **changes) -> dict:
    data = json.loads((FIXTURES / f"{event}.json").read_text(encoding="utf-8").replace("$REPO", str(record)))
    data.update(changes)
    return data


def a_read(record: Path) -> dict:
    """A PreToolUse of Cline's `read_files` (the first move of the e2e turn): a tool that names a path
    but changes nothing."""
    files = {"files": [{"path": f"{record}/src/auth/middleware.py"}]}
    return fixture(record, "pre-edit", tool_call={"id": "call_0002", "name": "read_files", "input": files},
                   preToolUse={"toolName": "read_files", "parameters": {"files": json.dumps(files["files"])}})


def task_record(tmp_path: Path, monkeypatch, prompt: str = PROMPT) -> None:
    """Cline's session record of the fixtures' task, where CLINE_SESSION_DATA_DIR says it is."""
    sid = fixture(tmp_path, "pre-edit")["sessionContext"]["rootSessionId"]
    folder = tmp_path / "cline-sessions" / sid
    folder.mkdir(parents=True)
    (folder / f"{sid}.json").write_text(json.dumps({"version": 1, "session_id": sid, "prompt": prompt}))
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(folder.parent))


def said(out: str) -> str:
    if not out:
        return ""
    data = json.loads(out)
    assert list(data) == ["cancel", "contextModification"] and data["cancel"] is False, out
    return data["contextModification"]


def test_every_cline_payload_is_told_apart_and_flattened(record):
    for event in ("session-start", "prompt", "pre-edit", "post-edit", "stop"):
        data = fixture(record, event)
        assert harness.detect(data) == "cline", event
        p = payload.parse(json.dumps(data))
        assert p.session == data["taskId"] and p.cwd == record
    pre = payload.parse(json.dumps(fixture(record, "pre-edit")))
    assert pre.tool_name == "editor" and pre.edited_paths() == [f"{record}/src/auth/middleware.py"]
    assert payload.parse(json.dumps(fixture(record, "prompt"))).prompt == PROMPT
    assert payload.parse(json.dumps(a_read(record))).edited_paths() == []  # a read changes nothing


def test_the_first_tool_hook_carries_the_rules_and_the_prompts_recall(record, tmp_path, monkeypatch):
    task_record(tmp_path, monkeypatch)
    for event in ("session-start", "prompt"):  # Cline ignores their output: they say nothing
        r = hook(event, fixture(record, event), "--harness", "cline")
        assert (r.code, r.out) == (0, ""), r.err
    first = said(hook("pre-edit", a_read(record), "--harness", "cline").out)
    assert "Standing instructions and constraints" in first and "CON-0002" in first
    assert "RISK on your path: RISK-0007" in first  # the recall of the task's prompt, with its callout
    assert "Anchored to the file(s) being edited" not in first  # a read is not an edit
    edit = said(hook("pre-edit", fixture(record, "pre-edit"), "--harness", "cline").out)
    assert "Standing instructions" not in edit and "RISK-0007" not in edit  # once a task
    assert "First edit of this session" in edit
    assert (first + edit).count("DEC-0008  ") == 1  # anchored to the file, and recalled already: shown once
    assert hook("post-edit", fixture(record, "post-edit"), "--harness", "cline").out == ""


def test_without_cline_s_session_record_the_rules_still_come(record, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(tmp_path / "nowhere"))
    first = said(hook("pre-edit", fixture(record, "pre-edit"), "--harness", "cline").out)
    assert "CON-0002" in first and "RISK on your path" not in first and "DEC-0008" in first


def test_a_session_id_that_would_leave_the_sessions_folder_is_not_read(tmp_path, monkeypatch):
    (tmp_path / "sessions").mkdir()
    (tmp_path / "leak").mkdir()  # sessions/../leak/../leak.json is tmp/leak.json
    (tmp_path / "leak.json").write_text(json.dumps({"prompt": "not Cline's"}))
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(tmp_path / "sessions"))
    for sid in ("../leak", "..", "/etc/passwd", "", 7):
        assert payload.cline_task_prompt({"sessionContext": {"rootSessionId": sid}}) == ""


def test_two_first_tool_hooks_at_once_show_the_rules_once(record, monkeypatch):
    """Cline runs the hooks of parallel tool calls side by side: hook A has chosen the rules and is about
    to claim them when hook B runs whole. One of them shows the rules, as rules; the other none."""
    from stele.hooks import state

    real = state.claim
    other: list[str] = []

    def claim_after_the_other(*args, **kwargs):
        if not other:
            other.append("")
            r = hook("pre-edit", a_read(record), "--harness", "cline")
            assert (r.code, r.err) == (0, ""), r.err
            other[0] = r.out
        return real(*args, **kwargs)

    monkeypatch.setattr(state, "claim", claim_after_the_other)
    first = said(hook("pre-edit", fixture(record, "pre-edit"), "--harness", "cline").out)
    second = said(other[0])
    assert (first + second).count("CON-0002  ") == 1, (first, second)
    assert "Standing instructions and constraints:\nCONSTRAINT CON-0002" in first + second
