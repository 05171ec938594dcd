"""The frame every hook runs in: a config from a pull request cannot hold a hook past its budget."""
import json
import subprocess
import sys
import time

from tests.helpers import invoke

TYPED = "[\\u0100-\\uffff]"  # as YAML holds it: the regular expression reads the escapes


def test_a_redaction_pattern_slow_to_compile_is_refused_within_the_budget(repo):
    """A pattern of 1,500 wide case-insensitive classes is a valid regular expression that took ~13 s
    to compile, and the first load of a config validates it before the hook's timer is set. Refused
    from its parse tree instead, in a fraction of that: the hook fails open (exit 0, its empty answer)
    with one line naming the file and the pattern's index."""
    cfg = repo / ".stele/config.yaml"
    text = cfg.read_text()
    assert "  patterns: []" in text
    cfg.write_text(text.replace("  patterns: []", f"  patterns: ['(?i){TYPED * 1500}']")
                   .replace("hook_budget_ms: 8000", "hook_budget_ms: 1000"))
    assert invoke("list").code == 1  # refused by every command, not only hooks
    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
               "prompt": "how does the deploy user sign its requests to the bucket?"}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "stele", "hook", "prompt", "--harness", "claude"], cwd=repo,
                          input=json.dumps(payload), capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - start
    assert done.returncode == 0 and done.stdout.strip() in ("", "{}"), done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and ".stele/config.yaml: `redaction.patterns[0]`" in lines[0], done.stderr
    assert elapsed < 5, elapsed  # ~0.3 s; compiling it cost ~13 s
