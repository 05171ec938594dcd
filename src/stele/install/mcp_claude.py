"""`stele install claude-mcp`: register `stele mcp` in the project's `.mcp.json` for Claude Code.

Only on request (it is never detected): a harness with hooks already gets memory pushed into every
prompt, and MCP tools cost context in every session. Project scope only: Claude Code keeps user-scope
servers inside `~/.claude.json`, a large file it rewrites itself, which Stele does not touch (run
`claude mcp add --scope user stele -- stele mcp` for that). Claude Code asks each user to approve a
project's servers once. An existing `stele` entry is left as it is: someone may have tuned it.
"""
from __future__ import annotations

import copy

from .files import EditError, FileTarget, Plan, Scope
from .jsontext import JsonText, blank_of, canonical, checked, had

NAME = "stele"
ENTRY = {"type": "stdio", "command": "stele", "args": ["mcp"], "env": {}}
APPROVE = "Claude Code asks once to approve the project's MCP servers; `claude mcp list` shows stele"


class McpJson:
    """The `mcpServers.stele` entry of an `.mcp.json`, spliced into the text (`jsontext`): every other
    key, server and byte kept. Strict JSON: Claude Code reads the file with `JSON.parse`."""

    @staticmethod
    def _load(text: str) -> JsonText:
        doc = JsonText(text)
        if not isinstance(doc.data.get("mcpServers", {}), dict):
            raise EditError("expected an object with an `mcpServers` object")
        return doc

    def apply(self, old: str | None) -> str:
        if old is None or blank_of(old, False):
            return canonical({"mcpServers": {NAME: ENTRY}})
        doc = self._load(old)
        if NAME in doc.data.get("mcpServers", {}):
            return old
        expected = copy.deepcopy(doc.data)
        expected.setdefault("mcpServers", {})[NAME] = ENTRY
        if "mcpServers" in doc.data:
            doc.add(("mcpServers",), ENTRY, key=NAME)
        else:
            doc.add((), {NAME: ENTRY}, key="mcpServers")
        return checked(doc, expected)

    def remove(self, text: str, created: bool, before: str | None = None) -> str | None:
        if blank_of(text, False):
            return text
        doc = self._load(text)
        servers = doc.data.get("mcpServers", {})
        if NAME not in servers:
            return text
        expected = copy.deepcopy(doc.data)
        del expected["mcpServers"][NAME]
        if expected["mcpServers"] or "mcpServers" in had(before, False):
            doc.drop(("mcpServers",), doc.index(("mcpServers",), NAME))
        else:
            del expected["mcpServers"]
            doc.drop((), doc.index((), "mcpServers"))
        if created and not expected.get("mcpServers", {}) and set(expected) <= {"mcpServers"}:
            return None
        return checked(doc, expected)


def plan(scope: Scope) -> Plan:
    return [(scope.root / ".mcp.json", McpJson(), APPROVE)]


TARGET = FileTarget("claude-mcp", "Claude Code: register the `stele mcp` server in .mcp.json (on request)",
                    (), plan, scopes=("project",))
