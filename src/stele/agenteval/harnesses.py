"""The harnesses `stele eval --agent` drives: how to run each one non-interactively on a prompt, what
of the user's own configuration says a model is reachable, and what to read from its output.

Nothing here chooses a model, a sandbox or an approval mode: the harness runs with the user's own
configuration (their HOME, their settings, their environment), so it talks to the model their harness
is configured for, under the permissions they set. `--harness-arg` adds flags the user chooses (a
permission mode, a model). What is added, each for one run only and only so the throwaway clone runs
as the user's own checkout does:

- Codex: the clone gets the per-project settings the user's Codex config gives the repository
  (`trust_like`), and the `with` arm passes `--dangerously-bypass-hook-trust`: Codex skips hooks nobody
  has approved in its `/hooks` screen, and the clone's freshly installed hooks have never been seen; it
  trusts hooks only, not commands or files.
- Gemini CLI: `GEMINI_CLI_TRUST_WORKSPACE=true` (`run_env`). Gemini CLI reads a folder's settings, so
  its hooks, only in a trusted folder, and in a non-interactive run an untrusted folder is fatal
  ("Gemini CLI is not running in a trusted directory"): the clone, a new folder under $TMPDIR, is in
  nobody's trusted list. The variable is the CLI's own switch for headless runs (its `--skip-trust`
  flag sets it); it trusts this process's workspace only, and is written to no settings file. The clone
  is our own throwaway copy of the user's repository, run because the user asked for it.
- Copilot CLI: `--trust-folder` (`trust_like`), in both arms. Copilot loads a folder's configuration
  (its hooks among it) only in a trusted folder: one in the `trustedFolders` of its config, or one the
  run trusts with `--trust-folder` ("for one new prompt-mode session only (no saved trust or tool, path,
  or URL approvals)", `copilot --help`) or with `COPILOT_ALLOW_ALL=true`. The clone is in nobody's
  list, so without it the `with` arm ran with no hooks at all.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError

TARGETS = {"claude": ("claude",), "codex": ("codex",), "gemini": ("gemini",), "copilot": ("copilot",)}
HOOK_TRUST = {"codex": ["--dangerously-bypass-hook-trust"]}  # with Stele's hooks only (module docstring)
RUN_ENV = {"gemini": {"GEMINI_CLI_TRUST_WORKSPACE": "true"}}  # both arms: the clone is trusted (module docstring)


@dataclass
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0
    turns: int = 0  # model turns the harness reported (Claude Code), else tool calls + 1
    answer: str = ""  # the final answer
    events: int = 0  # JSON lines read


def binary(name: str, given: str | None, env: dict[str, str]) -> str:
    if given:
        if not Path(given).is_file():
            raise UsageError(f"--harness-bin {given}: no such file")
        return given
    found = shutil.which(name, path=env.get("PATH"))
    if not found:
        raise UsageError(f"{name} is not on PATH: install the harness, or give its executable with --harness-bin")
    return found


def command(name: str, exe: str, prompt: str, *, with_stele: bool, max_turns: int | None,
            extra: list[str], trust: list[str] | None = None, usage_file: Path | None = None) -> list[str]:
    """The non-interactive command line of one run (the prompt as one argument, never through a shell).
    `usage_file`: where Copilot CLI writes its token counts (its JSON lines carry none)."""
    trust = (trust or []) + (HOOK_TRUST.get(name, []) if with_stele else [])
    if name == "claude":
        turns = ["--max-turns", str(max_turns)] if max_turns else []
        return [exe, "-p", prompt, "--output-format", "stream-json", "--verbose", *turns, *extra]
    if name == "codex":
        return [exe, "exec", "--json", *trust, *extra, prompt]
    if name == "gemini":
        return [exe, "-p", prompt, "--output-format", "stream-json", *extra]
    if name == "copilot":
        usage = ["--usage-output-file", str(usage_file)] if usage_file is not None else []
        return [exe, "-p", prompt, "--output-format", "json", *trust, *usage, *extra]
    raise UsageError(f"--harness {name}: give one of {', '.join(TARGETS)}")


def run_env(name: str, env: dict[str, str]) -> dict[str, str]:
    """The harness's environment for one run in a throwaway clone: the user's, plus what makes the clone
    count as a workspace they trust (module docstring)."""
    return {**env, **RUN_ENV.get(name, {})}


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value))


def _codex_config(env: dict[str, str]) -> dict:
    import tomllib

    home = Path(env.get("CODEX_HOME") or _home(env) / ".codex")
    try:
        return tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def trust_like(name: str, repo: Path, tree: Path, env: dict[str, str]) -> list[str]:
    """Codex keys its per-project settings (trust, and with it whether the project's `.codex/` hooks load)
    by path: the throwaway clone gets the settings the user gave their repository, so it runs as their
    checkout does. Only for this run (`-c`), never written to their config. Copilot: the clone is trusted
    for this one session (`--trust-folder`). Gemini CLI's trust is an environment variable (`run_env`);
    Claude Code treats a `-p` run's folder as trusted."""
    if name == "copilot":
        return ["--trust-folder"]
    if name != "codex":
        return []
    projects = _codex_config(env).get("projects")
    mine: dict = {}
    if isinstance(projects, dict):
        for path, settings in projects.items():
            if isinstance(settings, dict) and Path(path).expanduser().resolve() == repo.resolve():
                mine = settings
    if not mine.get("trust_level"):
        mine = {**mine, "trust_level": "trusted"}
    return ["-c", "projects={" + json.dumps(str(tree)) + " = " + _toml(mine) + "}"]


def _home(env: dict[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _codex_provider_key(env: dict[str, str]) -> bool:
    """Codex's config names a provider whose key is in the environment (or needs none)."""
    config = _codex_config(env)
    provider = config.get("model_provider")
    providers = config.get("model_providers") or {}
    entry = providers.get(provider) if isinstance(providers, dict) else None
    if not isinstance(entry, dict):
        return False
    key = entry.get("env_key")
    return not key or bool(env.get(str(key)))


@dataclass
class Credentials:
    env: tuple[str, ...]
    files: tuple[str, ...] = ()  # relative to HOME
    hint: str = ""
    extra: object = field(default=None, repr=False)


CREDENTIALS = {
    "claude": Credentials(("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                           "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"), (".claude/.credentials.json",),
                          "log in with `claude` once, or set ANTHROPIC_API_KEY"),
    "codex": Credentials(("OPENAI_API_KEY", "CODEX_API_KEY"), (".codex/auth.json",),
                         "log in with `codex login`, or set OPENAI_API_KEY", _codex_provider_key),
    "gemini": Credentials(("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
                           "GOOGLE_APPLICATION_CREDENTIALS"), (".gemini/oauth_creds.json",),
                          "log in with `gemini` once, or set GEMINI_API_KEY"),
    "copilot": Credentials(("COPILOT_PROVIDER_API_KEY", "COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
                           (".copilot/config.json",), "log in with `copilot` then /login, or set GH_TOKEN"),
}


def missing_credentials(name: str, env: dict[str, str]) -> str | None:
    """Why no model is reachable for `name` with this environment, or None. macOS keeps Claude Code's
    login in the keychain, which cannot be read from here: there the check passes."""
    cred = CREDENTIALS[name]
    if any(env.get(k) for k in cred.env):
        return None
    if any((_home(env) / f).is_file() for f in cred.files):
        return None
    if name == "claude" and (sys.platform == "darwin" or (env.get("CLAUDE_CONFIG_DIR")
                             and (Path(env["CLAUDE_CONFIG_DIR"]) / ".credentials.json").is_file())):
        return None
    if callable(cred.extra) and cred.extra(env):
        return None
    return (f"no model credentials for {name} here (none of {', '.join(cred.env)} is set, no login under "
            f"{_home(env)}): {cred.hint}, then run again")


def _add_usage(u: Usage, usage: object) -> None:
    if not isinstance(usage, dict):
        return
    ins = usage.get("input_tokens", usage.get("prompt_tokens", 0))
    outs = usage.get("output_tokens", usage.get("completion_tokens", 0))
    extra_in = sum(v for k in ("cache_creation_input_tokens", "cache_read_input_tokens")
                   if isinstance(v := usage.get(k), int))
    u.tokens_in += (ins if isinstance(ins, int) else 0) + extra_in
    u.tokens_out += outs if isinstance(outs, int) else 0


def read_output(name: str, stdout: str) -> Usage:
    """Tokens, turns and the final answer from the harness's JSON lines (what each one reports)."""
    events = []
    for line in stdout.splitlines():
        if line.lstrip().startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    u = Usage(events=len(events))
    tools = 0
    texts: list[str] = []
    for e in (e for e in events if isinstance(e, dict)):
        kind = e.get("type")
        if name == "claude" and kind == "result":
            _add_usage(u, e.get("usage"))
            u.turns = int(e.get("num_turns") or 0)
            texts.append(str(e.get("result") or ""))
        elif name == "codex":
            if kind == "turn.completed":
                _add_usage(u, e.get("usage"))
            item: dict = e["item"] if isinstance(e.get("item"), dict) else {}
            if kind == "item.completed" and item.get("type") == "agent_message":
                texts.append(str(item.get("text") or ""))
            elif kind == "item.completed" and item.get("type") in ("command_execution", "file_change",
                                                                     "mcp_tool_call", "web_search"):
                tools += 1
        elif name == "gemini":
            if kind == "result" and isinstance(e.get("stats"), dict):
                _add_usage(u, e["stats"])
                tools += int(e["stats"].get("tool_calls") or 0)
            elif kind == "message" and e.get("role") == "assistant":
                texts.append(str(e.get("content") or ""))
        elif name == "copilot":
            data: dict = e["data"] if isinstance(e.get("data"), dict) else {}
            if kind == "assistant.message" and data.get("content"):
                texts.append(str(data["content"]))
            if kind == "assistant.usage" or "usage" in data:
                _add_usage(u, data.get("usage", data))
            if kind == "tool.execution_complete":
                tools += 1
    if name == "gemini":
        u.answer = "".join(texts)
    else:
        u.answer = texts[-1] if texts else ""
    if not u.turns:
        u.turns = tools + 1 if events else 0
    return u


def read_usage_file(path: Path, u: Usage) -> None:
    """Copilot CLI's `--usage-output-file`: tokens per model under `modelMetrics` (cache reads and writes
    are input, as for Claude Code), read only when the JSON lines reported no tokens (never counted
    twice). A missing or unreadable file adds nothing."""
    if u.tokens_in or u.tokens_out:
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    models = data.get("modelMetrics") if isinstance(data, dict) else None
    for metrics in (models.values() if isinstance(models, dict) else ()):
        usage = metrics.get("usage") if isinstance(metrics, dict) else None
        if isinstance(usage, dict):
            _add_usage(u, {"input_tokens": sum(v for k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens")
                                               if isinstance(v := usage.get(k), int)),
                           "output_tokens": usage.get("outputTokens", 0)})


def environment() -> dict[str, str]:
    """The user's environment, as the harness would get it from their shell."""
    return dict(os.environ)
