"""Rewrite tests/fixtures/harness/<harness>/<event>.json from the payloads the real binaries send.

`python -m tests.e2e.refresh_fixtures` runs the scripted turn in each harness (with the capture shim)
and keeps the first payload of each event exactly as sent, key order included, with only what names
this machine or the demo replaced by the sample record's values (the repository becomes `$REPO`,
gc.py becomes the sample's `src/auth/middleware.py`, the prompt and the edit strings become the
sample's). Copilot's payloads come in two forms: its own camelCase hooks (`copilot/`) and the VS
Code form it sends to `.claude/settings.json` hooks (`copilot-vscode/`). Then regenerate the goldens
(`STELE_UPDATE_GOLDEN=1 pytest tests/hooks/test_fixtures.py`) and review both diffs.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .drivers import payloads, run_turn
from .mockmodel import GC, GC_NEW, GC_OLD, QUEUE, QUEUE_NEW, QUEUE_OLD

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness"
PROMPT = "Why does the rate limiter run before the auth middleware? I want to move it behind auth."
OLD, NEW = "app.use(rateLimiter)\napp.use(auth)", "app.use(auth)\napp.use(rateLimiter)"
EVENTS = ("session-start", "prompt", "pre-edit", "post-edit", "stop")


def _swap(value, root: str, home: str):
    if isinstance(value, str):
        for a, b in ((GC_OLD, OLD), (GC_NEW, NEW), (QUEUE_OLD, OLD), (QUEUE_NEW, NEW)):
            value = value.replace(a, b)
        value = value.replace(GC, "src/auth/middleware.py").replace(QUEUE, "src/auth/middleware.py")
        from .drivers import PROMPT as DEMO_PROMPT

        value = value.replace(DEMO_PROMPT, PROMPT)
        return value.replace(home, "/home/dev").replace(root, "$REPO")
    if isinstance(value, dict):
        return {k: _swap(v, root, home) for k, v in value.items()}
    if isinstance(value, list):
        return [_swap(v, root, home) for v in value]
    return value


def refresh(name: str, work: Path) -> dict[str, dict[str, dict]]:
    """folder -> event -> payload, from one turn of `name`."""
    repo = work / "repo"
    stele = Path(sys.executable).parent / "stele"
    subprocess.run([str(stele), "demo", "--keep", str(repo)], check=True, capture_output=True, timeout=120)
    run_turn(name, repo, work)
    found: dict[str, dict[str, dict]] = {}
    for args, data in payloads(work):
        words = args.split()
        event, flag = words[1], words[-1]
        folder = name if flag == name else f"{name}-vscode" if name == "copilot" else None
        if folder is None or event not in EVENTS:
            continue
        found.setdefault(folder, {}).setdefault(event, _swap(data, str(repo), str(work / f"home-{name}")))
    return found


def main(argv: list[str]) -> int:
    for name in argv or ["claude", "codex", "gemini", "copilot"]:
        work = Path(tempfile.mkdtemp(prefix=f"stele-fixtures-{name}-"))
        try:
            for folder, events in refresh(name, work).items():
                (FIXTURES / folder).mkdir(exist_ok=True)
                for event, data in events.items():
                    (FIXTURES / folder / f"{event}.json").write_text(json.dumps(data, indent=2) + "\n")
                print(f"{folder}: {', '.join(sorted(events))}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
