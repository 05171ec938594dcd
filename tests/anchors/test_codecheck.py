"""`check:` parsing and matching (anchors/codecheck.py): the syntax, its problems, the limits that keep
an untrusted pattern from costing more than a moment."""
from __future__ import annotations

import signal

import pytest

from stele.anchors import codecheck
from stele.anchors.codecheck import Check, CheckError


def test_a_mapping_with_both_modes_gives_two_checks_sharing_enforce_and_message():
    checks, problems = codecheck.parse({"forbid": "kubectl", "require": "^import", "enforce": "deny",
                                        "message": "Dex is for web UIs only."})
    assert problems == []
    assert checks == [Check("forbid", "kubectl", "deny", "Dex is for web UIs only."),
                      Check("require", "^import", "deny", "Dex is for web UIs only.")]


def test_a_list_of_mappings_and_lists_of_patterns():
    checks, problems = codecheck.parse([{"forbid": ["a", "b"]}, {"require": "c", "enforce": "warn"}])
    assert problems == []
    assert [(c.mode, c.pattern, c.enforce) for c in checks] == [
        ("forbid", "a", "warn"), ("forbid", "b", "warn"), ("require", "c", "warn")]


@pytest.mark.parametrize("value,says", [
    ({"forbid": "x("}, "`forbid` 'x(' is not a valid regular expression"),
    ({"forbid": 3}, "`forbid` 3 is not a regular expression"),
    ({"forbid": "x", "enforce": "block"}, "`enforce` 'block' is not one of warn, deny"),
    ({"forbid": "x", "when": "always"}, "unknown key(s) when"),
    ({"enforce": "deny"}, "has none of `forbid`, `require`, `ast`, `command`"),
    ({"ast": "", "language": "python"}, "`ast` '' is not an ast-grep pattern"),
    ({"ast": "eval($X)", "language": "cobol"}, "`language` 'cobol' is not one ast-grep knows"),
    ({"forbid": "x", "language": "python"}, "`language` goes with `ast`"),
    ({"command": "make 'lint"}, "cannot be split into words"),
    ({"command": "make lint", "timeout": 0}, "`timeout` 0 must be a number of seconds"),
    ({"command": "make lint", "timeout": 301}, "at most 300"),
    ({"forbid": "x", "timeout": 5}, "`timeout` goes with `command`"),
    ("kubectl", "must be a mapping"),
    ({"forbid": "a" * 501}, "is 501 characters long"),
    ({"forbid": "(?<=a+)b"}, "look-behind requires fixed-width pattern"),  # an error of the compiler, not the parser
])
def test_each_problem_is_one_line_and_the_valid_rest_still_counts(value, says):
    checks, problems = codecheck.parse([{"forbid": "ok"}, value])
    assert len(problems) == 1 and says in problems[0] and problems[0].startswith("item 2 ")
    assert checks[0] == Check("forbid", "ok")


def test_forbid_reports_each_added_line_that_matches_with_its_number():
    check = Check("forbid", r"kubectl .*dex", message="Dex is for web UIs only.")
    found = codecheck.forbidden(check, "ops/login.sh", [(3, "echo hi"), (4, "kubectl login --via dex  ")])
    assert [(v.line, v.text) for v in found] == [(4, "kubectl login --via dex")]
    assert found[0].describe() == ("ops/login.sh:4: adds `kubectl login --via dex`, which matches "
                                   "/kubectl .*dex/ (forbidden): Dex is for web UIs only.")


def test_require_looks_at_the_whole_file_across_lines():
    check = Check("require", r"^from __future__ import annotations$")
    assert codecheck.required(check, "a.py", '"""doc"""\nfrom __future__ import annotations\n') is None
    missing = codecheck.required(check, "a.py", "import os\n")
    assert missing is not None and missing.line == 1 and "no longer matches" in missing.describe()


def test_dump_and_load_round_trip_and_junk_loads_as_nothing():
    checks = [Check("forbid", "a\\d", "deny", "why"), Check("require", "b")]
    assert codecheck.load(codecheck.dump(checks)) == checks
    assert codecheck.dump([]) is None and codecheck.load("not json") == [] and codecheck.load(None) == []


def test_a_long_line_is_matched_on_its_first_characters_only():
    check = Check("forbid", "needle")
    far = "x" * codecheck.MAX_LINE + "needle"
    assert codecheck.forbidden(check, "a", [(1, far)]) == []
    assert len(codecheck.forbidden(check, "a", [(1, "needle" + far)])) == 1


