"""The agent-facing task text, built from data in memory: exact bytes, so any change is deliberate."""
import datetime as dt

from stele.record.model import Fact
from stele.render.task_text import claim_line, task_text
from stele.session.wal import Entry
from stele.tasks.board import Resume, TaskRow
from stele.tasks.claims import Claim, Identity

NOW = dt.datetime(2026, 11, 29, 19, 0, tzinfo=dt.UTC)
ALICE = Identity("alice", "sess-a", "host-1")


def claim(**kw) -> Claim:
    base = dict(task="TASK-AAAA", state="held", holder=ALICE, since=NOW - dt.timedelta(hours=1),
                until=NOW + dt.timedelta(hours=1), token=3)
    return Claim(**{**base, **kw})


def test_claim_lines():
    assert claim_line(None, NOW) == "not claimed"
    assert claim_line(claim(remote="origin"), NOW) == (
        "held by alice (session sess-a, host host-1) since 2026-11-29T18:00:00Z, lease until "
        "2026-11-29T20:00:00Z (token 3, pushed to origin)")
    assert claim_line(claim(until=NOW), NOW).startswith("expired: held by alice")
    assert claim_line(claim(state="released", released_at=NOW, released_by=ALICE), NOW) == (
        "not claimed (last released by alice at 2026-11-29T19:00:00Z, token 3)")


def test_resume_text_is_plain_and_stable():
    task = Fact("TASK-AAAA", "task", "Rate limit login", body="Limit /login.\n\nPer IP.\n", status="open")
    epic = Fact("EPIC-BBBB", "epic", "Auth hardening", status="open")
    child = Fact("TASK-CCCC", "task", "Set up redis", status="done")
    dec = Fact("DEC-DDDD", "decision", "Rate limiting runs before auth")
    risk = Fact("RISK-EEEE", "risk", "Middleware order is load-bearing")
    lesson = Fact("LSN-FFFF", "lesson", "TS2769 after regenerating types")
    history = [Entry("S-01", "2026-11-29T18:00:00Z", "sess-a", "claim", "claimed TASK-AAAA", task=task.id),
               Entry("S-02", "2026-11-29T18:30:00Z", "sess-a", "note", "redis\n  is up", task=task.id)]
    r = Resume(TaskRow(task, claim(), [], ["EPIC-BBBB"]), [epic], [child],
               [("<- relates-to", dec), ("-> relates-to", risk), ("<- mentions", lesson)], history, 7)
    assert task_text(r, NOW) == """\
TASK-AAAA: Rate limit login
kind: task, status: open, priority: normal
claim: held by alice (session sess-a, host host-1) since 2026-11-29T18:00:00Z, lease until \
2026-11-29T20:00:00Z (token 3)
blocks:
  - EPIC-BBBB Auth hardening [epic, open]
blocked by:
  - TASK-CCCC Set up redis [task, done]

Decisions:
  - DEC-DDDD Rate limiting runs before auth [decision, current] (<- relates-to)

Risks:
  - RISK-EEEE Middleware order is load-bearing [risk, current] (-> relates-to)

Other linked facts:
  - LSN-FFFF TS2769 after regenerating types [lesson, current] (<- mentions)

Session history (last 2 of 7):
  2026-11-29T18:00:00Z sess-a claim: claimed TASK-AAAA
  2026-11-29T18:30:00Z sess-a note: redis is up

Description:
  Limit /login.

  Per IP.
"""
    assert "\x1b" not in task_text(r, NOW)
    assert "Session history" not in task_text(r, NOW, history=False)
