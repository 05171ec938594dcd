import json

from stele.agenteval import harnesses

# lines as the real binaries print them (Claude Code 2.1.328 stream-json, Codex 0.171.0 exec --json)
CLAUDE = "\n".join(json.dumps(e) for e in [
    {"type": "system", "subtype": "init", "cwd": "/r"},
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "thinking"}]}},
    {"type": "result", "subtype": "success", "num_turns": 3, "result": "Kept CON-6E8B.",
     "usage": {"input_tokens": 30, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 2, "output_tokens": 40}},
]) + "\nnot json\n"
CODEX = "\n".join(json.dumps(e) for e in [
    {"type": "thread.started", "thread_id": "t"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "command_execution", "command": "cat a"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "first"}},
    {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 10}},
    {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "Done."}},
    {"type": "turn.completed", "usage": {"input_tokens": 12, "cached_input_tokens": 0, "output_tokens": 3}},
])


def test_tokens_turns_and_answer_from_each_harness_output():
    u = harnesses.read_output("claude", CLAUDE)
    assert (u.tokens_in, u.tokens_out, u.turns, u.answer) == (37, 40, 3, "Kept CON-6E8B.")
    u = harnesses.read_output("codex", CODEX)
    assert (u.tokens_in, u.tokens_out, u.turns, u.answer) == (22, 13, 2, "Done.")
    assert harnesses.read_output("codex", "").turns == 0


def test_command_lines_respect_the_users_settings():
    cmd = harnesses.command("claude", "claude", "do it", with_stele=True, max_turns=4, extra=["--model", "m"])
    assert cmd == ["claude", "-p", "do it", "--output-format", "stream-json", "--verbose", "--max-turns", "4",
                   "--model", "m"]
    assert not any("bypass" in a or "skip-permissions" in a or "permission-mode" in a for a in cmd)
    with_hooks = harnesses.command("codex", "codex", "do it", with_stele=True, max_turns=None, extra=[])
    without = harnesses.command("codex", "codex", "do it", with_stele=False, max_turns=None, extra=[])
    assert "--dangerously-bypass-hook-trust" in with_hooks and "--dangerously-bypass-hook-trust" not in without
    assert not any("sandbox" in a or "approval" in a for a in with_hooks)


def test_no_credentials_is_one_line_saying_what_to_do(tmp_path):
    env = {"HOME": str(tmp_path)}
    why = harnesses.missing_credentials("claude", env)
    assert why is not None and "ANTHROPIC_API_KEY" in why and "\n" not in why
    assert harnesses.missing_credentials("claude", {**env, "ANTHROPIC_API_KEY": "k"}) is None
    (tmp_path / ".codex").mkdir()
    assert harnesses.missing_credentials("codex", env) is not None
    (tmp_path / ".codex" / "config.toml").write_text(
        'model_provider = "mine"\n[model_providers.mine]\nenv_key = "MINE_KEY"\n')
    assert harnesses.missing_credentials("codex", env) is not None
    assert harnesses.missing_credentials("codex", {**env, "MINE_KEY": "k"}) is None


def test_codex_runs_the_clone_with_the_repositorys_own_project_settings(tmp_path):
    (tmp_path / ".codex").mkdir()
    repo = tmp_path / "repo"
    (tmp_path / ".codex" / "config.toml").write_text(
        f'[projects."{repo}"]\ntrust_level = "untrusted"\n')
    got = harnesses.trust_like("codex", repo, tmp_path / "clone", {"HOME": str(tmp_path)})
    assert got == ["-c", f'projects={{"{tmp_path / "clone"}" = {{"trust_level" = "untrusted"}}}}']
    got = harnesses.trust_like("codex", tmp_path / "other", tmp_path / "clone", {"HOME": str(tmp_path)})
    assert got[1].endswith('{"trust_level" = "trusted"}}')
    assert harnesses.trust_like("claude", repo, tmp_path / "clone", {}) == []


