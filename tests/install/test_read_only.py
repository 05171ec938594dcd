"""A settings file made read-only is read-only on purpose: install and uninstall refuse it in one line
naming it and what to do, write nothing anywhere (every target of the run included: hooks and MCP
entries land together or not at all), and exit non-zero; `--dry-run` still shows the change, and
`install --check` still reads the file."""
import os

import pytest

from stele.install import files
from tests.cli.test_install_cmd import tree
from tests.helpers import invoke

SETTINGS = '{\n  "model": "opus"\n}\n'


def settings(repo, mode=0o444):
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(SETTINGS)
    path.chmod(mode)
    return path


def refused(r, path):
    assert r.code != 0 and "internal error" not in r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert f"{path}: is read-only (mode 444)" in r.err and f"chmod u+w {path}" in r.err


def test_install_refuses_a_read_only_settings_file_and_writes_nothing(repo):
    path = settings(repo)
    before = tree(repo)
    refused(invoke("install", "claude"), path)
    assert tree(repo) == before and not (repo / ".claude" / "agents").exists()
    assert not (repo / ".stele" / "state" / "install").exists() and oct(path.stat().st_mode & 0o777) == "0o444"


def test_no_half_install_across_targets(repo):
    """claude's files would all be writable; the read-only .mcp.json stops the whole run first."""
    mcp = repo / ".mcp.json"
    mcp.write_text('{"mcpServers": {}}\n')
    mcp.chmod(0o444)
    before = tree(repo)
    r = invoke("install", "claude", "claude-mcp")
    assert r.code != 0 and ".mcp.json: is read-only" in r.err
    assert tree(repo) == before and not (repo / ".claude").exists()
    instructions = repo / ".github" / "copilot-instructions.md"  # one target, two files: the second,
    hooks = repo / ".github" / "hooks" / "stele.json"  # read-only, stops the first
    instructions.parent.mkdir()
    instructions.write_text("# Ours\n")
    instructions.chmod(0o444)
    before = tree(repo)
    refused(invoke("install", "copilot"), instructions)
    assert tree(repo) == before and not hooks.exists()


def test_dry_run_still_shows_the_change_and_says_it_would_be_refused(repo):
    path = settings(repo)
    r = invoke("install", "claude", "--dry-run")
    assert r.code == 0 and "would update .claude/settings.json (not writable: a real run refuses it)" in r.out
    assert "+  \"hooks\": {" in r.out and path.read_text() == SETTINGS


def test_uninstall_refuses_too_and_a_reinstall_that_changes_nothing_is_fine(repo):
    path = settings(repo, 0o644)
    assert invoke("install", "claude").code == 0
    installed = path.read_bytes()
    path.chmod(0o444)
    r = invoke("install", "claude")  # nothing to change: nothing to refuse
    assert r.code == 0 and "unchanged .claude/settings.json" in r.out
    c = invoke("install", "--check")
    assert "claude: ok:" in c.out and f"{path}: 6 Stele hooks" in c.out
    before = tree(repo)
    refused(invoke("uninstall", "claude"), path)
    assert tree(repo) == before and path.read_bytes() == installed
    path.chmod(0o644)
    assert invoke("uninstall", "claude").code == 0 and path.read_text() == SETTINGS


def test_a_read_only_link_target_is_refused_and_the_link_kept(repo, tmp_path):
    target = tmp_path / "dotfiles-settings.json"
    target.write_text(SETTINGS)
    target.chmod(0o400)
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").symlink_to(target)
    r = invoke("install", "gemini")
    assert r.code != 0 and f"chmod u+w {target}" in r.err
    assert (repo / ".gemini" / "settings.json").is_symlink() and target.read_text() == SETTINGS


def test_a_folder_stele_cannot_write_in_is_refused_before_anything_is_written(repo, monkeypatch):
    """As root every folder is writable: the check is made to say no for one folder."""
    settings(repo, 0o644)
    locked = repo / ".claude"
    real_access = os.access
    monkeypatch.setattr(files.os, "access", lambda p, m, **kw: False if os.fspath(p) == os.fspath(locked)
                        else real_access(p, m, **kw))
    before = tree(repo)
    r = invoke("install", "claude")
    assert r.code != 0 and f"{locked}: is not writable, so Stele cannot" in r.err
    assert tree(repo) == before


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o664])
def test_writable_files_are_still_written(repo, mode):
    path = settings(repo, mode)
    assert invoke("install", "claude").code == 0 and "stele hook" in path.read_text()
    assert path.stat().st_mode & 0o777 == mode
