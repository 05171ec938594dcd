"""`stele install claude-mcp`: register `stele mcp` in the project's `.mcp.json` for Claude Code.

Only on request (it is never detected): a harness with hooks already gets memory pushed into every
prompt, and MCP tools cost context in every session. Project scope only: Claude Code keeps user-scope
servers inside `~/.claude.json`, a large file it rewrites itself, which Stele does not touch (run
`claude mcp add --scope user stele -- stele mcp` for that). Claude Code asks each user to approve a
project's servers once. An existing `stele` entry is left as it is: someone may have tuned it.
"""
from __future__ import annotations

from typing import Any

from .files import EditError, FileTarget, Plan, Scope
from .jsonhooks import dump, load_object

NAME = "stele"
ENTRY = {"type": "stdio", "command": "stele", "args": ["mcp"], "env": {}}
APPROVE = "Claude Code asks once to approve the project's MCP servers; `claude mcp list` shows stele"


class McpJson:
    """The `mcpServers.stele` entry of an `.mcp.json`, every other key and server kept."""

    @staticmethod
    def _load(text: str | None) -> dict[str, Any]:
        if text is None or not text.strip():
            return {}
        data = load_object(text)
        if not isinstance(data.get("mcpServers", {}), dict):
            raise EditError("expected an object with an `mcpServers` object")
        return data

    def apply(self, old: str | None) -> str:
        data = self._load(old)
        servers = data.setdefault("mcpServers", {})
        if NAME in servers and old is not None:
            return old
        servers[NAME] = dict(ENTRY)
        return dump(data, old)

    def remove(self, text: str, created: bool) -> str | None:
        data = self._load(text)
        servers = data.get("mcpServers", {})
        if NAME not in servers:
            return text
        del servers[NAME]
        if not servers:
            del data["mcpServers"]
        if created and not data:
            return None
        return dump(data, text)


def plan(scope: Scope) -> Plan:
    return [(scope.root / ".mcp.json", McpJson(), APPROVE)]


TARGET = FileTarget("claude-mcp", "Claude Code: register the `stele mcp` server in .mcp.json (on request)",
                    (), plan, scopes=("project",))
