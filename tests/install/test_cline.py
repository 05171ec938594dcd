"""`stele install cline`: hook scripts Cline runs as they are, executable, in the fail-open form; a hook
of the user's at the same name is never replaced; uninstall leaves the folder as it was."""
import os
import subprocess

import pytest

from stele.errors import SteleError
from stele.install import targets
from stele.install.jsonhooks import is_ours
from stele.project import Project


def test_install_writes_executable_fail_open_scripts_and_uninstall_removes_them(repo):
    project = Project(repo)
    changes = targets.get("cline").install(project)
    hooks = repo / ".clinerules" / "hooks"
    assert sorted(c.path.name for c in changes if c.action == "created") == ["PostToolUse", "PreToolUse"]
    for name, event in (("PreToolUse", "pre-edit"), ("PostToolUse", "post-edit")):
        path = hooks / name
        assert path.stat().st_mode & 0o777 == 0o755
        text = path.read_text()
        assert text.startswith("#!/bin/sh\n") and f"stele hook {event} --harness cline" in text
        assert is_ours({"command": text.splitlines()[-1]})
        # without stele on PATH the script prints nothing and exits 0 (Cline then carries on)
        done = subprocess.run([str(path)], input="{}", capture_output=True, text=True,
                              env={"PATH": "/nonexistent", "HOME": str(repo)})
        assert (done.returncode, done.stdout) == (0, "")
    assert all(c.action == "unchanged" for c in targets.get("cline").install(project))
    targets.get("cline").uninstall(project)
    assert not (repo / ".clinerules").exists()


def test_a_hook_of_the_users_own_is_never_replaced(repo):
    hooks = repo / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text("#!/bin/sh\necho '{}'\n")
    with pytest.raises(SteleError, match="PreToolUse: is a Cline hook of your own"):
        targets.get("cline").install(Project(repo))
    assert (hooks / "PreToolUse").read_text() == "#!/bin/sh\necho '{}'\n"


def test_user_scope_goes_to_cline_s_home_folder(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    changes = targets.get("cline").install(Project(repo), scope="user")
    assert {c.path for c in changes} == {tmp_path / "home" / ".cline" / "hooks" / n for n in ("PreToolUse", "PostToolUse")}
    assert os.access(tmp_path / "home" / ".cline" / "hooks" / "PreToolUse", os.X_OK)
