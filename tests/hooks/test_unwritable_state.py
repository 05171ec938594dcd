"""A hook whose bookkeeping cannot be written still answers, in every harness format.

With `.stele/state` unwritable the edit hook answered nothing in all four harnesses
(`NotADirectoryError ... .stele/state/hooks/sessions`): recording the first-edit nudge was not guarded.
A regular file stands where the folder should be, as the e2e suite does (it runs as root, where
permission bits do not stop a write). The anchored facts still come, at most one stderr line says what
was not recorded, the nudge and a hold (which could not be remembered, so would come at every edit)
are left out, and the edit is still logged."""
import json
from pathlib import Path

import pytest

from stele.hooks import harness
from stele.project import Project
from stele.session import wal
from tests.helpers import hook

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness"
FORMATS = [*harness.HARNESSES, "copilot-vscode"]


def unwritable(record: Path) -> None:
    import shutil

    shutil.rmtree(record / ".stele/state", ignore_errors=True)
    (record / ".stele/state").write_text("not a folder\n")


def payload(record: Path, name: str, event: str) -> str:
    return (FIXTURES / name / f"{event}.json").read_text(encoding="utf-8").replace("$REPO", str(record))


def test_every_format_is_covered():
    assert set(FORMATS) == {"claude", "codex", "gemini", "cursor", "copilot", "copilot-vscode", "cline"}


@pytest.mark.parametrize("hold", [False, True])
@pytest.mark.parametrize("name", FORMATS)
def test_the_edit_hooks_answer_with_state_unwritable(record, name, hold, monkeypatch):
    monkeypatch.setenv(harness.ATTENDED_ENV, "1")
    if hold:
        config = record / ".stele/config.yaml"
        config.write_text(config.read_text().replace("hold_edits: false", "hold_edits: true"))
    unwritable(record)
    flag = "claude" if name == "copilot-vscode" else name
    form = "copilot" if name == "copilot-vscode" else name
    said = ""
    for event in ("pre-edit", "post-edit"):
        r = hook(event, payload(record, name, event), "--harness", flag)
        assert r.code == 0 and r.err.count("\n") <= 1, r.err
        if r.out.strip() not in ("", "{}"):
            assert not said, "the facts come once, before or after the edit"
            said = r.out
            data = json.loads(r.out)
            assert "permissionDecision" not in r.out and data.get("decision") != "block", "nothing is held"
    speaks = name not in ("cursor",)  # Cursor's edit hook cannot add context
    if speaks:
        assert "RISK-0007" in said and "DEC-0008" in said, said
        assert "First edit of this session" not in said  # it could not be remembered: not at every edit
    else:
        assert said == ""
    data = json.loads(payload(record, name, "post-edit"))
    session = data.get("session_id") or data.get("sessionId") or data.get("conversation_id") or data.get("taskId")
    entries = list(wal.read_file(wal.wal_path(Project(record), session)))
    assert any(e.text == "edited src/auth/middleware.py" for e in entries), [e.text for e in entries]
    assert form in harness.HARNESSES


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "copilot"])
def test_session_start_and_prompt_answer_with_state_unwritable(record, name):
    unwritable(record)
    for event in ("session-start", "prompt"):
        r = hook(event, payload(record, name, event), "--harness", name)
        assert r.code == 0 and r.err.count("\n") <= 1, r.err
        assert r.out.strip() not in ("", "{}"), f"{name} {event} said nothing"
