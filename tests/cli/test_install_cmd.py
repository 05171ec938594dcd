"""`stele install` / `stele uninstall` per harness, through the real entry point."""
import json
from pathlib import Path

import pytest

from stele.install.jsonhooks import command
from tests.helpers import git, invoke

CLAUDE_SETTINGS = """{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
    ]
  }
}
"""


def tree(root: Path) -> dict[str, bytes]:
    """Every file but git's and Stele's per-machine state, by repo path."""
    files = {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}
    return {rel: p.read_bytes() for rel, p in files.items() if not rel.startswith((".git/", ".stele/state/"))}


def ok(*args):
    r = invoke(*args)
    assert r.code == 0, r.err
    return r


def test_claude_keeps_other_hooks_is_idempotent_and_uninstall_restores(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude/settings.json").write_text(CLAUDE_SETTINGS)
    before = tree(repo)
    out = ok("install", "claude").out
    assert "updated .claude/settings.json" in out and "created .claude/agents/stele-researcher.md" in out
    settings = json.loads((repo / ".claude/settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(npm test)"]}
    commands = [h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]]
    assert "./check.sh" in commands and command("prompt", "claude") in commands
    assert {command("pre-edit", "claude"), command("post-edit", "claude"), command("stop", "claude")} <= set(commands)
    assert settings["hooks"]["PostToolUse"][-1]["matcher"] == "Edit|Write|NotebookEdit"
    assert not any(h.get("async") for g in settings["hooks"]["PostToolUse"] for h in g["hooks"])
    agent = (repo / ".claude/agents/stele-researcher.md").read_text()
    assert "stele hook guard-readonly" in agent and "tools: Bash, Read, Grep, Glob" in agent
    assert (repo / ".claude/skills/recall/SKILL.md").is_file()

    installed = tree(repo)
    again = ok("install", "claude").out
    assert again.count("unchanged") == 3 and tree(repo) == installed

    gone = ok("uninstall", "claude").out
    assert "restored .claude/settings.json" in gone
    assert tree(repo) == before and not (repo / ".claude/agents").exists()
    assert not (repo / ".stele/state/install/ledger.json").exists()