def test_gemini_runs_trust_the_clone_through_the_clis_own_switch():
    # Gemini CLI 0.61.0 (packages/core/src/utils/trust.ts, checkPathTrust): "true" trusts the workspace;
    # without it a headless run in a folder nobody trusted stops before the model is asked
    env = {"HOME": "/h", "GEMINI_CLI_TRUST_WORKSPACE": "false"}
    assert harnesses.run_env("gemini", env)["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    assert harnesses.run_env("claude", env) == env and harnesses.run_env("codex", {"HOME": "/h"}) == {"HOME": "/h"}
    cmd = harnesses.command("gemini", "gemini", "do it", with_stele=True, max_turns=None, extra=[])
    assert not any("trust" in a or "yolo" in a or "approval" in a for a in cmd)


def test_copilot_trusts_the_clone_for_one_session_in_both_arms(tmp_path):
    trust = harnesses.trust_like("copilot", tmp_path / "repo", tmp_path / "clone", {})
    assert trust == ["--trust-folder"]
    for with_stele in (True, False):
        cmd = harnesses.command("copilot", "copilot", "do it", with_stele=with_stele, max_turns=None, extra=["-x"],
                                trust=trust, usage_file=tmp_path / "u.json")
        assert cmd == ["copilot", "-p", "do it", "--output-format", "json", "--trust-folder",
                       "--usage-output-file", str(tmp_path / "u.json"), "-x"]
        assert not any("allow-all" in a or "yolo" in a for a in cmd)


def test_gemini_and_copilot_outputs_and_copilots_usage_file(tmp_path):
    # Gemini CLI 0.61.0 stream-json; Copilot CLI 1.0.102 JSON lines and --usage-output-file, as printed
    gemini = "\n".join(json.dumps(e) for e in [
        {"type": "init", "session_id": "s", "model": "gemini-2.5-flash"},
        {"type": "message", "role": "assistant", "content": "I left it ", "delta": True},
        {"type": "message", "role": "assistant", "content": "as it is.", "delta": True},
        {"type": "result", "status": "success", "stats": {"input_tokens": 20, "output_tokens": 20, "tool_calls": 1}},
    ])
    u = harnesses.read_output("gemini", gemini)
    assert (u.tokens_in, u.tokens_out, u.turns, u.answer) == (20, 20, 2, "I left it as it is.")
    copilot = "\n".join(json.dumps(e) for e in [
        {"type": "assistant.message", "data": {"content": "", "toolRequests": [{"name": "create"}]}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c", "success": True}},
        {"type": "assistant.message", "data": {"content": "Added the script.", "toolRequests": []}},
        {"type": "result", "exitCode": 0, "usage": {"premiumRequests": 0, "sessionDurationMs": 701}},
    ])
    u = harnesses.read_output("copilot", copilot)
    assert (u.tokens_in, u.tokens_out, u.turns, u.answer) == (0, 0, 2, "Added the script.")
    usage = tmp_path / "usage.json"
    usage.write_text(json.dumps({"modelMetrics": {
        "claude-sonnet-4.5": {"usage": {"inputTokens": 20, "outputTokens": 9, "cacheReadTokens": 5, "cacheWriteTokens": 1}},
        "gpt-5-mini": {"usage": {"inputTokens": 3, "outputTokens": 1}}},
        "agentMetrics": {"main": {"modelMetrics": {"claude-sonnet-4.5": {"usage": {"inputTokens": 20}}}}}}))
    harnesses.read_usage_file(usage, u)
    assert (u.tokens_in, u.tokens_out) == (29, 10)
    harnesses.read_usage_file(usage, u)  # counted once: tokens already known are never added again
    assert (u.tokens_in, u.tokens_out) == (29, 10)
    fresh = harnesses.Usage()
    harnesses.read_usage_file(tmp_path / "missing.json", fresh)
    assert (fresh.tokens_in, fresh.tokens_out) == (0, 0)
