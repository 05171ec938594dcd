"""Run one scripted turn of a real harness binary against the mock model, offline, in a fresh HOME.

Each driver knows the three things that differ between harnesses: the config its fresh HOME needs to
reach 127.0.0.1 and trust the repository, the command line of a non-interactive run, and how to read
the final answer (and the hook events, where the harness reports them) from its output. Everything
else is shared: Stele's hooks are installed by `stele install` exactly as a user would, the process
runs in its own process group with a hard timeout, and stdout/stderr are kept for the report.

The settings used, per harness (from each harness's own source or reference):

- Claude Code: `ANTHROPIC_BASE_URL`, `-p --output-format stream-json --verbose --include-hook-events
  --permission-mode acceptEdits` (a print-mode run treats the folder as trusted).
- Codex: a `[model_providers.mock]` entry with `wire_api = "responses"` in a fresh `CODEX_HOME`, the
  model slug `gpt-5.5` (a known slug, or Codex offers no `apply_patch`), the project marked trusted,
  `codex exec --json --dangerously-bypass-hook-trust` (new hooks otherwise wait for `/hooks` review),
  and `/tmp` left out of the sandbox's writable roots (`exclude_slash_tmp`, see `Codex.configure`).
- Gemini CLI: `GOOGLE_GEMINI_BASE_URL` and `GEMINI_API_KEY`, `security.auth.selectedType:
  gemini-api-key`, the repository in `GEMINI_CLI_TRUSTED_FOLDERS_PATH`, an explicit `--model` (else
  a router model classifies the prompt first).
- Copilot CLI: bring-your-own-key through `COPILOT_PROVIDER_*` with `COPILOT_OFFLINE=true`, a
  non-GPT model name (GPT-5 names get `apply_patch` instead of `edit`), `--trust-folder`.
- Cline CLI: its `openai-compatible` provider pointed at the mock in `providers.json` under an isolated
  `--data-dir` (sandbox mode: the run stays in its process and starts no background hub daemon, which
  a default run leaves behind), `cline --json PROMPT` (act mode, tools auto-approved).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import install
from .mockmodel import Script, Server

PROMPT = "why does garbage collection wait 48 hours before deleting blobs?"
RUN_TIMEOUT = 120  # seconds for one turn; a healthy one takes 2-10 s
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


CAPTURE_ENV = "STELE_E2E_CAPTURE"
_SHIM = """#!/bin/sh
# e2e: keep each hook's stdin payload (the harness's exact bytes), then run the stele under test on it
if [ "$1" = hook ] && [ -n "$%(env)s" ]; then
  f="$%(env)s/$(date +%%s%%N)-$$-$(echo "$*" | tr ' /' '__').json"
  cat > "$f"
  env > "${f%%.json}.env"
  exec %(real)s "$@" < "$f"
