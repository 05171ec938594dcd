"""Every harness that has a session-end event gets `stele hook session-end` (the push of the
session's lines to the team store), in the fail-open wrapper, with a budget the push fits in.

Event names as the harnesses' own sources and references spell them: Claude Code `SessionEnd`
(all SessionEnd hooks share 1.5 s unless a settings-file hook asks for more, up to 60 s), Gemini
CLI `SessionEnd` (`HookEventName` in packages/core/src/hooks/types.ts; no matcher: its trigger is the
exit reason, matched as one exact string), Cursor `sessionEnd`, Copilot CLI `sessionEnd`. Codex's
hook_config.rs has no session-end event, so Codex gets none."""
from __future__ import annotations

import json

import pytest

from stele.config import defaults
from stele.install import claude, codex, copilot, cursor, gemini
from stele.install.jsonhooks import command

DEADLINE_S = int(defaults()["session"]["sync_deadline_ms"]) / 1000


def test_claude_asks_for_more_than_the_default_session_end_budget():
    (group,) = [claude.HOOKS.groups["SessionEnd"]]
    (handler,) = group["hooks"]
    assert handler["command"] == command("session-end", "claude") and "matcher" not in group
    assert DEADLINE_S + 1 <= handler["timeout"] <= 60  # seconds; more than 1.5 s, within Claude's cap


def test_gemini_has_no_matcher_and_a_millisecond_timeout():
    group = gemini.HOOKS.groups["SessionEnd"]
    assert "matcher" not in group
    (handler,) = group["hooks"]
    assert handler["command"] == command("session-end", "gemini") and handler["timeout"] >= (DEADLINE_S + 1) * 1000


@pytest.mark.parametrize("target, event, key", [(cursor, "sessionEnd", "command"), (copilot, "sessionEnd", "bash")])
def test_camel_case_harnesses(target, event, key):
    handler = target.HOOKS.groups[event]
    assert handler[key] == command("session-end", target.__name__.rsplit(".", 1)[1])


def test_the_wrapper_fails_open_and_codex_gets_no_event_it_does_not_have():
    cmd = command("session-end", "claude")
    assert cmd.startswith("command -v stele >/dev/null 2>&1 && ") and cmd.endswith(" || true")
    assert not any("session-end" in json.dumps(g) for g in codex.HOOKS.groups.values())
