"""The one place the typer app runs: usage errors exit 2 with click's message, and any other typer error
still prints one line and exits with its own code (typer's base class has no `show`)."""
import pytest
import typer

from stele.cli.main import _usage_error, run
from tests.helpers import invoke


def test_a_bad_option_is_a_usage_error(capsys):
    assert run(["list", "--no-such-option"]) == 2
    assert "No such option" in capsys.readouterr().err


def test_a_typer_error_without_click_s_show_still_says_what_went_wrong(capsys):
    assert _usage_error(typer.TyperException("the app is misconfigured")) == 1  # its own exit code
    assert capsys.readouterr().err == "stele: the app is misconfigured\n"


HUGE = "DEC-" + "A" * 100_000 + "\x1b]0;pwned\x07\x1b[2J" + "Z" * 1_000  # near the 128 KiB an argument may be


@pytest.mark.parametrize("command", [
    ["show", HUGE], ["show", "--json", HUGE], ["edit", HUGE, "--title", "New title"], ["verify", HUGE],
    ["retire", HUGE, "--why", "gone"], ["supersede", HUGE, "--by", "DEC-ZZZZ"], ["link", HUGE, "relates-to", "DEC-ZZZZ"],
    ["task", "show", HUGE], ["task", "claim", HUGE], ["task", "release", HUGE], ["session", "show", "S-" + HUGE],
    ["snapshot", "show", HUGE], ["list", "--kind", HUGE], ["--no-such-option" + HUGE],
], ids=lambda command: " ".join(word[:10] for word in command))
def test_an_argument_echoed_in_an_error_is_bounded_and_neutralized(repo, command):
    """`stele show ID` with a 100 KB id printed all of it back, one line per error, on every command
    that names an id; each message line now shows both ends of what it quoted (where the id starts,
    what to do) and the length, never an escape sequence."""
    r = invoke(*command)
    assert r.code in (1, 2), r.err[:500]
    assert "\x1b" not in r.err and "\x07" not in r.err
    assert max(len(line) for line in r.err.splitlines()) <= 1_000, r.err[:500]  # a few terminal lines
    assert "characters in all" in r.err, r.err[:500]


def test_an_id_that_is_no_id_shape_is_an_unknown_id_not_a_crash(repo):
    """`stele task claim /etc/passwd` globbed the memory folder for the id as a pattern: a path made
    pathlib raise (exit 3), a 100 KB id was a file name too long, `*` a wildcard."""
    for name in ("/etc/passwd", "../../x", "TASK-*", "TASK-[A]", "DEC-" + "A" * 300,
                 "TASK-" + "A" * 300):  # was tried as a claim ref git refused: "heavy contention"
        r = invoke("task", "claim", name)
        assert r.code == 1 and "no fact with id" in r.err and "too long" not in r.err, r.err[:300]
