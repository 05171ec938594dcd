"""Stele's handlers merged into a harness's JSON hook file, and taken out again.

Claude Code, Codex and Gemini share one shape (`hooks.<Event>` is a list of matcher groups, each
with a `hooks` list of handlers); Cursor's and Copilot's lists hold the handlers themselves. Either
way a handler whose command runs `stele hook ` (in the fail-open form `command()` writes, or the bare
form older installs wrote) is Stele's and nothing else is. The merge keeps every other
key and hook; it is spliced into the file's text (`jsontext`), so every byte but Stele's entries
stays as it was, and a second run finds its group already in place and changes nothing. New root keys
are never added beyond what a new file needs (Codex rejects a hooks.json with unknown root keys,
`$schema` included).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from .files import EditError
from .jsontext import JsonText, blank_of, canonical, checked, had

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


def _strip_text(doc: JsonText, event: str, keep_last: bool) -> None:
    """Take Stele's handlers out of `hooks.<event>` in the text, as `_strip` does to the data: a group
    that is Stele's (or holds only Stele's handlers) goes whole, a shared group loses Stele's handlers.
    `keep_last`: the last group is the one just added."""
    while True:
        groups = doc.data["hooks"][event]
        n = next((n for n, g in enumerate(groups[:-1] if keep_last else groups) if _has_ours(g)), None)
        if n is None:
            return
        inner = groups[n].get("hooks") if isinstance(groups[n], dict) else None
        if is_ours(groups[n]) or not (isinstance(inner, list) and any(not is_ours(h) for h in inner)):
            doc.drop(("hooks", event), n)
        else:
            doc.drop(("hooks", event, n, "hooks"), next(k for k, h in enumerate(inner) if is_ours(h)))


@dataclass
class JsonHooks:
    """`groups` maps an event name to the one entry Stele wants in its list. `comments`: the harness
    accepts comments in this file (Gemini CLI), so Stele reads them and keeps them."""
    groups: dict[str, dict]
    new_file: dict[str, Any] = field(default_factory=dict)  # root keys a new file starts with
    comments: bool = False

    def _load(self, text: str) -> JsonText:
        doc = JsonText(text, self.comments)
        hooks = doc.data.get("hooks", {})
        if not isinstance(hooks, dict) or any(not isinstance(v, list) for v in hooks.values()):
            raise EditError("`hooks` must map each event to a list")
        return doc

    def apply(self, old: str | None) -> str:
        if old is None or blank_of(old, self.comments):
            new = canonical({**self.new_file, "hooks": {e: [g] for e, g in self.groups.items()}})
            if old and old.strip():  # nothing but comments: they stay, the object goes after them
                return old + ("" if old.endswith("\n") else "\n") + new
            return new
        doc = self._load(old)
        expected = copy.deepcopy(doc.data)
        hooks = expected.setdefault("hooks", {})
        for event, wanted in self.groups.items():
            groups = hooks.get(event, [])
            if [g for g in groups if _has_ours(g)] != [wanted]:
                hooks[event] = _strip(groups) + [wanted]
        if "hooks" not in doc.data:
            doc.add((), hooks, key="hooks")
        for event, wanted in self.groups.items():
            groups = doc.data["hooks"].get(event)
            if groups is None:
                doc.add(("hooks",), [wanted], key=event)
            elif [g for g in groups if _has_ours(g)] != [wanted]:
                doc.add(("hooks", event), wanted)
                _strip_text(doc, event, keep_last=True)
        return checked(doc, expected)

    def remove(self, text: str, created: bool, before: str | None = None) -> str | None:
        if blank_of(text, self.comments):
            return text
        doc = self._load(text)
        # what was there before Stele stays, even when taking Stele's entries out empties it
        had_hooks, kept = "hooks" in had(before, self.comments), had(before, self.comments, "hooks")
        expected = copy.deepcopy(doc.data)
        hooks = expected.get("hooks", {})
        for event in [e for e in hooks if any(_has_ours(g) for g in hooks[e])]:
            hooks[event] = _strip(hooks[event])
            if hooks[event] or event in kept:
                _strip_text(doc, event, keep_last=False)
            else:
                del hooks[event]
                doc.drop(("hooks",), doc.index(("hooks",), event))
            if not hooks and not had_hooks:
                del expected["hooks"]
                doc.drop((), doc.index((), "hooks"))
        rest = {k: v for k, v in expected.items() if k != "hooks" or v}
        if created and rest == {k: v for k, v in self.new_file.items() if k in rest}:
            return None  # nothing left but what Stele started the file with
        return checked(doc, expected)
