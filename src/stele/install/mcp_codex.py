"""`stele install codex-mcp`: register `stele mcp` as `[mcp_servers.stele]` in Codex's config.toml
(`.codex/config.toml` in a trusted project, `~/.codex/config.toml` with `--scope user`).

Only on request, like `claude-mcp`. The user's TOML is never re-serialised: the table is appended as
text after a marker comment and cut out the same way, so every comment, blank line and key order of
theirs stays byte for byte. Python's `tomllib` checks the file before and after, which catches the one
case an append cannot handle (an inline `mcp_servers = {...}` table) and refuses with a message.
That is why no TOML-writing library is needed. An existing `[mcp_servers.stele]` is left alone.
"""
from __future__ import annotations

import tomllib

from .files import EditError, FileTarget, Plan, Scope

MARKER = "# stele: `stele mcp` (added by `stele install codex-mcp`; `stele uninstall codex-mcp` removes it)"
HEADER = "[mcp_servers.stele]"
# a cold start imports the MCP SDK (~1-3 s); Codex's default startup timeout is 10 s
BLOCK = f'{MARKER}\n{HEADER}\ncommand = "stele"\nargs = ["mcp"]\nstartup_timeout_sec = 30\n'
NOTE = "Codex reads a project's .codex/config.toml only once you trust the project"


def _parse(text: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise EditError(f"not valid TOML ({e})") from None


def _registered(data: dict) -> bool:
    servers = data.get("mcp_servers")
    return isinstance(servers, dict) and "stele" in servers


class CodexToml:
    def apply(self, old: str | None) -> str:
        if not old or not old.strip():
            return BLOCK
        if _registered(_parse(old)):
            return old
        new = old + ("\n" if old.endswith("\n") else "\n\n") + BLOCK
        try:
            added = _registered(tomllib.loads(new))
        except tomllib.TOMLDecodeError:
            added = False
        if not added:
            raise EditError("[mcp_servers.stele] cannot be appended (is `mcp_servers` an inline table?)")
        return new

    def remove(self, text: str, created: bool, before: str | None = None) -> str | None:
        lines = text.splitlines(keepends=True)
        start = next((i for i, line in enumerate(lines) if line.strip() == HEADER), None)
        if start is None:
            return text
        end = start + 1
        while end < len(lines) and not (lines[end].lstrip().startswith("[") and
                                         not lines[end].strip().startswith("[mcp_servers.stele.")):
            end += 1
        if start > 0 and lines[start - 1].strip() == MARKER:
            start -= 1
        while end < len(lines) and not lines[end].strip():
            end += 1
        if end >= len(lines):  # the block was last: drop the blank line the install put before it
            while start > 0 and not lines[start - 1].strip():
                start -= 1
        rest = "".join(lines[:start] + lines[end:])
        if _registered(_parse(rest)):
            raise EditError("[mcp_servers.stele] is still there after removing the table; remove it by hand")
        return None if created and not rest.strip() else rest


def plan(scope: Scope) -> Plan:
    return [(scope.root / ".codex" / "config.toml", CodexToml(), NOTE)]


TARGET = FileTarget("codex-mcp", "Codex: register the `stele mcp` server as [mcp_servers.stele] (on request)",
                    (), plan)