fi
exec %(real)s "$@"
"""


def remember(root: Path, *args: str) -> str:
    """`stele remember ARGS` in `root`, as a user types it (no STELE_ variable of the test run); the new id."""
    stele = os.path.join(os.path.dirname(sys.executable), "stele")
    env = {k: v for k, v in os.environ.items() if not k.startswith("STELE_")}
    out = subprocess.run([stele, "remember", *args], cwd=root, env=env, capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return out.split()[1]


def stele_bin_dir(base: Path) -> Path:
    """A folder holding only `stele`: a shim that records hook payloads (under `$STELE_E2E_CAPTURE`)
    and runs the stele under test (its venv is never on PATH)."""
    d = base / "stele-bin"
    if not d.is_dir():
        d.mkdir(parents=True)
        shim = d / "stele"
        shim.write_text(_SHIM % {"env": CAPTURE_ENV, "real": Path(sys.executable).parent / "stele"})
        shim.chmod(0o755)
    return d


def payloads(work: Path) -> list[tuple[str, dict]]:
    """The hook payloads a run captured, in order: (the `stele` arguments, the JSON payload)."""
    out = []
    for path in sorted((work / "payloads").glob("*.json")):
        args = path.stem.split("-", 2)[-1].replace("_", " ")
        try:
            data = json.loads(path.read_text(encoding="utf-8") or "{}")
        except ValueError:
            data = {"unparsed": path.read_text(encoding="utf-8", errors="replace")}
        out.append((args, data))
    return out


def node_dir() -> str:
    node = shutil.which("node")
    return str(Path(node).resolve().parent) if node else ""


@dataclass
class Run:
    harness: str
    root: Path
    server: Server
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    answer: str = ""
    events: list[dict] = field(default_factory=list)  # the harness's JSON output lines
    line_times: list[float] = field(default_factory=list)  # when each stdout line arrived (s from start)
    resident_calls: int | None = None  # calls the resident server answered (run_turn(resident=True))
    env: dict[str, str] = field(default_factory=dict)  # the harness's environment (its HOME, its config)

    def describe(self) -> str:
        moves = ", ".join(f"{r.move}@{r.tool_results}" for r in self.server.agent_requests())
        return (f"{self.harness}: exit {self.returncode} in {self.elapsed:.1f} s; model saw: {moves or 'nothing'}\n"
                f"stderr (last 1500 chars): {self.stderr[-1500:]}\nstdout (last 1500 chars): {self.stdout[-1500:]}")


class Driver:
    name = ""
    targets: tuple[str, ...] = ()  # what `stele install` wires in for this harness's users

    def configure(self, home: Path, root: Path, server: Server, env: dict[str, str]) -> list[str]:
        """Write the fresh HOME's config, add to `env`, return the command line."""
        raise NotImplementedError

    def read_answer(self, events: list[dict]) -> str:
        raise NotImplementedError


class Claude(Driver):
    name = "claude"
    targets = ("claude",)

    def configure(self, home, root, server, env):
        env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-e2e-test",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
        return [str(install.binary("claude")), "-p", PROMPT, "--output-format", "stream-json", "--verbose",
                "--include-hook-events", "--permission-mode", "acceptEdits"]

    def read_answer(self, events):
        results = [e for e in events if e.get("type") == "result"]
        return str(results[-1].get("result", "")) if results else ""


class Codex(Driver):
    name = "codex"
    targets = ("codex",)

    def configure(self, home, root, server, env):
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        # `exclude_slash_tmp`: Codex's Linux sandbox (bubblewrap) protects `.git`, `.codex`, `.agents` and
        # `.aws` in every writable root, by mounting over them; where they are missing it first makes
        # them on the host ("synthetic mount targets") and removes them when the sandboxed process exits,
        # unless another process in its registry still uses them. That registry is under `$TMPDIR`, which
        # is this test's own (`base_env`), while `/tmp`, writable by default, is shared by every Codex on
        # the machine: one run's cleanup removed `/tmp/.git` while another's bwrap was mounting it, that
        # fs-helper failed, and an allowed apply_patch came back "Failed to write file" (RISK-2S78). The
        # repository and `$TMPDIR` stay writable; neither is shared with another test.
        (codex_home / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "mock"\n\n'
            '[sandbox_workspace_write]\nexclude_slash_tmp = true\n\n'
            '[model_providers.mock]\nname = "mock"\n'
            f'base_url = "{server.url}/v1"\nwire_api = "responses"\nenv_key = "MOCK_MODEL_KEY"\n'
            'request_max_retries = 0\nstream_max_retries = 0\n\n'
            f'[projects.{json.dumps(str(root))}]\ntrust_level = "trusted"\n', encoding="utf-8")
        env.update(CODEX_HOME=str(codex_home), MOCK_MODEL_KEY="e2e-test")
        return [str(install.binary("codex")), "exec", "--json", "--dangerously-bypass-hook-trust",
                "--sandbox", "workspace-write", "--skip-git-repo-check", PROMPT]

    def read_answer(self, events):
        texts = [e["item"].get("text", "") for e in events if e.get("type") == "item.completed"
                 and isinstance(e.get("item"), dict) and e["item"].get("type") == "agent_message"]
        return texts[-1] if texts else ""


