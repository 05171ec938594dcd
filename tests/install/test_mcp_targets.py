"""`stele install claude-mcp` / `codex-mcp`: the server registered in `.mcp.json` and in Codex's
config.toml without disturbing anything else, idempotent, never detected, and taken out again."""
import json
import tomllib

import pytest

from stele.install.files import EditError
from stele.install.mcp_claude import McpJson
from stele.install.mcp_codex import BLOCK, CodexToml
from tests.cli.test_install_cmd import ok, tree
from tests.helpers import invoke

MCP_JSON = """{
    "mcpServers": {
        "github": {"command": "gh-mcp", "args": []}
    },
    "x": 1
}
"""
CODEX = """# my codex settings
model = "o4"  # keep this comment

[mcp_servers.docs]
command = "docs-mcp"

[profiles.fast]
model = "o4-mini"
"""


def test_mcp_json_adds_stele_beside_other_servers_and_takes_it_out():
    edit = McpJson()
    merged = edit.apply(MCP_JSON)
    data = json.loads(merged)
    assert list(data["mcpServers"]) == ["github", "stele"] and data["x"] == 1
    assert data["mcpServers"]["stele"] == {"type": "stdio", "command": "stele", "args": ["mcp"], "env": {}}
    assert merged.splitlines()[1].startswith('    "mcpServers"')  # their indentation
    assert edit.apply(merged) == merged
    assert json.loads(edit.remove(merged, created=False)) == json.loads(MCP_JSON)
    tuned = MCP_JSON.replace('"github"', '"stele": {"command": "/opt/stele", "args": ["mcp"]}, "github"')
    assert edit.apply(tuned) == tuned  # someone's own stele entry is left as it is
    assert edit.remove(edit.apply(None), created=True) is None
    with pytest.raises(EditError):
        edit.apply('{"mcpServers": []}')


def test_codex_toml_appends_a_table_and_keeps_every_byte_of_theirs():
    edit = CodexToml()
    merged = edit.apply(CODEX)
    assert merged.startswith(CODEX) and merged.endswith(BLOCK)
    data = tomllib.loads(merged)
    assert data["mcp_servers"]["stele"] == {"command": "stele", "args": ["mcp"], "startup_timeout_sec": 30}
    assert data["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert data["profiles"]["fast"]["model"] == "o4-mini"
    assert edit.apply(merged) == merged
    assert edit.remove(merged, created=False) == CODEX
    assert edit.apply(None) == BLOCK and edit.remove(BLOCK, created=True) is None


def test_codex_toml_removal_keeps_what_follows_and_refuses_what_it_cannot_edit():
    edit = CodexToml()
    middle = CODEX.replace("[profiles.fast]", BLOCK + "\n[mcp_servers.stele.env]\nSTELE_AGENT = \"codex\"\n\n"
                           "[profiles.fast]")
    assert "stele" not in tomllib.loads(edit.remove(middle, created=False))["mcp_servers"]
    assert "[profiles.fast]" in edit.remove(middle, created=False)
    with pytest.raises(EditError, match="inline table"):
        edit.apply('mcp_servers = { docs = { command = "docs-mcp" } }\n')
    with pytest.raises(EditError, match="not valid TOML"):
        edit.apply("model = \n")


def test_install_and_uninstall_through_the_cli(repo):
    (repo / ".codex").mkdir()
    (repo / ".codex/config.toml").write_text(CODEX)
    before = tree(repo)
    out = ok("install", "claude-mcp", "codex-mcp").out
    assert "created .mcp.json" in out and "updated .codex/config.toml" in out
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["stele"]["args"] == ["mcp"]
    installed = tree(repo)
    assert ok("install", "claude-mcp", "codex-mcp").out.count("unchanged") == 2 and tree(repo) == installed
    ok("uninstall", "claude-mcp", "codex-mcp")
    assert tree(repo) == before


def test_mcp_targets_are_installed_only_on_request(repo):
    (repo / ".claude").mkdir()
    r = invoke("install", "--all", "--dry-run")
    assert r.code == 0 and ".mcp.json" not in r.out
    r = invoke("install", "claude-mcp", "--scope", "user")
    assert r.code == 2 and "claude-mcp supports project" in r.err
