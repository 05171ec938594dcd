"""Stele's handlers merged into a harness's JSON hook file, and taken out again.

Claude Code, Codex and Gemini share one shape (`hooks.<Event>` is a list of matcher groups, each
with a `hooks` list of handlers); Cursor's lists hold the handlers themselves. Either way a handler
whose command starts with `stele hook ` is Stele's and nothing else is. The merge keeps every other
key and hook, the key order and the file's indentation; a second run finds its group already in place
and changes nothing. New root keys are never added beyond what a new file needs (Codex rejects a
hooks.json with unknown root keys, `$schema` included).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .files import EditError

OURS = "stele hook "


def is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and str(handler.get("command", "")).lstrip().startswith(OURS)


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
    return {"type": "command", "command": f"{OURS}{event} --harness {harness}", "timeout": timeout, **extra}


def _indent(text: str) -> str | int:
    for line in text.splitlines()[1:]:
        body = line.lstrip(" \t")
        if body and len(body) < len(line):
            return line[: len(line) - len(body)]
    return 2


def load_object(text: str) -> dict:
    """A JSON settings file's text as an object (EditError when it is not one)."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise EditError(f"not valid JSON ({e})") from None
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
        if old is not None and json.loads(old) == data:
            return old  # nothing to add: keep the bytes exactly
        return new

    def remove(self, text: str, created: bool) -> str | None:
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
        return text if json.loads(text) == data else dump(data, text)
