"""JSON-aware merges: other hooks, key order and indentation kept; Stele's entries in and out."""
import json

import pytest

from stele.install.files import EditError, TextBlock
from stele.install.jsonhooks import JsonHooks

OURS = {"hooks": [{"type": "command", "command": "stele hook prompt --harness claude", "timeout": 10}]}
STOP = {"hooks": [{"type": "command", "command": "stele hook stop"}]}
EDIT = JsonHooks({"UserPromptSubmit": OURS, "Stop": STOP})
THEIRS = """{
\t"model": "opus",
\t"hooks": {
\t\t"UserPromptSubmit": [
\t\t\t{"hooks": [{"type": "command", "command": "./lint-prompt.sh"}]}
\t\t]
\t},
\t"env": {"A": "1"}
}
"""


def test_merge_keeps_theirs_order_and_tabs_and_is_idempotent():
    merged = EDIT.apply(THEIRS)
    data = json.loads(merged)
    assert list(data) == ["model", "hooks", "env"]
    assert data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == "./lint-prompt.sh"
    assert data["hooks"]["UserPromptSubmit"][1] == OURS and "Stop" in data["hooks"]
    assert merged.splitlines()[1].startswith("\t\"model\"") and merged.endswith("}\n")
    assert EDIT.apply(merged) == merged


def test_an_outdated_stele_handler_is_replaced_not_duplicated():
    old = {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "./mine.sh"},
        {"type": "command", "command": "stele hook prompt", "timeout": 99}]}]}}
    data = json.loads(EDIT.apply(json.dumps(old)))
    groups = data["hooks"]["UserPromptSubmit"]
    assert groups == [{"hooks": [{"type": "command", "command": "./mine.sh"}]}, OURS]


def test_remove_takes_out_only_stele_entries():
    merged = json.loads(EDIT.apply(THEIRS))
    merged["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "./notify.sh"}]})
    out = json.loads(EDIT.remove(json.dumps(merged, indent=2), created=False))
    lint = {"hooks": [{"type": "command", "command": "./lint-prompt.sh"}]}
    notify = {"hooks": [{"type": "command", "command": "./notify.sh"}]}
    assert out["hooks"] == {"UserPromptSubmit": [lint], "Stop": [notify]}
    assert EDIT.remove(EDIT.apply(None), created=True) is None


def test_cursor_flat_lists_and_new_file_root():
    cursor = JsonHooks({"stop": {"command": "stele hook stop --harness cursor"}}, new_file={"version": 1})
    created = json.loads(cursor.apply(None))
    assert created == {"version": 1, "hooks": {"stop": [{"command": "stele hook stop --harness cursor"}]}}
    mine = {"version": 1, "hooks": {"stop": [{"command": "./a.sh"}]}}
    both = json.loads(cursor.apply(json.dumps(mine)))
    assert both["hooks"]["stop"] == [{"command": "./a.sh"}, {"command": "stele hook stop --harness cursor"}]
    assert json.loads(cursor.remove(json.dumps(both), created=False)) == mine


@pytest.mark.parametrize("text", ["{oops", "[]", '{"hooks": []}', '{"hooks": {"Stop": {}}}'])
def test_unexpected_shapes_are_refused(text):
    with pytest.raises(EditError):
        EDIT.apply(text)


def test_text_block_appends_replaces_and_removes():
    block = TextBlock("## Memory\nuse stele")
    assert block.apply(None) == block.block
    doc = "# Agents\n\nBe nice.\n"
    added = block.apply(doc)
    assert added.startswith(doc + "\n<!-- stele:begin") and added.endswith("<!-- stele:end -->\n")
    assert block.apply(added) == added
    newer = TextBlock("## Memory\nuse stele recall").apply(added)
    assert newer.count("stele:begin") == 1 and "stele recall" in newer
    assert block.remove(added + "More notes.\n", created=False) == doc + "\nMore notes.\n"
    assert block.remove(added, created=False) == doc
    assert block.remove(block.block, created=True) is None


def _sh(cmd: str, path: str, stdin: str = "{}"):
    import subprocess

    return subprocess.run(["/bin/sh", "-c", cmd], input=stdin, capture_output=True, text=True,
                          env={"PATH": path}, timeout=30, check=False)


def test_the_installed_command_cannot_fail_even_without_stele(tmp_path):
    """Gemini denies on any exit but 0 and 1, and Copilot's preToolUse fails closed: the command a
    teammate without Stele runs must print nothing and exit 0, and a Stele that fails must exit 0 too."""
    from stele.install.jsonhooks import command

    missing = _sh(command("prompt", "gemini"), str(tmp_path))  # no stele on this PATH
    assert (missing.returncode, missing.stdout, missing.stderr) == (0, "", "")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "stele").write_text("#!/bin/sh\necho boom >&2\nexit 3\n")
    (fake / "stele").chmod(0o755)
    failing = _sh(command("pre-edit", "copilot"), f"{fake}:/usr/bin:/bin")
    assert failing.returncode == 0 and failing.stderr == "boom\n"
    (fake / "stele").write_text('#!/bin/sh\necho "$@"\n')
    assert _sh(command("stop", "claude"), f"{fake}:/usr/bin:/bin").stdout == "hook stop --harness claude\n"


def test_the_guard_fails_closed_without_stele(tmp_path):
    from stele.install.jsonhooks import guard_command

    r = _sh(guard_command("claude"), str(tmp_path))
    assert r.returncode == 2 and "not on PATH" in r.stderr


def test_bare_commands_of_older_installs_are_still_ours_and_replaced():
    from stele.install.jsonhooks import command, is_ours

    old = {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "stele hook prompt --harness claude", "timeout": 10}]}]}}
    new = JsonHooks({"UserPromptSubmit": {"hooks": [{"type": "command", "command": command("prompt", "claude")}]}})
    data = json.loads(new.apply(json.dumps(old)))
    assert data["hooks"]["UserPromptSubmit"] == [{"hooks": [{"type": "command", "command": command("prompt", "claude")}]}]
    assert is_ours({"bash": command("stop", "copilot")}) and not is_ours({"command": "./wrap.sh stele hook stop"})
    assert json.loads(new.remove(json.dumps(old), created=False)) == {}
