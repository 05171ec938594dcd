"""Install and uninstall give back every byte: line ends, byte-order marks, encodings, a missing final
newline, permission bits and symbolic links; folders Stele made go with it; concurrent installs lose
no ledger entry. The property test draws 200 existing files of every such form (derandomized)."""
import json
import os
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stele import textform
from stele.install import targets
from stele.install.files import Ledger, Scope
from stele.project import Project

FORMS = settings(max_examples=200, deadline=None, derandomize=True)
# the files each harness target merges into (the others it creates are all Stele's)
MERGED = {"claude": ".claude/settings.json", "codex": "AGENTS.md", "gemini": ".gemini/settings.json",
          "cursor": ".cursor/hooks.json", "copilot": ".github/copilot-instructions.md",
          "codex-mcp": ".codex/config.toml",
          "cline": ".clinerules/hooks/TaskCancel"}  # Cline's hooks are files: a hook of the user's beside Stele's


def snapshot(root: Path) -> dict[str, tuple[bytes, int] | str]:
    """Every file's bytes and mode and every link's target, but Stele's own state."""
    out: dict[str, tuple[bytes, int] | str] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel == ".stele" or rel.startswith(".stele/"):
            continue
        if p.is_symlink():
            out[rel] = os.readlink(p)
        elif p.is_dir():
            out[rel + "/"] = b"", 0
        else:
            out[rel] = p.read_bytes(), p.stat().st_mode & 0o7777
    return out


def round_trip(root: Path, *names: str) -> None:
    project = Project(root)
    before = snapshot(root)
    had_ledger = (root / ".stele/state/install").exists()
    for name in names:
        targets.get(name).install(project)
    for name in reversed(names):
        changes = targets.get(name).uninstall(project)
        assert all(c.action in ("restored", "removed", "unchanged") for c in changes), changes
    assert snapshot(root) == before
    assert had_ledger or not (root / ".stele/state/install").exists()


def markdown(lines: list[str], final: bool) -> str:
    return "\n".join(lines) + ("\n" if final else "")


LINES = st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30),
                 min_size=1, max_size=6)
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=3), max_leaves=6)
SETTINGS = st.dictionaries(st.sampled_from(["model", "permissions", "env", "theme", "x"]), JSON_VALUES, max_size=4)
FORM = st.sampled_from([textform.PLAIN, textform.Form(crlf=True), textform.Form(b"\xef\xbb\xbf"),
                        textform.Form(b"\xef\xbb\xbf", crlf=True), textform.Form(b"\xff\xfe", "utf-16-le"),
                        textform.Form(b"\xfe\xff", "utf-16-be", crlf=True)])
MODES = st.sampled_from([0o644, 0o600, 0o664, 0o640, 0o755, 0o666])  # 0o444: refused (test_read_only.py)


@st.composite
def existing(draw) -> tuple[str, str, bytes, int]:
    name = draw(st.sampled_from(sorted(MERGED)))
    rel = MERGED[name]
    final = draw(st.booleans())
    if rel.endswith(".json"):
        text = json.dumps(draw(SETTINGS), indent=draw(st.sampled_from([None, 2, 4, "\t"])))
        text += "\n" if final else ""
    elif rel.endswith(".toml"):
        text = markdown([f'k{n} = "{v}"' for n, v in enumerate(draw(st.lists(st.sampled_from("abc"), max_size=4)))],
                        final)
    else:
        text = markdown(draw(LINES), final)
    data = textform.encode(text, draw(FORM))
    if draw(st.booleans()) and not rel.endswith((".json", ".toml")):
        data += draw(st.sampled_from([b"\xe9t\xe9\n", b"\x80\x81", b"\r\n"]))  # not UTF-8, or mixed line ends
    return name, rel, data, draw(MODES)


@FORMS
@given(existing())
def test_install_then_uninstall_restores_every_byte_and_mode(case):
    name, rel, data, mode = case
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "fsync", lambda fd: None)  # bytes are the question here, not power cuts
        root = Path(tmp)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)
        round_trip(root, name)


