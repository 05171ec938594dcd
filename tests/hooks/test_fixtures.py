"""Recorded payloads (tests/fixtures/harness/<harness>/<event>.json, captured from the real binaries
by `python -m tests.e2e.refresh_fixtures`; `copilot-vscode/` is the form Copilot CLI sends to
`.claude/settings.json` hooks) replayed as one session per harness, each answer compared byte for byte
with its golden `<event>.out`. The sessions count as attended (a person watching), as an interactive
harness would be, so the stop nudge shows.

Goldens change only on purpose: `STELE_UPDATE_GOLDEN=1 pytest tests/hooks/test_fixtures.py` rewrites
them, and the diff is reviewed like code. A missing golden fails instead of being written silently.
"""
import json
import os
from pathlib import Path

import pytest

from stele.hooks import harness
from tests.helpers import hook

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness"
SESSION = ("session-start", "prompt", "pre-edit", "post-edit", "stop")
UPDATE = os.environ.get("STELE_UPDATE_GOLDEN") == "1"
CAP = 9000


def check_shape(name: str, event: str, payload: dict, out: str) -> None:
    """The exact shape each harness accepts (and nothing that could block or allow)."""
    if name == "gemini":
        assert out.endswith("\n") and out.count("\n") == 1
    if not out or out == "{}\n":
        assert name == "gemini" or out == ""
        return
    assert out.endswith("\n") and out.count("\n") == 1, "one line of JSON"
    data = json.loads(out)
    assert "permissionDecision" not in out and "continue" not in data
    if event == "stop" and name in ("codex", "gemini", "copilot"):  # continue the turn once, with the nudge
        assert list(data) == ["decision", "reason"] and data["decision"] == "block"
        assert 0 < len(data["reason"]) <= CAP
    elif name == "cline":  # only the tool hooks speak; a cancel would stop the whole task
        assert event == "pre-edit" and list(data) == ["cancel", "contextModification"] and data["cancel"] is False
        assert 0 < len(data["contextModification"]) <= CAP
    elif name == "cursor":
        key = "additional_context" if event == "session-start" else "followup_message"
        assert list(data) == [key] and 0 < len(data[key]) <= CAP
    elif name == "copilot":
        key = "modifiedTransformedPrompt" if event == "prompt" else "additionalContext"
        assert list(data) == [key] and 0 < len(data[key]) <= CAP + len(payload.get("transformedPrompt", ""))
    else:
        assert "decision" not in data
        inner = data["hookSpecificOutput"]
        assert list(data) == ["hookSpecificOutput"] and list(inner) == ["hookEventName", "additionalContext"]
        assert inner["hookEventName"] == payload["hook_event_name"]
        assert 0 < len(inner["additionalContext"]) <= CAP


def golden(path: Path, out: str) -> None:
    if UPDATE:
        path.write_text(out, encoding="utf-8")
        return
    assert path.exists(), (f"no golden {path.name}: run STELE_UPDATE_GOLDEN=1 pytest {__file__} "
                           "and review the diff")
    assert out == path.read_text(encoding="utf-8"), f"{path} differs (STELE_UPDATE_GOLDEN=1 to accept)"


@pytest.mark.parametrize("name", [*harness.HARNESSES, "copilot-vscode"])
def test_recorded_session(record, name, monkeypatch, resident):
    monkeypatch.setenv(harness.ATTENDED_ENV, "1")
    folder = FIXTURES / name
    flag = "claude" if name == "copilot-vscode" else name  # Copilot runs Claude Code's hooks as written
    detected = "copilot" if name == "copilot-vscode" else name
    events = [e for e in SESSION if (folder / f"{e}.json").exists()]
    assert events == list(SESSION), f"{folder} must hold a payload for every event"
    for event in events + (["guard-readonly"] if (folder / "guard-readonly.json").exists() else []):
        text = (folder / f"{event}.json").read_text(encoding="utf-8").replace("$REPO", str(record))
        payload = json.loads(text)
        if (name, event) != ("codex", "session-start"):  # Codex's SessionStart has no turn_id to tell it by
            assert harness.detect(payload) == detected, event
        r = hook(event, text, "--harness", flag)
        assert (r.code, r.err) == (0, ""), f"{name} {event}: {r.err}"
        check_shape(detected if name != "copilot-vscode" else "claude", event, payload, r.out)
        assert str(record) not in r.out
        golden(folder / f"{event}.out", r.out)