def test_a_catastrophic_pattern_runs_out_of_time_as_the_fact_s_problem():
    check = Check("forbid", r"(a+)+$")
    violations, failed = codecheck.evaluate([check, Check("forbid", "b$")], "a.txt",
                                            [(1, "a" * 40 + "b")], None)
    assert [v.check.pattern for v in violations] == ["b$"]  # the other check still ran
    assert len(failed) == 1 and "took longer than" in failed[0] and "(a+)+$" in failed[0]


def test_the_time_limit_keeps_an_outer_budget_running():
    """Inside the hook's interval timer, a check's own limit sets the outer one back afterwards."""
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        with codecheck.time_limit(1):
            pass
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 25 < left <= 30
        assert signal.getsignal(signal.SIGALRM) is not codecheck._expire
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_an_outer_budget_smaller_than_the_limit_is_the_outer_one_s_timeout():
    class Outer(Exception):
        pass

    def outer(*_):
        raise Outer

    old = signal.signal(signal.SIGALRM, outer)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    try:
        with pytest.raises(Outer):
            codecheck.forbidden(Check("forbid", r"(a+)+$"), "a", [(1, "a" * 40 + "b")])
        assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # not re-armed: it has fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_numbered_takes_ranges():
    assert codecheck.numbered("a\nb\nc", [(2, 3), (9, 9)]) == [(2, "b"), (3, "c")]
    assert codecheck.numbered("a\nb") == [(1, "a"), (2, "b")]


def test_check_error_is_raised_for_a_bad_pattern():
    with pytest.raises(CheckError):
        codecheck.compiled("[")


def test_ast_and_command_parse_with_their_own_keys_and_round_trip_through_the_index():
    checks, problems = codecheck.parse([{"ast": ["requests.get($$$)", "eval($X)"], "language": "python",
                                         "enforce": "deny"},
                                        {"command": ["make", "lint auth"], "timeout": 5}])
    assert problems == []
    assert checks == [Check("ast", "requests.get($$$)", "deny", language="python"),
                      Check("ast", "eval($X)", "deny", language="python"),
                      Check("command", "make 'lint auth'", timeout=5.0)]
    assert codecheck.load(codecheck.dump(checks)) == checks
    assert checks[2].as_dict() == {"command": "make 'lint auth'", "enforce": "warn", "timeout": 5}
    # a row the index wrote before the structural and command checks existed still loads
    assert codecheck.load('[["forbid","a","warn",""]]') == [Check("forbid", "a")]


def test_the_regex_interface_is_unchanged_by_the_new_modes():
    assert codecheck.parse({"forbid": "a", "require": "b"})[0] == [Check("forbid", "a"), Check("require", "b")]
    assert Check("forbid", "a").as_dict() == {"forbid": "a", "enforce": "warn"}
    assert Check("forbid", "a").describe() == "forbids /a/"


SLOW = r"(.*)*X"  # backtracks on any ordinary line: each copy runs into its time limit
LINE = [(1, "an ordinary line of code with some words in it, long enough to backtrack")]


def test_a_fact_listing_many_slow_patterns_costs_what_one_does():
    """A pull request can give one fact a thousand patterns: after MAX_STALLS of them ran out of time the
    rest are not tried, so the fact costs two time limits, not a thousand, and says so in three lines."""
    import time

    checks = [Check("forbid", f"{SLOW}{n}") for n in range(20)]
    start = time.monotonic()
    violations, failed = codecheck.evaluate(checks, "a.go", LINE, None)
    assert time.monotonic() - start < 3.0 and violations == []  # bounds, not speed: unbounded it is 5 s
    assert len(failed) == 3 and all("took longer than 0.25 s" in f for f in failed[:2])
    assert "ran out of time 2 times in this run; the rest were not tried" in failed[2]


def test_within_a_run_a_slow_pattern_is_not_retried_and_a_stalling_fact_is_dropped():
    import time

    slow = [Check("forbid", SLOW), Check("forbid", SLOW + "2"), Check("forbid", SLOW + "3")]
    good = [Check("forbid", "words")]
    start = time.monotonic()
    with codecheck.budget(60):
        said = [codecheck.evaluate(slow, f"f{n}.go", LINE, None)[1] for n in range(10)]
        found = [codecheck.evaluate(good, f"f{n}.go", LINE, None)[0] for n in range(10)]
    assert time.monotonic() - start < 4.0  # two stops of 0.25 s, then nothing of that fact runs (not 7.5 s)
    assert any("ran out of time 2 times in this run" in line for line in said[-1])
    assert all(len(v) == 1 for v in found)  # another fact's check still runs everywhere