def test_uninstall_after_the_user_changed_the_file_removes_only_stele_entries(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude/settings.json").write_text(CLAUDE_SETTINGS)
    ok("install", "claude")
    path = repo / ".claude/settings.json"
    data = json.loads(path.read_text())
    data["model"] = "opus"
    path.write_text(json.dumps(data, indent=2) + "\n")
    assert "Stele's entries taken out" in ok("uninstall", "claude").out
    left = json.loads(path.read_text())
    assert left["model"] == "opus" and left["hooks"] == json.loads(CLAUDE_SETTINGS)["hooks"]
    assert "stele hook" not in path.read_text()


def test_dry_run_shows_a_diff_and_writes_nothing(repo):
    before = tree(repo)
    r = ok("install", "codex", "--dry-run")
    assert "would create .codex/hooks.json" in r.out
    assert '+  "hooks": {' in r.out and "would create AGENTS.md" in r.out
    assert tree(repo) == before and not (repo / ".stele/state/install").exists()
    data = json.loads(ok("install", "codex", "--dry-run", "--json").out)
    assert data["dry_run"] and {c["path"] for c in data["changes"]} == {".codex/hooks.json", "AGENTS.md"}


def test_codex_hooks_json_has_only_known_root_keys_and_says_to_trust(repo):
    (repo / "AGENTS.md").write_text("# Agents\n\nRun the tests.\n")
    out = ok("install", "codex").out
    assert "/hooks" in out
    data = json.loads((repo / ".codex/hooks.json").read_text())
    assert set(data) == {"hooks"}
    assert set(data["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}
    assert not any(h.get("async") for g in data["hooks"]["PostToolUse"] for h in g["hooks"])
    assert data["hooks"]["PreToolUse"][0]["matcher"] == "apply_patch"
    agents = (repo / "AGENTS.md").read_text()
    assert agents.startswith("# Agents\n\nRun the tests.\n\n<!-- stele:begin") and "stele recall" in agents
    ok("uninstall", "codex")
    assert (repo / "AGENTS.md").read_text() == "# Agents\n\nRun the tests.\n"
    assert not (repo / ".codex").exists()


def test_gemini_uses_millisecond_timeouts_and_after_tool(repo):
    ok("install", "gemini")
    hooks = json.loads((repo / ".gemini/settings.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"}
    handler = hooks["BeforeAgent"][0]["hooks"][0]
    assert handler["timeout"] == 10000 and handler["command"] == command("prompt", "gemini")
    # Gemini matches a lifecycle matcher as one exact string: `startup|resume|clear` never fires
    assert "matcher" not in hooks["SessionStart"][0]
    assert hooks["AfterTool"][0]["matcher"] == "write_file|replace"


def test_cursor_hooks_and_rule(repo):
    ok("install", "cursor")
    data = json.loads((repo / ".cursor/hooks.json").read_text())
    assert data["version"] == 1 and data["hooks"]["sessionStart"] == [
        {"command": command("session-start", "cursor")}]
    rule = (repo / ".cursor/rules/stele.mdc").read_text()
    assert rule.startswith("---\ndescription:") and "alwaysApply: true\n" in rule


def test_copilot_block_and_user_scope_goes_to_home(repo, tmp_path):
    out = ok("install", "copilot").out
    text = (repo / ".github/copilot-instructions.md").read_text()
    assert text.startswith("<!-- stele:begin") and "---" not in text.splitlines()[0]
    hooks = json.loads((repo / ".github/hooks/stele.json").read_text())
    assert hooks["version"] == 1 and "trust" in out
    assert set(hooks["hooks"]) == {"sessionStart", "userPromptTransformed", "postToolUse", "subagentStart",
                                   "agentStop", "sessionEnd"}
    post = hooks["hooks"]["postToolUse"][0]
    assert post["bash"] == command("post-edit", "copilot") and post["matcher"] == "edit|create|apply_patch"
    home = Path.home()
    r = ok("install", "copilot", "claude", "--scope", "user")
    assert "~/.copilot/copilot-instructions.md" in r.out and (home / ".claude/settings.json").is_file()
    assert not (repo / ".claude").exists()
    ok("uninstall", "copilot", "claude", "--scope", "user")
    assert not (home / ".claude").exists() and not (home / ".copilot").exists()


def test_cursor_user_scope_has_no_rule_file(repo):
    ok("install", "cursor", "--scope", "user")
    assert (Path.home() / ".cursor/hooks.json").is_file() and not (Path.home() / ".cursor/rules").exists()


def test_detection_and_errors(repo):
    r = invoke("install")
    assert r.code == 2 and "no harness detected" in r.err
    (repo / ".claude").mkdir()
    (repo / "GEMINI.md").write_text("x")
    r = invoke("install")
    assert r.code == 2 and "detected claude, gemini" in r.err
    assert "created .gemini/settings.json" in ok("install", "--all").out
    r = invoke("install", "vim")
    assert r.code == 2 and "unknown install target 'vim'" in r.err
    (repo / ".claude/settings.json").write_text("{not json")
    r = invoke("install", "claude")
    assert r.code == 1 and "settings.json: not valid JSON" in r.err and "--dry-run" in r.err


def test_install_needs_stele_init(plain_repo):
    r = invoke("install", "claude")
    assert r.code == 1 and "stele init" in r.err and not (plain_repo / ".claude").exists()


def test_installed_files_stay_out_of_git_status(repo):
    ok("install", "claude")
    git(repo, "add", "-A")
    tracked = git(repo, "ls-files").split()
    assert ".claude/settings.json" in tracked and not any(".stele/state" in t for t in tracked)


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "cursor", "copilot"])
def test_every_harness_round_trips(repo, name):
    before = tree(repo)
    ok("install", name)
    assert tree(repo) != before
    ok("uninstall", name)
    assert tree(repo) == before


def test_pre_commit_target_takes_dry_run_and_refuses_user_scope(repo):
    hook = Path(git(repo, "rev-parse", "--git-path", "hooks").strip())
    hook = hook if hook.is_absolute() else repo / hook
    r = ok("install", "pre-commit", "--dry-run")
    assert "would create" in r.out and "+#!/bin/sh" in r.out and not (hook / "pre-commit").exists()
    bad = invoke("install", "pre-commit", "--scope", "user")
    assert bad.code == 2 and "project only" in bad.err
    ok("install", "pre-commit")
    assert "would remove" in ok("uninstall", "pre-commit", "--dry-run").out and (hook / "pre-commit").exists()


def test_a_reinstall_after_the_user_changed_the_file_keeps_their_change_on_uninstall(repo):
    (repo / "AGENTS.md").write_text("# Agents\n")
    ok("install", "codex")
    agents = repo / "AGENTS.md"
    agents.write_text(agents.read_text() + "\nAlways run the linter.\n")
    (repo / ".codex/hooks.json").write_text('{"hooks": {}}\n')  # an older or damaged install
    ok("install", "codex")
    ok("uninstall", "codex")
    assert agents.read_text() == "# Agents\n\nAlways run the linter.\n"
    assert not (repo / ".codex").exists()


def test_a_reinstall_over_a_changed_file_makes_their_version_the_one_uninstall_restores(repo):
    (repo / ".claude").mkdir()
    settings = repo / ".claude/settings.json"
    settings.write_text(CLAUDE_SETTINGS)
    ok("install", "claude")
    data = json.loads(settings.read_text())
    data["model"] = "opus"
    del data["hooks"]["Stop"]  # someone removed one of Stele's hooks, and reinstalls
    settings.write_text(json.dumps(data, indent=2) + "\n")
    assert "updated .claude/settings.json" in ok("install", "claude").out
    assert "restored .claude/settings.json" in ok("uninstall", "claude").out
    left = json.loads(settings.read_text())
    assert left["model"] == "opus" and left["hooks"] == json.loads(CLAUDE_SETTINGS)["hooks"]
