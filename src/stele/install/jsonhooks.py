"""Stele's handlers merged into a harness's JSON hook file, and taken out again.

Claude Code, Codex and Gemini share one shape (`hooks.<Event>` is a list of matcher groups, each
with a `hooks` list of handlers); Cursor's and Copilot's lists hold the handlers themselves. Either
way a handler whose command runs `stele hook ` (in the fail-open form `command()` writes, or the bare
form older installs wrote) is Stele's and nothing else is. The merge keeps every other
key and hook, the key order and the file's indentation; a second run finds its group already in place
and changes nothing. New root keys are never added beyond what a new file needs (Codex rejects a
hooks.json with unknown root keys, `$schema` included).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from .files import EditError

# `stele hook EVENT` at the start of the command or after `&&`: the bare form of older installs and
# the guarded form below (a user's own `./wrapper stele hook` is not ours)
_OURS = re.compile(r"(?:^|&&|;|\|\|)\s*stele hook [a-z]")
COMMAND_KEYS = ("command", "bash")  # Copilot CLI spells it `bash`
# the whole of a command Stele writes: the guarded form of `command()`, or the bare one of older installs
_EXACT = re.compile(r"command -v stele >/dev/null 2>&1 && stele hook [a-z][a-z-]* --harness [a-z]+ \|\| true"
                    r"|stele hook [a-z][a-z-]*(?: --harness [a-z]+)?")


def command(event: str, harness: str) -> str:
    """The shell command a harness runs for a Stele hook. It cannot fail: without `stele` on PATH (a
    teammate who never installed it, a harness whose shell cannot see the venv) it prints nothing
    and exits 0, and a Stele that exits non-zero after all is turned into 0. That matters because
    the harnesses punish a failing hook: Gemini CLI takes any exit but 0 and 1 as a deny (exit 127
    blocks every prompt), Copilot CLI denies the tool call when a preToolUse command fails (and it
    runs `.claude/settings.json` hooks too), Claude Code shows a hook error on every event."""
    return f"command -v stele >/dev/null 2>&1 && stele hook {event} --harness {harness} || true"


def guard_command(harness: str) -> str:
    """The research subagent's guard, the one hook that must fail closed: without `stele` on PATH it
    refuses (exit 2, which blocks the tool call) instead of letting every command through."""
    return ("command -v stele >/dev/null 2>&1 || { echo 'stele is not on PATH: the read-only guard "
            f"refuses every command' >&2; exit 2; }}; stele hook guard-readonly --harness {harness}")


def is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and any(
        isinstance(handler.get(k), str) and _OURS.search(handler[k]) for k in COMMAND_KEYS)


def foreign(handler: Any) -> str | None:
    """The command of a handler that passes for Stele's (it runs `stele hook`, or is named or labelled
    as Stele's) but is not a command Stele writes: what a pull request slipping `; curl ... | sh` or
    `$(...)` into a Stele hook entry looks like. None for Stele's own handlers and everyone else's."""
    if not isinstance(handler, dict):
        return None
    looks = is_ours(handler) or str(handler.get("name", "")).startswith("stele") or str(
        handler.get("statusMessage", "")).startswith("stele:")
    if not looks:
        return None
    commands = [handler[k] for k in COMMAND_KEYS if k in handler]
    if commands and all(isinstance(c, str) and _EXACT.fullmatch(c) for c in commands):
        return None
    return " ".join(str(c) for c in commands) or "(no command)"


def _has_ours(group: Any) -> bool:
    return is_ours(group) or (isinstance(group, dict) and any(is_ours(h) for h in group.get("hooks") or []))


def _strip(groups: list) -> list:
    out = []
    for group in groups:
        if is_ours(group):
            continue
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(handlers, list) and any(is_ours(h) for h in handlers):
            kept = [h for h in handlers if not is_ours(h)]
            if not kept:
                continue
            group = {**group, "hooks": kept}
        out.append(group)
    return out


def handler(harness: str, event: str, timeout: int, **extra) -> dict:
    """A command handler as Claude Code and Codex spell it (timeout in seconds)."""
    return {"type": "command", "command": command(event, harness), "timeout": timeout, **extra}


def _indent(text: str) -> str | int:
    for line in text.splitlines()[1:]:
        body = line.lstrip(" \t")
        if body and len(body) < len(line):
            return line[: len(line) - len(body)]
    return 2


def _finite(text: str) -> float:
    """A number as Python reads it, refused when it would not be written back as JSON (1e400 reads as
    inf, which `json.dumps` writes as `Infinity`: no harness would read the file again)."""
    value = float(text)
    if math.isinf(value):
        raise EditError(f"holds the number {text[:40]}, which Stele cannot write back as it is")
    return value


def load_object(text: str) -> dict:
    """A JSON settings file's text as an object (EditError when it is not one)."""
    try:
        data = json.loads(text, parse_float=_finite)
    except EditError:
        raise
    except ValueError as e:
        raise EditError(f"not valid JSON ({e})") from None
    except RecursionError:
        raise EditError("nested too deeply to read") from None
    if not isinstance(data, dict):
        raise EditError("not a JSON object")
    return data


def dump(data: dict, like: str | None) -> str:
    """`data` indented as the file's text `like` was (2 spaces for a new file), ending as it ended."""
    indent = _indent(like) if like else 2
    end = "\n" if like is None or like.endswith("\n") else ""
    return json.dumps(data, indent=indent, ensure_ascii=False) + end


@dataclass
class JsonHooks:
    """`groups` maps an event name to the one entry Stele wants in its list."""
    groups: dict[str, dict]
    new_file: dict[str, Any] = field(default_factory=dict)  # root keys a new file starts with

    def _load(self, text: str | None) -> dict:
        if text is None or not text.strip():
            return dict(self.new_file)
        data = load_object(text)
        hooks = data.get("hooks", {})
        if not isinstance(hooks, dict) or any(not isinstance(v, list) for v in hooks.values()):
            raise EditError("`hooks` must map each event to a list")
        return data

    def apply(self, old: str | None) -> str:
        data = self._load(old)
        hooks = data.setdefault("hooks", {})
        for event, wanted in self.groups.items():
            groups = hooks.get(event, [])
            if [g for g in groups if _has_ours(g)] != [wanted]:
                hooks[event] = _strip(groups) + [wanted]
        new = dump(data, old)
        if old is not None and old.strip() and load_object(old) == data:
            return old  # nothing to add: keep the bytes exactly
        return new

    def remove(self, text: str, created: bool) -> str | None:
        if not text.strip():
            return text
        data = self._load(text)
        hooks = data.get("hooks", {})
        for event in list(hooks):
            if any(_has_ours(g) for g in hooks[event]):
                hooks[event] = _strip(hooks[event])
                if not hooks[event]:
                    del hooks[event]
        if "hooks" in data and not hooks:
            del data["hooks"]
        if created and data == {k: v for k, v in self.new_file.items() if k in data}:
            return None  # nothing left but what Stele started the file with
        return text if load_object(text) == data else dump(data, text)
