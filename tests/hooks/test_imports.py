"""The hook path stays light: a fresh `stele hook EVENT` process never imports typer, rich,
gitpython or model2vec (DESIGN.md section 9: they cost 50-200 ms each, on every prompt), and with
the index built (so the config cache is warm), not even PyYAML.

The one exception is by design: where the harness runs post-edit in the background (Claude Code,
Codex), post-edit indexes the log line it wrote, which embeds it with model2vec, so that the next
prompt, which someone waits for, does not."""
import json
import subprocess
import sys

import pytest

from tests.helpers import invoke, write_fact

FORBIDDEN = ("typer", "click", "rich", "pydantic", "git", "model2vec", "torch", "yaml")
WRAPPER = """
import json, sys
from stele.cli.entry import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules),
               "vectors": "simsimd" in sys.modules}, f)
"""
CASES = [("session-start", "claude", ()), ("prompt", "claude", ()), ("pre-edit", "claude", ()),
         ("post-edit", "cursor", ()), ("post-edit", "claude", ("model2vec", "torch", "yaml")),
         ("stop", "claude", ()), ("guard-readonly", "claude", ())]


@pytest.mark.parametrize("event,harness,allowed", CASES)
def test_hook_process_imports_nothing_heavy(repo, tmp_path, event, harness, allowed):
    write_fact(repo, "DEC-0001", "decision", "Rate limiting sits in front of auth", anchors=["src/auth.py"])
    assert invoke("rebuild").code == 0
    payload = {"transcript_path": "/t", "cwd": str(repo), "hook_event_name": "X",
               "prompt": "why does rate limiting sit in front of the auth middleware?",
               "tool_name": "Edit",
               "tool_input": {"file_path": str(repo / "src/auth.py"), "command": "stele list"}}
    report = tmp_path / "modules.json"
    forbidden = set(FORBIDDEN) - set(allowed)
    for run in (1, 2):  # the first run may still write the config cache
        payload["session_id"] = f"imp{run}"
        argv = [sys.executable, "-c", WRAPPER, str(report), "hook", event, "--harness", harness]
        done = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, cwd=repo,
                              timeout=60)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        data = json.loads(report.read_text())
        loaded = {m.split(".")[0] for m in data["modules"]}
        assert data["code"] == 0
        if run == 2:
            assert not loaded & forbidden, sorted(loaded & forbidden)


def test_a_prompt_that_needs_the_embeddings_loads_no_numpy(repo, tmp_path):
    """A paraphrase (no word in common with the fact) is found by the vectors: the query is embedded
    and scanned without numpy (tokenizers and simsimd only), and the fact comes back."""
    write_fact(repo, "DEC-0001", "decision", "Rate limiting sits in front of auth", anchors=["src/auth.py"])
    assert invoke("rebuild").code == 0
    payload = {"transcript_path": "/t", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
               "prompt": "where do we throttle callers compared with the login check?"}
    report = tmp_path / "modules.json"
    for run in (1, 2):
        payload["session_id"] = f"emb{run}"
        argv = [sys.executable, "-c", WRAPPER, str(report), "hook", "prompt", "--harness", "claude"]
        done = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, cwd=repo,
                              timeout=60)
        assert done.returncode == 0 and done.stderr == "", done.stderr
    data = json.loads(report.read_text())
    loaded = {m.split(".")[0] for m in data["modules"]}
    assert data["vectors"] and "DEC-0001" in done.stdout  # simsimd loaded: the vectors were searched
    assert not loaded & (set(FORBIDDEN) | {"numpy", "safetensors"}), sorted(loaded & (set(FORBIDDEN) | {"numpy"}))