class Gemini(Driver):
    name = "gemini"
    targets = ("gemini",)

    def configure(self, home, root, server, env):
        settings = home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                        "general": {"disableAutoUpdate": True}}), encoding="utf-8")
        trusted = home / "gemini-trusted-folders.json"
        trusted.write_text(json.dumps({str(root): "TRUST_FOLDER"}), encoding="utf-8")
        env.update(GOOGLE_GEMINI_BASE_URL=server.url, GEMINI_API_KEY="e2e-test",
                   GEMINI_CLI_TRUSTED_FOLDERS_PATH=str(trusted))
        return [str(install.binary("gemini")), "-p", PROMPT, "--output-format", "stream-json",
                "--model", "gemini-2.5-flash", "--approval-mode", "auto_edit"]

    def read_answer(self, events):
        return "".join(str(e.get("content", "")) for e in events
                       if e.get("type") == "message" and e.get("role") == "assistant")


class Copilot(Driver):
    name = "copilot"
    # Copilot CLI also runs a repository's `.claude/settings.json` hooks, so a team that committed
    # Claude Code's hooks gives every Copilot user those too: the suite installs both.
    targets = ("claude", "copilot")

    def configure(self, home, root, server, env):
        env.update(COPILOT_PROVIDER_BASE_URL=server.url + "/v1", COPILOT_PROVIDER_API_KEY="e2e-test",
                   COPILOT_MODEL="claude-sonnet-4.5", COPILOT_OFFLINE="true")
        return [str(install.binary("copilot")), "-p", PROMPT, "--allow-all-tools", "--output-format", "json",
                "--trust-folder", "--log-dir", str(home / "copilot-logs"), "--log-level", "debug"]

    def read_answer(self, events):
        texts = [str(e["data"].get("content", "")) for e in events
                 if e.get("type") == "assistant.message" and isinstance(e.get("data"), dict)]
        texts = [t for t in texts if t]
        return texts[-1] if texts else ""


