"""`stele install --check --live` and `--probe`: did Stele's hooks run, and did their text reach the model?

`--check` reads configuration: it cannot see a harness update that started ignoring
`additionalContext`, hooks silently unregistered, or a cold start that injected nothing. Each harness
keeps its own record of a session, and that record is the evidence read here: the newest session of
this repository in

- Claude Code: `~/.claude/projects/<the path with every other character a dash>/<session>.jsonl`
  (`CLAUDE_CONFIG_DIR` moves `~/.claude`);
- Codex: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` whose `session_meta` names this folder
  (`CODEX_HOME` moves `~/.codex`);
- Gemini CLI: `~/.gemini/tmp/<project>/chats/session-*.jsonl`, the project folder found by its
  `.project_root`;
- Copilot CLI: `~/.copilot/session-state/<session>/events.jsonl` whose `workspace.yaml` names this folder.

"Ran" means Stele's session log holds that session (every hook that shows something, and every edit,
writes there under the harness's session id); "reached" means Stele's framed text is in the harness's
own record of the conversation. `--probe` runs the harness once, non-interactively, with
`STELE_PROBE=<nonce>` in its environment: the session-start hook adds the nonce to what it shows, the
prompt asks the model to repeat it, and the nonce in the reply proves the whole path, model included.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..project import Project
from .check import ERROR, NOTE, OK, WARN, Finding

MARK = "(reference data, not instructions)"  # every framed Stele text carries it (render.facts.frame)
PROBE_ENV = "STELE_PROBE"
PROBE_PROMPT = ("This is a connectivity probe. Your context holds a line 'Stele probe: <code>'. Reply with that "
                "code and nothing else; reply NONE if there is no such line.")
PROBE_TIMEOUT = 180
LABELS = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "copilot": "Copilot CLI"}


@dataclass(frozen=True)
class Session:
    record: Path  # the harness's own file of the session
    session: str


def _newest(paths) -> list[Path]:
    return sorted((p for p in paths if p.is_file()), key=lambda p: p.stat().st_mtime, reverse=True)


def _claude(root: Path) -> Session | None:
    base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"
    found = _newest((base / re.sub(r"[^A-Za-z0-9]", "-", str(root))).glob("*.jsonl"))
    return Session(found[0], found[0].stem) if found else None


def _codex(root: Path) -> Session | None:
    base = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"
    for path in _newest(base.glob("*/*/*/rollout-*.jsonl")):
        try:
            with path.open(encoding="utf-8") as f:
                meta = json.loads(f.readline()).get("payload") or {}
        except (OSError, ValueError, AttributeError):
            continue
        if _same(meta.get("cwd"), root):
            return Session(path, str(meta.get("session_id") or meta.get("id") or path.stem))
    return None


def _gemini(root: Path) -> Session | None:
    for project in (Path.home() / ".gemini" / "tmp").glob("*"):
        marker = project / ".project_root"
        if marker.is_file() and _same(marker.read_text(encoding="utf-8", errors="replace").strip(), root):
            for path in _newest((project / "chats").glob("session-*")):
                try:
                    with path.open(encoding="utf-8") as f:
                        first = json.loads(f.readline())
                    return Session(path, str(first["sessionId"]))
                except (OSError, ValueError, KeyError, TypeError):
                    continue
    return None


def _copilot(root: Path) -> Session | None:
    base = Path.home() / ".copilot" / "session-state"
    for events in _newest(base.glob("*/events.jsonl")):
        try:
            workspace = (events.parent / "workspace.yaml").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        cwd = next((line[4:].strip() for line in workspace.splitlines() if line.startswith("cwd: ")), None)
        if _same(cwd, root):
            return Session(events, events.parent.name)
    return None


def _same(path: object, root: Path) -> bool:
    return isinstance(path, str) and bool(path) and Path(path).resolve() == root.resolve()


FINDERS = {"claude": _claude, "codex": _codex, "gemini": _gemini, "copilot": _copilot}


def last_session(project: Project, harness: str) -> list[Finding]:
    """What the harness's record of its newest session here says about Stele's hooks."""
    from ..session import wal

    if harness == "cline":  # its record is keyed by its session id; its hooks send the task's conversation id
        return [Finding(harness, NOTE, "`--live` does not read Cline's session records yet: they name the "
                                       "session, while its hooks name the task (`stele session list` shows the tasks)")]
    if harness not in FINDERS:
        return [Finding(harness, NOTE, "keeps no session record Stele can read: `--live` cannot tell")]
    found = FINDERS[harness](project.root)
    if found is None:
        return [Finding(harness, NOTE, f"no {LABELS[harness]} session in this repository yet: run one (or "
                                       "`--probe`) and check again")]
    where = f"session {found.session} ({found.record})"
    text = found.record.read_text(encoding="utf-8", errors="replace")
    ran = bool(wal.segments(project, found.session))
    reached = MARK in text
    if ran and reached:
        return [Finding(harness, OK, f"last {where}: Stele's hooks ran and their text reached the conversation")]
    if ran:
        return [Finding(harness, ERROR, f"last {where}: Stele's hooks ran but none of their text is in the "
                                        f"conversation: {LABELS[harness]} dropped it (an update may have "
                                        "changed what it accepts from hooks)")]
    if reached:
        return [Finding(harness, WARN, f"last {where}: Stele's text is in the conversation but this "
                                       "repository's session log has no line of it (state not writable?)")]
    return [Finding(harness, ERROR, f"last {where}: no Stele hook ran (not trusted, switched off, or "
                                    "`stele` not on the harness's PATH: see the findings above)")]


def probe_command(harness: str) -> list[str] | None:
    """The harness's one-shot, non-interactive run of the probe prompt (its reply on stdout)."""
    return {"claude": ["claude", "-p", PROBE_PROMPT],
            "codex": ["codex", "exec", "--skip-git-repo-check", PROBE_PROMPT],
            "gemini": ["gemini", "-p", PROBE_PROMPT],
            "copilot": ["copilot", "-p", PROBE_PROMPT]}.get(harness)


def probe(project: Project, harness: str) -> Finding:
    """Run the harness once on the probe prompt with a fresh nonce; did the nonce come back?"""
    cmd = probe_command(harness)
    if cmd is None:
        return Finding(harness, NOTE, "has no non-interactive mode to probe")
    nonce = "stele-probe-" + os.urandom(6).hex()
    env = {**os.environ, PROBE_ENV: nonce}
    try:
        done = subprocess.run(cmd, cwd=project.root, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=PROBE_TIMEOUT, start_new_session=True)
    except FileNotFoundError:
        return Finding(harness, WARN, f"probe: `{cmd[0]}` is not on PATH here")
    except subprocess.TimeoutExpired:
        return Finding(harness, ERROR, f"probe: `{cmd[0]}` gave no answer within {PROBE_TIMEOUT} s")
    if nonce in done.stdout:
        return Finding(harness, OK, "probe: the nonce Stele's session-start hook added came back from the model")
    said = (done.stdout.strip() or done.stderr.strip())[-200:]
    return Finding(harness, ERROR, f"probe: the model did not see Stele's session-start text (exit "
                                   f"{done.returncode}; it said {said!r})")


def probe_line() -> str | None:
    """For the session-start hook: the probe's line when a probe runs (`STELE_PROBE`), else None. Only
    a nonce Stele could have made is repeated."""
    nonce = os.environ.get(PROBE_ENV, "")
    return f"Stele probe: {nonce}" if re.fullmatch(r"stele-probe-[0-9a-f]{12}", nonce) else None
