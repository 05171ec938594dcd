"""What an edit tool is about to write (hooks/proposal.py), from each harness's tool arguments."""
from __future__ import annotations

from pathlib import Path

from stele.hooks.proposal import proposals

OLD = "import os\n\n\ndef login():\n    return os.getenv('USER')\n"


def rel(raw: str) -> str | None:
    return raw.removeprefix("/repo/") if not raw.startswith("/etc") else None


def make(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/login.py").write_text(OLD)
    return tmp_path


def test_an_edit_adds_the_lines_of_new_string_the_old_did_not_have(tmp_path):
    root = make(tmp_path)
    got = proposals({"file_path": "/repo/src/login.py", "old_string": "    return os.getenv('USER')",
                     "new_string": "    os.system('kubectl login')\n    return os.getenv('USER')"}, rel, root)
    plan = got["src/login.py"]
    assert plan.added == [(5, "    os.system('kubectl login')")]
    assert plan.after == OLD.replace("    return", "    os.system('kubectl login')\n    return")


def test_an_edit_whose_old_string_is_not_there_still_proposes_its_lines_without_an_after(tmp_path):
    root = make(tmp_path)
    plan = proposals({"path": "/repo/src/login.py", "old_str": "nope", "new_str": "x = 1"}, rel, root)["src/login.py"]
    assert plan.added == [(0, "x = 1")] and plan.after is None


def test_a_write_adds_the_lines_the_file_did_not_have(tmp_path):
    root = make(tmp_path)
    content = OLD + "print('hi')\n"
    plan = proposals({"file_path": "/repo/src/login.py", "content": content}, rel, root)["src/login.py"]
    assert plan.added == [(6, "print('hi')")] and plan.after == content
    assert proposals({"file_path": "/etc/hosts", "content": "x"}, rel, root) == {}


def test_multiedit_applies_its_edits_in_order(tmp_path):
    root = make(tmp_path)
    plan = proposals({"file_path": "/repo/src/login.py", "edits": [
        {"old_string": "import os", "new_string": "import os\nimport subprocess"},
        {"old_string": "return os.getenv('USER')", "new_string": "return subprocess.run(['id'])", "replace_all": True},
    ]}, rel, root)["src/login.py"]
    assert plan.added == [(2, "import subprocess"), (6, "return subprocess.run(['id'])")]
    assert plan.after is not None and "import subprocess" in plan.after and "getenv" not in plan.after


def test_an_apply_patch_update_add_and_delete(tmp_path):
    root = make(tmp_path)
    patch = ("*** Begin Patch\n*** Update File: src/login.py\n@@ def login():\n-    return os.getenv('USER')\n"
             "+    os.system('kubectl login')\n+    return os.getenv('USER')\n"
             "*** Add File: src/new.py\n+A = 1\n+B = 2\n*** Delete File: src/old.py\n*** End Patch\n")
    got = proposals({"command": patch}, rel, root)
    assert sorted(got) == ["src/login.py", "src/new.py"]
    assert got["src/login.py"].added == [(5, "    os.system('kubectl login')")]
    assert got["src/login.py"].after == OLD.replace("    return", "    os.system('kubectl login')\n    return")
    assert got["src/new.py"].added == [(1, "A = 1"), (2, "B = 2")] and got["src/new.py"].after == "A = 1\nB = 2\n"


def test_a_hunk_that_does_not_apply_keeps_its_added_lines_and_drops_the_after(tmp_path):
    root = make(tmp_path)
    patch = "*** Begin Patch\n*** Update File: src/login.py\n@@\n-not there\n+kubectl\n*** End Patch\n"
    plan = proposals({"command": patch}, rel, root)["src/login.py"]
    assert plan.added == [(0, "kubectl")] and plan.after is None


def test_junk_proposes_nothing(tmp_path):
    root = make(tmp_path)
    assert proposals({}, rel, root) == {}
    assert proposals({"file_path": 3, "edits": "x"}, rel, root) == {}
    assert proposals({"file_path": "/repo/src/login.py", "edits": [1, {"new_string": 2}]}, rel, root)[
        "src/login.py"].added == []