class Cline(Driver):
    name = "cline"
    targets = ("cline",)

    def configure(self, home, root, server, env):
        data = home / "cline-data"
        settings = data / "settings" / "providers.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
                                        "providers": {"openai-compatible": {"settings": {
                                            "provider": "openai-compatible", "apiKey": "e2e-test",
                                            "model": "mock-model", "baseUrl": server.url + "/v1"},
                                            "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}}),
                            encoding="utf-8")
        return [str(install.binary("cline")), "--json", "--data-dir", str(data), PROMPT]

    def read_answer(self, events):
        results = [e for e in events if e.get("type") == "run_result"]
        return str(results[-1].get("text", "")) if results else ""


DRIVERS: dict[str, Driver] = {d.name: d for d in (Claude(), Codex(), Gemini(), Copilot(), Cline())}


def install_stele(root: Path, targets: tuple[str, ...], env: dict[str, str]) -> None:
    """`stele install TARGETS` in the repository, as a user runs it."""
    stele = Path(sys.executable).parent / "stele"
    done = subprocess.run([str(stele), "install", *targets], check=False, cwd=root, env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise AssertionError(f"stele install {' '.join(targets)} failed:\n{done.stdout}{done.stderr}")


def base_env(home: Path, path: str) -> dict[str, str]:
    """A clean environment: nothing inherited but the locale basics (no API keys, no STELE_*)."""
    env = {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
           "NO_COLOR": "1", "SHELL": "/bin/bash", "TMPDIR": str(home / "tmp"),
           "USER": os.environ.get("USER", "root"),
           "STELE_RESIDENT_IDLE_S": "60"}  # a resident server outlives the test by a minute at most
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def run_turn(name: str, root: Path, work: Path, *, stele_on_path: bool = True,
             extra_env: dict[str, str] | None = None, after_install=None, resident: bool = False,
             script: Script | None = None, targets: tuple[str, ...] | None = None) -> Run:
    """One turn of harness `name` in repository `root`, with a fresh HOME under `work`: Stele's hooks
    installed by `stele install` (the driver's targets, or `targets`), then `after_install(root)` (what a
    test breaks), then the turn. With `resident` (STELE_RESIDENT=1), a resident server is up before the
    turn, so every hook goes through it (otherwise every hook runs in its own process, the default)."""
    driver = DRIVERS[name]
    home = work / f"home-{name}"
    home.mkdir(parents=True, exist_ok=True)
    steles = stele_bin_dir(work)
    path_with = os.pathsep.join(p for p in (str(steles), node_dir(), SYSTEM_PATH) if p)
    install_stele(root, targets or driver.targets, base_env(home, path_with))
    if after_install is not None:
        after_install(root)
    path = path_with if stele_on_path else os.pathsep.join(p for p in (node_dir(), SYSTEM_PATH) if p)
    if not stele_on_path and shutil.which("stele", path=path):
        raise AssertionError(f"a `stele` is installed system-wide ({shutil.which('stele', path=path)}): "
                             "the absent-from-PATH case cannot be run here")
    env = base_env(home, path)
    (work / "payloads").mkdir(exist_ok=True)
    env[CAPTURE_ENV] = str(work / "payloads")
    if os.environ.get("STELE_TODAY"):
        env["STELE_TODAY"] = os.environ["STELE_TODAY"]
    with Server(root, script, log_path=work / f"{name}-requests.jsonl") as server:
        cmd = driver.configure(home, root, server, env)
        env.update(extra_env or {})
        if not resident:
            return _execute(driver, cmd, root, env, server)
        real = str(Path(sys.executable).parent / "stele")
        env["STELE_RESIDENT"] = "1"
        subprocess.Popen([real, "resident-serve", str(root.resolve())], cwd=root, env=env, start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        status = _resident_status(real, root, env, wait=True)
        try:
            run = _execute(driver, cmd, root, env, server)
        finally:
            status = _resident_status(real, root, env)
            subprocess.run([real, "resident", "stop"], cwd=root, env=env, capture_output=True, timeout=60)
        run.resident_calls = status.get("calls")
        return run


def _resident_status(stele: str, root: Path, env: dict[str, str], wait: bool = False) -> dict:
    deadline = time.monotonic() + 60
    while True:
        out = subprocess.run([stele, "resident", "status", "--json"], cwd=root, env=env, capture_output=True,
                             text=True, timeout=60).stdout
        status = json.loads(out or "{}")
        if status.get("running") or not wait or time.monotonic() > deadline:
            return status
        time.sleep(0.1)


def _execute(driver: Driver, cmd: list[str], root: Path, env: dict[str, str], server: Server) -> Run:
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    lines: list[str] = []
    times: list[float] = []
    err: list[str] = []

    import threading

    def pump_err():
        assert proc.stderr is not None
        err.append(proc.stderr.read())

    t = threading.Thread(target=pump_err, daemon=True)
    t.start()
    deadline = start + RUN_TIMEOUT
    timer = threading.Timer(RUN_TIMEOUT, lambda: _kill(proc))
    timer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            times.append(time.monotonic() - start)
        proc.wait(timeout=max(1, deadline - time.monotonic()))
    finally:
        timer.cancel()
        _kill(proc)  # the whole group: a harness's helpers (and hooks) never outlive the test
        t.join(timeout=5)
    elapsed = time.monotonic() - start
    if server.log_path is not None:  # the whole output beside the requests (describe() shows a tail)
        for stream, text in (("stdout", "".join(lines)), ("stderr", "".join(err))):
            server.log_path.with_name(f"{driver.name}-{stream}.txt").write_text(text, encoding="utf-8")
    events = []
    for line in lines:
        if line.lstrip().startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                pass
    return Run(driver.name, root, server, proc.returncode, "".join(lines), "".join(err), elapsed,
               driver.read_answer(events), events, times, env=env)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
