"""A warning the agent never received as a warning is not "already shown" (issue 26, py-platform
`sess-stuck`): the session state keeps what was delivered as a risk callout apart from what was
delivered as an entry, through real `stele hook` calls in a real repository."""
import json

from stele.hooks import state
from stele.ids import mentioned_ids
from stele.project import Project
from tests.helpers import hook, write_fact

CALLOUT = "! RISK on your path: RISK-0007"
# matches LSN-0040, which reaches RISK-0007 by relates-to only: an ordinary entry, not a warning
NEIGHBOUR = "What did the login endpoint load test with bcrypt cost twelve show about throughput?"
# matches DEC-0008, which reaches RISK-0007 by caused-by: the risk is on the path, a callout
ON_PATH = "How is the rate limiter bucket refilled, and why does it run before auth?"


def prompt(repo, text: str, session: str = "warn") -> str:
    r = hook("prompt", {"session_id": session, "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
                        "prompt": text}, "--harness", "claude")
    assert r.code == 0, r.err
    return json.loads(r.out)["hookSpecificOutput"]["additionalContext"] if r.out else ""


def edit(repo, path: str, session: str = "warn") -> str:
    r = hook("pre-edit", {"session_id": session, "cwd": str(repo), "hook_event_name": "PreToolUse",
                          "tool_name": "Edit", "tool_input": {"file_path": str(repo / path)}}, "--harness", "claude")
    assert r.code == 0, r.err
    return json.loads(r.out)["hookSpecificOutput"]["additionalContext"] if r.out else ""


def with_neighbour(record):
    write_fact(record, "LSN-0040", "lesson", "Login endpoint load test with bcrypt cost twelve",
               "The login endpoint load test at bcrypt cost twelve topped out at 40 requests a second "
               "per core: throughput is bound by bcrypt.", links={"relates-to": ["RISK-0007"]})
    return record


def test_a_risk_listed_earlier_is_called_out_once_when_a_prompt_puts_it_on_the_path(record):
    repo = with_neighbour(record)
    first = prompt(repo, NEIGHBOUR)
    assert "RISK-0007" in mentioned_ids(first) and CALLOUT not in first  # listed, not a warning
    second = prompt(repo, ON_PATH)
    assert CALLOUT in second  # the warning it never received as one
    assert second.count("RISK-0007") == 1  # the callout line only: its entry is not repeated
    assert not set(mentioned_ids(second)) & (set(mentioned_ids(first)) - {"RISK-0007"})
    st = state.load(Project(repo), "warn")
    assert "RISK-0007" in st.injected and st.warned == ["RISK-0007"]
    assert "RISK-0007" not in mentioned_ids(prompt(repo, ON_PATH))  # a callout delivered is not repeated


def test_a_callout_first_is_neither_repeated_nor_listed_later(record):
    repo = with_neighbour(record)
    assert CALLOUT in prompt(repo, ON_PATH)
    assert "RISK-0007" not in mentioned_ids(prompt(repo, NEIGHBOUR))
    assert "RISK-0007" not in mentioned_ids(prompt(repo, ON_PATH))


def test_a_risk_shown_by_the_edit_hook_is_still_called_out_by_a_prompt(record):
    """The pre-edit hook lists the facts anchored to the file, risks first: as entries, not as a
    callout. A later prompt that puts the risk on the path warns of it once."""
    assert "RISK-0007" in edit(record, "src/auth/session.py")
    assert CALLOUT in prompt(record, ON_PATH)
    assert "RISK-0007" not in mentioned_ids(prompt(record, ON_PATH))


def test_a_state_file_from_before_the_split_means_delivered_both_ways(record):
    """A version-1 file does not say in which form its ids went out: each counts as both, so nothing
    it delivered comes again (the callout it may have been is not risked twice)."""
    repo = with_neighbour(record)
    path = state.session_path(Project(repo), "old")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"v": 1, "started": 1.0, "injected": ["RISK-0007"], "edited": []}))
    assert state.load(Project(repo), "old").warned == ["RISK-0007"]
    assert "RISK-0007" not in mentioned_ids(prompt(repo, ON_PATH, session="old"))
    data = json.loads(path.read_text())
    assert data["v"] == state.VERSION == 2 and data["warned"] == ["RISK-0007"]


def test_clear_forgets_the_warnings_too(record):
    assert CALLOUT in prompt(record, ON_PATH)
    r = hook("session-start", {"session_id": "warn", "cwd": str(record), "hook_event_name": "SessionStart",
                               "source": "clear"}, "--harness", "claude")
    assert r.code == 0, r.err
    assert CALLOUT in prompt(record, ON_PATH)
