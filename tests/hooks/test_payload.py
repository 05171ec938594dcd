"""Payload parsing: the fields each harness spells its own way."""
import json

import pytest

from stele.hooks.payload import PayloadError, parse


def test_malformed_payloads_raise_one_clear_error():
    with pytest.raises(PayloadError, match="not JSON"):
        parse("{nope")
    with pytest.raises(PayloadError, match="JSON list, not an object"):
        parse("[1, 2]")
    assert parse("").data == {} and parse("  \n").harness == "claude"


def test_session_ids_come_from_the_payload_first_and_are_safe_file_names(monkeypatch):
    assert parse(json.dumps({"session_id": "abc-123"})).session == "abc-123"
    assert "/" not in parse(json.dumps({"session_id": "../../etc/passwd"})).session
    assert parse(json.dumps({"sessionId": "cop 1"})).session == "cop-1"
    assert parse(json.dumps({"conversation_id": "conv-9"})).session == "conv-9"
    assert parse(json.dumps({"session_id": ""})).session is None
    monkeypatch.setenv("STELE_SESSION", "from-env")
    assert parse("{}").session == "from-env"
    assert parse(json.dumps({"session_id": "harness-1"})).session == "harness-1"


def test_cwd_from_payload_or_cursor_workspace_roots(tmp_path):
    assert parse(json.dumps({"cwd": str(tmp_path)})).cwd == tmp_path
    assert parse(json.dumps({"workspace_roots": [str(tmp_path)], "conversation_id": "c"})).cwd == tmp_path
    assert parse(json.dumps({"cwd": str(tmp_path / "missing")})).cwd is None


def test_a_cwd_no_file_system_accepts_is_no_cwd():
    """A name longer than the file system allows (found by the fuzzer) or with a NUL byte."""
    assert parse(json.dumps({"cwd": "x" * 5000})).cwd is None
    assert parse(json.dumps({"cwd": "a\u0000b"})).cwd is None


def test_edited_paths_for_every_harness_shape():
    claude = parse(json.dumps({"tool_name": "Edit",
                               "tool_input": {"file_path": "/r/src/a.py", "old_string": "x"}}))
    assert claude.edited_paths() == ["/r/src/a.py"]
    copilot = parse(json.dumps({"sessionId": "s", "toolName": "edit",
                                "toolArgs": json.dumps({"path": "src/b.py", "old_str": "x"})}))
    assert copilot.tool_name == "edit" and copilot.edited_paths() == ["src/b.py"]
    cursor = parse(json.dumps({"conversation_id": "c", "file_path": "/r/c.ts", "edits": []}))
    assert cursor.edited_paths() == ["/r/c.ts"]
    patch = ("*** Begin Patch\n*** Update File: src/d.py\n@@\n-a\n+b\n*** Add File: docs/new.md\n+x\n"
             "*** Update File: src/old.py\n*** Move to: src/new.py\n*** End Patch")
    codex = parse(json.dumps({"turn_id": "t", "tool_name": "apply_patch", "tool_input": {"command": patch}}))
    assert codex.edited_paths() == ["src/d.py", "docs/new.md", "src/old.py", "src/new.py"]


def test_stop_hook_active_must_be_true_exactly():
    assert parse(json.dumps({"stop_hook_active": True})).stop_hook_active
    assert not parse(json.dumps({"stop_hook_active": "false"})).stop_hook_active


def test_the_harness_session_id_is_read_from_its_own_key_and_made_a_safe_name():
    from stele.hooks.payload import session_of

    assert session_of({"session_id": "abc-123"}) == "abc-123"
    assert session_of({"sessionId": "9f1c/x y"}) == "9f1c-x-y"
    assert session_of({"conversation_id": "_conv"}) == "s_conv"
    assert session_of({"other": "x"}) is None


def test_context_a_hook_injected_earlier_is_not_part_of_the_prompt():
    # Gemini CLI puts the session-start hook's context into the next prompt; the ids it names are not
    # the person's (recall would warn that an id from another record is unknown)
    wrapped = "<hook_context>CONSTRAINT CON-6E8B  Never delete a blob\n</hook_context>\n\nWhy is the limiter first?"
    payload = parse(json.dumps({"hook_event_name": "BeforeAgent", "prompt": wrapped}))
    assert payload.prompt == "Why is the limiter first?"
    assert parse(json.dumps({"prompt": "plain <b>words</b>"})).prompt == "plain <b>words</b>"
