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
