"""The hook path stays light: a fresh `stele hook EVENT` process never imports typer, rich,
gitpython or model2vec (DESIGN.md section 9: they cost 50-200 ms each, on every prompt)."""
import json
import subprocess
import sys

import pytest

FORBIDDEN = ("typer", "click", "rich", "pydantic", "git", "model2vec", "torch")
WRAPPER = """
import json, sys
from stele.entry import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""


@pytest.mark.parametrize("event", ["session-start", "prompt", "pre-edit", "post-edit", "stop", "guard-readonly"])
def test_hook_process_imports_nothing_heavy(repo, tmp_path, event):
    from tests.helpers import write_fact

    write_fact(repo, "DEC-0001", "decision", "Rate limiting sits in front of auth", anchors=["src/auth.py"])
    payload = {"session_id": "imp", "transcript_path": "/t", "cwd": str(repo), "hook_event_name": "X",
               "prompt": "why does rate limiting sit in front of the auth middleware?",
               "tool_name": "Edit", "tool_input": {"file_path": str(repo / "src/auth.py"), "command": "stele list"}}
    report = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", WRAPPER, str(report), "hook", event], input=json.dumps(payload),
                          capture_output=True, text=True, cwd=repo, timeout=60)
    assert done.returncode == 0, done.stderr
    data = json.loads(report.read_text())
    loaded = {m.split(".")[0] for m in data["modules"]}
    assert data["code"] == 0 and not loaded & set(FORBIDDEN), sorted(loaded & set(FORBIDDEN))