def test_a_crlf_agents_md_comes_back_crlf(tmp_path):
    """The issue's reproduction: the CRLF file came back LF-only while uninstall said "restored"."""
    (tmp_path / "AGENTS.md").write_bytes(b"# My agents\r\n\r\nUse tabs.\r\n")
    targets.get("codex").install(Project(tmp_path))
    text = (tmp_path / "AGENTS.md").read_bytes()
    assert text.count(b"\r\n") == text.count(b"\n") and b"stele:begin" in text  # Stele's block is CRLF too
    round_trip(tmp_path, "claude")  # and the same for a file Stele creates beside it
    targets.get("codex").uninstall(Project(tmp_path))
    assert (tmp_path / "AGENTS.md").read_bytes() == b"# My agents\r\n\r\nUse tabs.\r\n"


def test_a_bom_settings_file_is_merged_and_restored(tmp_path):
    path = tmp_path / ".claude/settings.json"
    path.parent.mkdir()
    path.write_bytes(b'\xef\xbb\xbf{\r\n  "model": "opus"\r\n}')
    targets.get("claude").install(Project(tmp_path))
    text, form = textform.decode(path.read_bytes())
    assert form == textform.Form(b"\xef\xbb\xbf", crlf=True) and json.loads(text)["model"] == "opus"
    targets.get("claude").uninstall(Project(tmp_path))
    assert path.read_bytes() == b'\xef\xbb\xbf{\r\n  "model": "opus"\r\n}'


def test_a_symlinked_settings_file_is_written_through_and_stays_a_link(tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "settings.json").write_text('{"model": "opus"}\n')
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".claude/settings.json").symlink_to(dotfiles / "settings.json")
    targets.get("claude").install(Project(repo))
    assert (repo / ".claude/settings.json").is_symlink()
    assert "stele hook" in (dotfiles / "settings.json").read_text()
    round_trip(repo, "gemini")
    targets.get("claude").uninstall(Project(repo))
    assert (repo / ".claude/settings.json").is_symlink()
    assert (dotfiles / "settings.json").read_text() == '{"model": "opus"}\n'


def test_codex_with_codex_mcp_leaves_no_empty_folder_in_either_order(tmp_path):
    project = Project(tmp_path)
    for first, second in (("codex", "codex-mcp"), ("codex-mcp", "codex")):
        targets.get("codex").install(project)
        targets.get("codex-mcp").install(project)
        targets.get(first).uninstall(project)
        targets.get(second).uninstall(project)
        assert not (tmp_path / ".codex").exists() and not (tmp_path / "AGENTS.md").exists()


def test_a_backup_is_readable_only_by_its_owner(tmp_path):
    path = tmp_path / ".gemini/settings.json"
    path.parent.mkdir()
    path.write_text('{"env": {"TOKEN": "x"}}\n')
    path.chmod(0o600)
    targets.get("gemini").install(Project(tmp_path))
    ledger = Ledger(Scope("project", tmp_path))
    assert ledger.backup_path(".gemini/settings.json").stat().st_mode & 0o777 == 0o600
    assert path.stat().st_mode & 0o777 == 0o600


def test_concurrent_installs_lose_no_ledger_entry(tmp_path):
    """Five installs at once kept 3-7 of 10 entries without the lock, and uninstall left shells."""
    (tmp_path / "AGENTS.md").write_text("# Agents\n")
    before = snapshot(tmp_path)
    project = Project(tmp_path)
    names = ["claude", "codex", "gemini", "cursor", "copilot"]
    start = threading.Barrier(len(names))
    errors: list[BaseException] = []

    def install(name: str) -> None:
        start.wait()
        try:
            targets.get(name).install(project)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=install, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(Ledger(Scope("project", tmp_path)).entries) == 10
    for name in names:
        targets.get(name).uninstall(project)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("data", [b"\xff\xfe\x00", b"\xfe\xff{"])
def test_a_file_that_cannot_be_decoded_is_refused_with_its_name(tmp_path, data):
    from stele.errors import SteleError

    path = tmp_path / ".gemini/settings.json"
    path.parent.mkdir()
    path.write_bytes(data)
    with pytest.raises(SteleError, match=r"settings\.json: cannot be read as text"):
        targets.get("gemini").install(Project(tmp_path))
    assert path.read_bytes() == data
