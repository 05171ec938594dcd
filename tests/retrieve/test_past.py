"""`retrieve.past.cue`: the small fixed rule set that reads a question about the past from a prompt."""
from __future__ import annotations

import datetime as dt

import pytest

from stele.retrieve.past import When, cue

TODAY = dt.date(2026, 11, 29)


def end(y: int, m: int, d: int) -> dt.datetime:
    return dt.datetime(y, m, d, 23, 59, 59, tzinfo=dt.UTC)


@pytest.mark.parametrize("prompt,moment", [
    ("what queue did we use in March?", end(2026, 3, 31)),
    ("which database was the source of truth in March 2025", end(2025, 3, 31)),
    ("what did we deploy to in december", end(2025, 12, 31)),  # the latest December that has begun
    ("what was the cache layer last year?", end(2025, 12, 31)),
    ("what was the retry policy last month", end(2026, 10, 31)),
    ("what was the rate limit in 2025", end(2025, 12, 31)),
    ("what did we use before April?", end(2026, 3, 31)),
    ("what was the config as of 2026-03-04", end(2026, 3, 4)),
    ("what were the deploy steps 3 months ago", end(2026, 8, 29)),
    ("what did the team decide two weeks ago about logging", end(2026, 11, 15)),
])
def test_a_named_past_time_is_a_moment(prompt, moment):
    found = cue(prompt, TODAY)
    assert found is not None and found.moment == moment and not found.before


@pytest.mark.parametrize("prompt,phrase", [
    ("what did we use before the replacement of the queue?", "before the replacement"),
    ("how did auth work before we switched to OIDC", "before we switched"),
    ("what database did we use before?", "what database did we use before?"),
    ("we used to shard by tenant, why?", "we used to"),
    ("which broker did the workers previously talk to", "previously"),
])
def test_before_without_a_date_lets_history_in(prompt, phrase):
    found = cue(prompt, TODAY)
    assert found is not None and found.moment is None and found.before and found.phrase == phrase


@pytest.mark.parametrize("prompt", [
    "why do retries back off with jitter between charge attempts?",
    "run the migrations before deploying the api",          # before, but not about the past
    "what ships in March?",                                  # a plan: no past tense
    "what will the rate limit be in 2027",                   # the future
    "what did we change in November",                        # November 2026 has not ended: not past
    "the value is used to compute the hash of the tenant",   # passive `used to`
    "we may need to revisit this in may",                    # `may`, lowercase, is a verb
    "add a check before the old handler runs",
    "what was the error in compact.go:548 about overlaps",
    "what was the limit on 2026-02-30",                      # no calendar date: no cue, no error
])
def test_prompts_without_a_past_are_left_alone(prompt):
    assert cue(prompt, TODAY) is None


def test_the_window_line_says_the_time_and_the_commit():
    line = When("in March", "prompt", "2026-03-31T23:59:59Z", "0123456789abcdef").line()
    assert line == ('(answering as of 2026-03-31T23:59:59Z: the record at commit 0123456, session notes up '
                    'to then; asked: "in March")')
    assert "superseded facts are included" in When("before we switched", "prompt", before=True).line()
