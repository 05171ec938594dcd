"""The read-only guard: one read-only stele command through, everything else refused with exit 2."""
import pytest

from stele.hooks.guard import refusal
from tests.helpers import hook

ALLOWED = [
    'stele recall "why is rate limiting before auth"',
    "stele search 'TS2769: No overload; matches' --limit 5",
    "stele show DEC-4F7K",
    'stele brief "checkout flow"',
    "stele list --kind risk --json",
    'stele why "why does gc wait 48 hours"',  # only reads: it explains one recall
    'stele search "a (parenthesised) query"',
    r"stele search rate\;limit",
]
REFUSED = [
    'stele remember "x"',
    "stele edit DEC-4F7K --title y",
    "rm -rf /",
    "stele",
    "",
    "stele show DEC-1; rm -rf /",
    "stele show DEC-1 && stele remember x",
    "stele list | sh",
    "stele search x > /tmp/out",
    'stele search "$(rm -rf /)"',
    "stele search `rm -rf /`",
    "stele search 'unterminated",
    "/tmp/evil/stele search x",
    "FOO=1 stele search x",
    "stele search x\nrm -rf /",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_read_only_commands_pass(command):
    assert refusal(command) is None


@pytest.mark.parametrize("command", REFUSED)
def test_everything_else_is_refused(command):
    assert refusal(command)


def test_through_the_entry_point_exit_codes():
    ok = hook("guard-readonly", {"tool_name": "Bash", "tool_input": {"command": "stele search auth"}})
    assert (ok.code, ok.out, ok.err) == (0, "", "")
    no = hook("guard-readonly", {"tool_name": "Bash", "tool_input": {"command": "stele remember x"}})
    assert no.code == 2 and no.out == "" and no.err.count("\n") == 1 and "refused" in no.err


def test_the_guard_fails_closed():
    for payload in ("{not json", {"tool_name": "Bash"}, {"tool_input": {"command": 42}}):
        r = hook("guard-readonly", payload)
        assert r.code == 2 and r.err.startswith("stele guard-readonly: refused")
    assert hook("guard-readonly", {}, "--harness", "nope").code == 2