def test_a_run_gives_all_its_checks_together_the_budget_and_says_what_it_left():
    import time

    facts = [[Check("forbid", f"{SLOW}{n}")] for n in range(40)]
    start = time.monotonic()
    with codecheck.budget(0.6):
        said = [codecheck.evaluate(checks, "a.go", LINE, None)[1] for checks in facts]
    assert time.monotonic() - start < 4.0  # the budget and one stop, not 40 x 0.25 s (bounds on a busy machine)
    assert said[-1] == ["`check`: the checks of this run took all of their 0.6 s (a slow pattern elsewhere)"]


def slow_to_compile(first: int, count: int) -> list[str]:
    """Patterns that take ~0.2 s each to compile (case-insensitive ranges over most of Unicode), each
    one new to this process (`re` keeps what it compiled)."""
    return ["(?i)" + "".join(f"[{chr(0x100 + i + n)}-{chr(0xFFFF - i)}]" for i in range(40))
            for n in range(first, first + count)]


def test_reading_a_fact_compiles_none_of_its_patterns():
    """Checked by compiling them, a pull request's fact listing a hundred of these took 18 s to load,
    and every prompt hook, refreshing the index, ran out of its 8 s and said nothing, prompt after
    prompt. Loading only parses them; a pattern is compiled where it is evaluated, in that run's time."""
    import time

    start = time.monotonic()
    checks, problems = codecheck.parse({"forbid": slow_to_compile(0, 30)})
    assert time.monotonic() - start < 3.0 and problems == [] and len(checks) == 30  # compiled: ~6 s


def test_compiling_a_pattern_counts_in_the_run_s_budget():
    import time

    start = time.monotonic()
    with codecheck.budget(0.6):
        _, failed = codecheck.evaluate([Check("forbid", p) for p in slow_to_compile(100, 60)], "a.go", LINE, None)
    assert time.monotonic() - start < 4.0  # compiled in full, ~12 s
    # Each compile is timed: the run's budget ends it (a quiet machine), or on a busy one compiles
    # pass their own 0.25 s and the fact is dropped after two; never a compile past both.
    bounded = ("took all of their 0.6 s", "took longer than 0.25 s", "ran out of time 2 times in this run")
    assert failed and all(any(b in f for b in bounded) for f in failed), failed


def test_a_fact_spends_its_share_of_the_run_and_the_facts_after_it_are_still_evaluated():
    """Four facts from a pull request, each with two patterns that backtrack on any line, took 0.25 s a
    pattern until the run's budget was gone, and the honest facts after them were not evaluated at all
    (`the checks of this run took all of their 1.2 s`). Now each fact's turn gets its share of the run:
    the slow ones stop at theirs, and the honest ones still run."""
    import time

    slow = [[Check("forbid", f"{SLOW}{n}"), Check("forbid", f"{SLOW}Y{n}")] for n in range(4)]
    honest = [[Check("forbid", "words")], [Check("forbid", "ordinary")]]
    start = time.monotonic()
    said, found = [], []
    with codecheck.budget(1.2, facts=6):
        for n, checks in enumerate(slow + honest):
            with codecheck.turn(f"docs/memory/f{n}.md"):
                violations, failed = codecheck.evaluate(checks, "a.go", LINE, None)
            said.append(failed)
            found.append(violations)
    assert time.monotonic() - start < 6.0  # bounds, not speed: a share each, not 8 x 0.25 s
    assert [len(v) for v in found[4:]] == [1, 1] and said[4:] == [[], []]  # the honest facts were evaluated
    # each slow fact stopped at its share, or at its patterns' own limit (a busy machine), never the run's
    bounded = ("took all of its share of this run", "took longer than 0.25 s", "ran out of time 2 times")
    assert all(lines and all(any(b in line for b in bounded) for line in lines) for lines in said[:4]), said


def test_a_fact_past_its_share_says_so_once_naming_the_share_and_what_to_do():
    with codecheck.budget(1.0, facts=10_000):  # a share of 0.1 ms: FLOOR gives it 10 ms
        with codecheck.turn("docs/memory/slow.md"):
            _, failed = codecheck.evaluate([Check("forbid", f"{SLOW}{n}") for n in range(5)], "a.go", LINE, None)
            assert codecheck.spent() == failed[-1]
        assert codecheck.spent() is None  # outside the fact's turn, the run goes on
    assert failed == ["`check`: the fact's checks took all of its share of this run (0.01 s of the 1 s shared by "
                      "10000 facts) and the rest were not evaluated: make them cheaper (simpler patterns, fewer "
                      "or smaller anchored files)"]
