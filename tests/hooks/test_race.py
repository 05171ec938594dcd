"""The once-per-session guarantee when a harness runs two hooks at the same moment.

Copilot CLI runs the prompt hook while the session-start hook is still running: both read the
session's state before either wrote it, and the standing rule went to the model twice (CON-6E8B in
both of the first two requests, 3 of 3 runs). Each hook now claims the ids it is about to show under
the state's lock before rendering them (`Context.claim`). Then, when the prompt hook claimed first,
it took the rule as one of its recall hits, cut to a summary among search results, and the session
start left it out: no standing rules before the first tool call (tests/e2e/test_turn.py, 2 of 10
Copilot runs). Whichever hook claims first now shows the rule as a standing rule, whole. The tests
force the worst interleaving deterministically: hook A has chosen its facts and is about to claim
them when hook B runs whole.
"""
import json
from pathlib import Path

import pytest

from stele.hooks import harness, state
from tests.helpers import hook

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness"
RULE = "CON-0002"  # the sample record's standing rule (delivery: always)
BODY_END = "and newer."  # the end of its body
PROMPT = "Which Python version is the floor we support? Can I use the 3.10 syntax in this change?"
# the harnesses whose session-start and prompt hooks both reach the model
BOTH = [h for h in harness.HARNESSES if harness.can_inject(h, "session-start") and harness.can_inject(h, "prompt")]


def payload(record: Path, name: str, event: str) -> str:
    data = json.loads((FIXTURES / name / f"{event}.json").read_text(encoding="utf-8").replace("$REPO", str(record)))
    if event == "prompt":
        data["prompt"] = PROMPT
        if "transformedPrompt" in data:
            data["transformedPrompt"] = PROMPT
    return json.dumps(data)


def shown(out: str) -> str:
    return out.replace(PROMPT, "")  # Copilot's answer to the prompt hook repeats the prompt


HEADING = "Standing instructions and constraints:"


def as_rule(out: str) -> bool:
    """Is RULE in `out` as a standing rule: under the heading, with its whole body, not as a recall hit?"""
    text = shown(out).replace("\\n", "\n")  # the JSON answers escape their newlines
    if HEADING not in text:
        return False
    rules = text.split(HEADING, 1)[1].split("\n\n", 1)[0]
    return RULE in rules and BODY_END in rules


def run_racing(record, name, first, second, monkeypatch) -> tuple[str, str]:
    """Run hook `first`; at the moment it claims what it will show, run hook `second` whole."""
    real = state.claim
    outs: dict[str, str] = {}

    def claim_after_the_other(*args, **kwargs):
        if second not in outs:
            outs[second] = ""  # the other hook's own claim goes straight through
            r = hook(second, payload(record, name, second), "--harness", name)
            assert (r.code, r.err) == (0, ""), r.err
            outs[second] = r.out
        return real(*args, **kwargs)

    monkeypatch.setattr(state, "claim", claim_after_the_other)
    r = hook(first, payload(record, name, first), "--harness", name)
    assert (r.code, r.err) == (0, ""), r.err
    assert second in outs, f"{first} never claimed anything"
    return r.out, outs[second]


def test_every_racing_harness_is_covered():
    assert set(BOTH) == {"claude", "codex", "gemini", "copilot"}


@pytest.mark.parametrize("name", BOTH)
def test_the_prompt_alone_would_show_the_standing_rule(record, name):
    """The race matters: without a session start before it, the prompt's recall brings the rule."""
    r = hook("prompt", payload(record, name, "prompt"), "--harness", name)
    assert RULE in shown(r.out)


@pytest.mark.parametrize("order", [("session-start", "prompt"), ("prompt", "session-start")])
@pytest.mark.parametrize("name", BOTH)
def test_session_start_and_prompt_at_once_show_a_rule_once(record, name, order, monkeypatch):
    first, second = run_racing(record, name, *order, monkeypatch)
    assert shown(first).count(RULE) + shown(second).count(RULE) == 1, (first, second)
    # whichever hook won it shows it as the standing rule it is (both answers reach the first request)
    assert as_rule(first) or as_rule(second), (first, second)
    injected = state.load(_project(record), _session(record, name)).injected
    assert injected.count(RULE) == 1


def _project(record):
    from stele.project import Project

    return Project(record)


def _session(record, name) -> str:
    data = json.loads(payload(record, name, "session-start"))
    return data.get("session_id") or data["sessionId"]


def test_ids_claimed_but_cut_are_given_back(record, monkeypatch):
    """A claimed fact the answer's cap cut was not shown: a later hook may show it."""
    from stele.hooks import run

    monkeypatch.setattr(run, "CUT_MARK", "")
    config = record / ".stele/config.yaml"
    config.write_text(config.read_text().replace("max_chars: 9000", "max_chars: 120"))
    r = hook("session-start", payload(record, "claude", "session-start"), "--harness", "claude")
    assert r.code == 0 and RULE not in r.out
    assert RULE not in state.load(_project(record), _session(record, "claude")).injected


@pytest.mark.parametrize("name", BOTH)
def test_a_prompt_hook_that_finished_first_keeps_the_rule_from_the_session_start(record, name):
    """Copilot may finish the prompt hook before the session-start hook reads the state at all: the new
    session was shown nothing else, so the rule it holds came from the prompt."""
    prompt = hook("prompt", payload(record, name, "prompt"), "--harness", name)
    start = hook("session-start", payload(record, name, "session-start"), "--harness", name)
    assert shown(prompt.out).count(RULE) + shown(start.out).count(RULE) == 1, (prompt.out, start.out)
    assert as_rule(prompt.out), prompt.out


@pytest.mark.parametrize("name", BOTH)
def test_after_the_session_start_the_prompt_leaves_the_rules_alone(record, name):
    """Where the session start ran first (every harness but Copilot), the prompt reads no rules and its
    recall does not bring the rule again."""
    start = hook("session-start", payload(record, name, "session-start"), "--harness", name)
    prompt = hook("prompt", payload(record, name, "prompt"), "--harness", name)
    assert as_rule(start.out) and RULE not in shown(prompt.out) and HEADING not in prompt.out, prompt.out
    again = hook("prompt", payload(record, name, "prompt"), "--harness", name)
    assert HEADING not in again.out


def test_a_resumed_session_shows_its_rules_again(record):
    """On resume the transcript replays what was shown, and the session start repeats the rules as before."""
    start = json.loads(payload(record, "claude", "session-start"))
    hook("session-start", start, "--harness", "claude")
    again = hook("session-start", {**start, "source": "resume"}, "--harness", "claude")
    assert RULE in again.out
