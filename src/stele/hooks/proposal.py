"""What an edit tool is about to write, from its payload: per file, the lines it adds and the file as
it will be, so the pre-edit hook can run the facts' checks (anchors/codecheck.py) before the change.

The shapes, as the harnesses send them (tests/fixtures/harness): Claude Code's `Write` (`file_path`,
`content`), `Edit` (`old_string`, `new_string`, `replace_all`) and the legacy `MultiEdit` (`edits`:
a list of those), Copilot's Claude-form `path`/`old_str`/`new_str`, and Codex's `apply_patch`, whose
argument is a patch (`*** Add File:`, `*** Update File:` with `@@` hunks of ` `, `-` and `+` lines,
`*** Move to:`, `*** Delete File:`). A line counts as added when the tool writes it and the text it
replaces did not have it; `after` is None when the result cannot be told (an `old_string` not in the
file, a hunk that does not apply): then only `forbid` checks run. Nothing here raises on a strange
payload: what cannot be read proposes nothing.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..plain import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass
class Proposal:
    added: list[tuple[int, str]] = field(default_factory=list)  # (line number in `after`, or 0; text)
    after: str | None = None


def proposals(tool_input: dict[str, Any], rel: Callable[[str], str | None], root: Path) -> dict[str, Proposal]:
    """repo-relative path -> what the tool writes there; `rel` maps a path as sent to one (None: outside)."""
    out: dict[str, Proposal] = {}
    patch = next((v for v in tool_input.values() if isinstance(v, str) and "*** Begin Patch" in v), None)
    if patch is not None:
        for name, section in _patch_files(patch):
            path = rel(name)
            if path is not None:
                out[path] = _patched(root / path, root, *section)
        return out
    raw = next((v for k in ("file_path", "filePath", "path") if isinstance(v := tool_input.get(k), str)), "")
    path = rel(raw) if raw else None
    if path is None:
        return out
    current = _read(root / path, root)
    content = tool_input.get("content")
    if isinstance(content, str):  # a whole-file write
        before = set((current or "").split("\n"))
        lines = content.split("\n")
        out[path] = Proposal([(n + 1, t) for n, t in enumerate(lines) if t not in before], content)
        return out
    given = tool_input.get("edits")
    edits: list[Any] = given if isinstance(given, list) else [tool_input]
    text = current
    added: list[tuple[int, str]] = []
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        old = edit.get("old_string", edit.get("old_str"))
        new = edit.get("new_string", edit.get("new_str"))
        if not isinstance(new, str):
            continue
        old = old if isinstance(old, str) else ""
        olds = set(old.split("\n"))
        at = text.find(old) if text is not None and old else -1
        first = text.count("\n", 0, at) + 1 if text is not None and at >= 0 else 0
        added += [(first + i if first else 0, t) for i, t in enumerate(new.split("\n")) if t not in olds]
        if text is not None and at >= 0:
            text = text.replace(old, new) if edit.get("replace_all") is True else text.replace(old, new, 1)
        else:
            text = None
    out[path] = Proposal(added, text)
    return out


def _patch_files(patch: str) -> list[tuple[str, tuple[str, list[str]]]]:
    """(path, (action, body lines)) per file section of an apply_patch text; a move names its target."""
    found: list[tuple[str, tuple[str, list[str]]]] = []
    action, path, body = "", "", list[str]()
    for line in patch.split("\n"):
        for head in ("Add", "Update", "Delete"):
            if line.startswith(f"*** {head} File: "):
                if path:
                    found.append((path, (action, body)))
                action, path, body = head, line.split(": ", 1)[1].strip(), []
                break
        else:
            if line.startswith("*** Move to: ") and path:
                path = line.split(": ", 1)[1].strip()
            elif line.startswith("*** End Patch"):
                break
            elif path:
                body.append(line)
    if path:
        found.append((path, (action, body)))
    return [(p, s) for p, s in found if s[0] != "Delete"]


def _patched(file: Path, root: Path, action: str, body: list[str]) -> Proposal:
    if action == "Add":
        lines = [line[1:] for line in body if line.startswith("+")]
        return Proposal([(n + 1, t) for n, t in enumerate(lines)], "\n".join(lines) + "\n")
    text = _read(file, root)
    added: list[tuple[int, str]] = []
    for hunk in _hunks(body):
        old = [line[1:] for line in hunk if line[:1] in (" ", "-")]
        new = [line[1:] for line in hunk if line[:1] in (" ", "+")]
        plus = [line[1:] for line in hunk if line.startswith("+")]
        olds = set(old)
        at = -1
        if text is not None:
            lines = text.split("\n")
            at = _find(lines, old)
            text = "\n".join(lines[:at] + new + lines[at + len(old):]) if at >= 0 else None
        first = at + 1 if at >= 0 else 0
        for i, line in enumerate(new):
            if line in plus and line not in olds:
                added.append((first + i if first else 0, line))
    return Proposal(added, text)


def _hunks(body: list[str]) -> list[list[str]]:
    hunks: list[list[str]] = [[]]
    for line in body:
        if line.startswith("@@"):
            hunks.append([])
        elif line[:1] in (" ", "-", "+"):
            hunks[-1].append(line)
    return [h for h in hunks if h]


def _find(lines: list[str], block: list[str]) -> int:
    if not block:
        return -1
    for i in range(len(lines) - len(block) + 1):
        if lines[i:i + len(block)] == block:
            return i
    return -1


def _read(path: Path, root: Path) -> str | None:
    """The file as it is now: a regular file inside the repository only (treefile: a link to
    /dev/zero, a FIFO or a file out of the checkout proposes nothing rather than hang the hook)."""
    from .. import treefile

    try:
        return treefile.read_text(path, root=root)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
