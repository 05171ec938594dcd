"""What a harness sent: one JSON object on stdin, reduced to the few fields Stele uses.

Each harness spells things its own way: Claude Code, Codex and Gemini use snake_case and `cwd`;
Copilot CLI uses camelCase and passes tool arguments as a JSON *string*; Cursor has
`conversation_id` and `workspace_roots` instead of a session id and `cwd`; Codex edits files through
`apply_patch`, whose paths are only in the patch text; Cline nests everything under the event
(`tool_call.input`, `preToolUse.parameters`, `userPromptSubmit.prompt`), names the conversation
`taskId` and the folder `workspaceRoots`, and keeps the task's prompt only in its own session record.
This module is the one place that knows; hooks see a `Payload`.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from ..errors import SteleError
from ..lazyre import lazy
from ..plain import dataclass, field
from ..session import wal
from . import harness as harness_mod

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PATCH_FILE = lazy(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_PATH_KEYS = ("file_path", "filePath", "path", "absolute_path", "notebook_path")
PROJECT_DIR_ENVS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "COPILOT_PROJECT_DIR")
# Payload keys that carry the conversation id (Claude Code, Codex, Gemini; Copilot; Cursor; Cline).
SESSION_KEYS = ("session_id", "sessionId", "conversation_id", "taskId")
# Where Cline nests a tool's name and arguments: the CLI's own form, then the legacy one it also sends
_CLINE_TOOL = (("tool_call", "name", "input"), ("tool_result", "name", "input"),
               ("preToolUse", "toolName", "parameters"), ("postToolUse", "toolName", "parameters"))


class PayloadError(SteleError):
    """The payload on stdin is not what a harness sends."""


@dataclass
class Payload:
    data: dict[str, Any]
    harness: str
    form: str = ""  # the protocol to answer in (harness.form): the harness, or copilot-vscode
    event_name: str | None = None
    session: str | None = None
    cwd: Path | None = None
    prompt: str = ""
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # session-start: startup | resume | clear | compact | new
    stop_hook_active: bool = False
    transcript: Path | None = None  # the harness's transcript file, where it names one

    def __post_init__(self) -> None:
        self.form = self.form or self.harness

    def edited_paths(self) -> list[str]:
        """Files an edit tool is about to change or has changed, as sent (usually absolute)."""
        if self.harness == "cline" and self.tool_name not in harness_mod.CLINE_EDIT_TOOLS:
            return []  # Cline's hook files run for every tool: a read names a path too
        found: list[str] = []
        for holder in (self.data, self.tool_input):
            for key in _PATH_KEYS:
                value = holder.get(key)
                if isinstance(value, str) and value.strip():
                    found.append(value.strip())
        edits = self.tool_input.get("edits")
        for edit in edits if isinstance(edits, list) else ():  # MultiEdit's list; anything else is not ours
            if isinstance(edit, dict) and isinstance(edit.get("file_path"), str):
                found.append(edit["file_path"])
        for value in self.tool_input.values():  # Codex apply_patch: paths live in the patch text
            if isinstance(value, str) and "*** " in value:
                found.extend(a or b for a, b in _PATCH_FILE.findall(value))
        return list(dict.fromkeys(found))


def parse(text: str, flag: str | None = None) -> Payload:
    """Parse the stdin text. Empty input (a hook run by hand) is an empty payload; anything that is
    not a JSON object raises PayloadError."""
    if text.strip():
        try:
            data = json.loads(text)
        except ValueError as e:
            raise PayloadError(f"the payload on stdin is not JSON ({e}); a harness sends one JSON object"
                               ) from None
        if not isinstance(data, dict):
            raise PayloadError(f"the payload on stdin is a JSON {type(data).__name__}, not an object")
    else:
        data = {}
    harness = harness_mod.resolve(flag, data)
    if harness == "cline":
        data = _cline_flat(data)
    tool_input = data.get("tool_input", data.get("toolArgs"))
    if isinstance(tool_input, str):  # Copilot (and Cursor's MCP events) send arguments as JSON text
        try:
            tool_input = json.loads(tool_input)
        except ValueError:
            tool_input = {"input": tool_input}
    # the harness's own conversation id first: it is exact, an inherited STELE_SESSION may be shared
    session = session_of(data) or wal.current_session()
    source = data.get("source", data.get("trigger"))
    transcript = data.get("transcript_path", data.get("transcriptPath"))
    return Payload(
        data=data, harness=harness, form=harness_mod.form(harness, data),
        transcript=Path(transcript) if isinstance(transcript, str) and transcript.strip() else None,
        event_name=data["hook_event_name"] if isinstance(data.get("hook_event_name"), str) else None,
        session=session, cwd=_cwd(data), prompt=_prompt(data.get("prompt")),
        tool_name=_text(data.get("tool_name", data.get("toolName"))),
        tool_input=tool_input if isinstance(tool_input, dict) else {},
        source=source if isinstance(source, str) else "",
        stop_hook_active=data.get("stop_hook_active") is True,
    )


def _cline_flat(data: dict[str, Any]) -> dict[str, Any]:
    """Cline's payload with the fields Stele reads where the other harnesses put them (the original
    keys kept): `tool_name`/`tool_input` from the event's block, `prompt`, `cwd` from `workspaceRoots`."""
    out = dict(data)
    for block, name_key, input_key in _CLINE_TOOL:
        held = data.get(block)
        if isinstance(held, dict) and isinstance(held.get(name_key), str):
            out.setdefault("tool_name", held[name_key])
            if isinstance(held.get(input_key), dict):
                out.setdefault("tool_input", held[input_key])
            break
    submitted = data.get("userPromptSubmit")
    if isinstance(submitted, dict) and isinstance(submitted.get("prompt"), str):
        out.setdefault("prompt", submitted["prompt"])
    roots = data.get("workspaceRoots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        out.setdefault("cwd", roots[0])
    if isinstance(data.get("hookName"), str):
        out.setdefault("hook_event_name", data["hookName"])
    return out


def cline_task_prompt(data: Mapping[str, Any]) -> str:
    """The prompt a Cline task started with, from Cline's own session record
    (`<sessions>/<id>/<id>.json`, key `prompt`; the folder is `$CLINE_SESSION_DATA_DIR`, else
    `$CLINE_DATA_DIR/sessions`, else `$CLINE_DIR/data/sessions`, else `~/.cline/data/sessions`, as
    @cline/shared `storage/paths.ts` resolves it), or '' when it cannot be read. Cline's hooks never
    carry it to a hook that can answer (hooks/harness.py, CATCH_UP)."""
    context = data.get("sessionContext")
    sid = context.get("rootSessionId") if isinstance(context, dict) else None
    if not isinstance(sid, str) or not re.fullmatch(r"[A-Za-z0-9._-]{1,128}", sid) or sid.startswith("."):
        return ""
    env = os.environ
    base = (env.get("CLINE_SESSION_DATA_DIR", "").strip()
            or os.path.join(env.get("CLINE_DATA_DIR", "").strip()
                            or os.path.join(env.get("CLINE_DIR", "").strip()
                                            or os.path.join(os.path.expanduser("~"), ".cline"), "data"), "sessions"))
    try:
        record = json.loads(Path(base, sid, f"{sid}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    prompt = record.get("prompt") if isinstance(record, dict) else None
    return _prompt(prompt)


def session_of(data: Mapping[str, Any]) -> str | None:
    """The session id a harness put in its payload, made safe as a file name (a harness id is not
    ours to reject: characters outside the allowed set become '-', and an id that holds a secret is
    replaced by its hash)."""
    for key in SESSION_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            from ..redact import redact

            if redact(value).secrets:
                import hashlib

                # a credential never becomes a file name; the same payload still names the same session
                return "s-" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:32]
            name = re.sub(r"[^A-Za-z0-9._-]", "-", value.strip())[:128]
            return wal.check_session_name(name if name[0].isalnum() else "s" + name[:127])
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# Gemini CLI hands a hook's additional context back inside the next prompt, wrapped in this element
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)


def _prompt(value: Any) -> str:
    """The person's own words: context a hook injected earlier is not part of what they asked (the ids
    it names would read as named by them)."""
    return _HOOK_CONTEXT.sub("", _text(value))


def _cwd(data: dict[str, Any]) -> Path | None:
    """Where the agent works: the payload's `cwd` (it follows worktrees), Cursor's first workspace
    root, the harness's project-dir variable, else None (the process's own directory)."""
    candidates = [data.get("cwd")]
    roots = data.get("workspace_roots")
    if isinstance(roots, list) and roots:
        candidates.append(roots[0])
    candidates += [os.environ.get(name) for name in PROJECT_DIR_ENVS]
    for value in candidates:
        if isinstance(value, str) and value.strip() and _is_dir(value):
            return Path(value)
    return None


def _is_dir(value: str) -> bool:
    try:
        return Path(value).is_dir()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False
