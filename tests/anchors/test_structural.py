"""Structural checks (`check: {ast: PATTERN}`): ast-grep patterns over the code a change adds to
(anchors/structural.py, evaluated through anchors/codecheck.py like the regex checks)."""
from __future__ import annotations

import sys

import pytest

from stele.anchors import codecheck, structural
from stele.anchors.codecheck import Check

SOURCE = '''import requests

# requests.get(url) is forbidden here: use the client
def fetch(url):
    return requests.get(
        url,
        timeout=3,
    )

def other(url):
    return requests.get(url)
'''


def _needs_ast_grep():
    pytest.importorskip("ast_grep_py", reason="the optional extra stele[checks] (ast-grep-py) is not installed")


def test_a_match_counts_when_the_change_added_a_line_inside_it():
    _needs_ast_grep()
    check = Check("ast", "requests.get($$$)", message="use the client")
    lines = codecheck.numbered(SOURCE, [(7, 7)])  # `timeout=3,` inside the first call
    found, failed = codecheck.evaluate([check], "app/net.py", lines, SOURCE)
    assert failed == []
    assert [(v.line, v.text) for v in found] == [(5, "return requests.get(")]
    assert found[0].describe() == ("app/net.py:5: adds `return requests.get(`, which matches the structure "
                                   "`requests.get($$$)` (forbidden): use the client")


def test_a_comment_or_a_call_the_change_did_not_touch_is_no_violation():
    _needs_ast_grep()
    check = Check("ast", "requests.get($$$)")
    # line 3 is a comment that a regex would match; line 10 is a def line outside any call
    found, failed = codecheck.evaluate([check], "app/net.py", codecheck.numbered(SOURCE, [(3, 3), (10, 10)]),
                                       SOURCE)
    assert (found, failed) == ([], [])
    everything, _ = codecheck.evaluate([check], "app/net.py", codecheck.numbered(SOURCE), SOURCE)
    assert [v.line for v in everything] == [5, 11]


def test_the_language_comes_from_the_check_or_the_extension_and_an_unknown_file_is_skipped():
    _needs_ast_grep()
    js = "const r = fetch(url);\n"
    check = Check("ast", "fetch($URL)")
    assert [v.line for v in codecheck.evaluate([check], "web/a.ts", codecheck.numbered(js), js)[0]] == [1]
    assert codecheck.evaluate([check], "notes/a.txt", codecheck.numbered(js), js) == ([], [])
    forced = Check("ast", "fetch($URL)", language="javascript")
    assert [v.line for v in codecheck.evaluate([forced], "notes/a.txt", codecheck.numbered(js), js)[0]] == [1]
    assert structural.language_of("x/Makefile") is None and structural.language_of("a.PY") == "python"


def test_a_pattern_ast_grep_rejects_is_the_fact_s_problem_in_one_line():
    _needs_ast_grep()
    found, failed = codecheck.evaluate([Check("ast", "$A = $B\n$C = $D")], "a.py", [(1, "x = 1")], "x = 1\n")
    assert found == [] and len(failed) == 1 and "\n" not in failed[0]
    assert "is not a pattern ast-grep can use in python" in failed[0]


def test_without_the_extra_a_structural_check_fails_naming_the_install_and_nothing_else_does(monkeypatch):
    monkeypatch.setitem(sys.modules, "ast_grep_py", None)  # `import ast_grep_py` raises ImportError
    checks = [Check("ast", "eval($X)"), Check("forbid", r"\beval\(")]
    found, failed = codecheck.evaluate(checks, "a.py", [(1, "eval(x)")], "eval(x)\n")
    assert [v.check.mode for v in found] == ["forbid"]
    assert failed == ["`check` ast `eval($X)` needs ast-grep, an optional extra: pip install 'stele[checks]'"]


def test_a_file_over_the_size_cap_is_not_parsed():
    _needs_ast_grep()
    big = "x = 1\n" * (structural.MAX_BYTES // 6 + 1)
    _, failed = codecheck.evaluate([Check("ast", "x = $V")], "a.py", [(1, "x = 1")], big)
    assert len(failed) == 1 and "skipped a file over 1 MB" in failed[0]


NESTED = "var x = " + "[" * 100_000 + "]" * 100_000 + ";\n"  # 200 KB on one line


def test_where_each_match_is_is_found_under_a_time_limit():
    """`$X` matches each of the 100,000 nested arrays, and telling where each is scans the line: the
    check ran 5 s here (50 KB more, 12 s; a 1 MB line, minutes) with nothing to stop it, in a
    pre-commit hook of 5 s. Now the matches are looked at under the pattern's own limit."""
    _needs_ast_grep()
    import time

    start = time.monotonic()
    found, failed = codecheck.evaluate([Check("ast", "$X")], "web/a.js", [(1, NESTED)], NESTED)
    assert time.monotonic() - start < 4.0  # a bound, not the speed: it stops at 0.65 s
    assert found == [] and len(failed) == 1 and "`check` ast `$X` took longer than" in failed[0], failed


def test_a_match_that_could_not_be_stopped_is_not_started_past_the_time_the_fact_has_left():
    """ast-grep parses and matches in one call that no signal interrupts: given a 500 KB file with
    0.1 s left of its share, the fact's check started anyway and ran its 0.3-0.5 s. Now a match whose
    expected cost (1 s a MB, or what matches took in this run) is over what is left is not started."""
    _needs_ast_grep()
    big = "x = 1\n" * 85_000
    with codecheck.budget(1.0, facts=10):
        with codecheck.turn("docs/memory/a.md"):
            found, failed = codecheck.evaluate([Check("ast", "x = $V")], "a.py", [(1, "x = 1")], big)
        with codecheck.turn("docs/memory/b.md"):  # a small file still fits in another fact's share
            small, _ = codecheck.evaluate([Check("ast", "x = $V")], "a.py", [(1, "x = 1")], "x = 1\n")
    assert found == [] and failed == ["`check` ast `x = $V` " + codecheck.UNAFFORDABLE.format(structural.SECONDS_PER_MB)]
    assert len(small) == 1


def test_nor_is_one_started_past_the_hook_s_own_timer():
    """Inside the hook's interval timer (its whole answer's budget), a match that timer would not leave
    room for is not started either: the alarm could only act once ast-grep returned, past the budget."""
    _needs_ast_grep()
    import signal

    fired = []
    old = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        _, failed = codecheck.evaluate([Check("ast", "x = $V")], "a.py", [(1, "x = 1")], "x = 1\n" * 85_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert failed == ["`check` ast `x = $V` " + codecheck.UNAFFORDABLE.format(structural.SECONDS_PER_MB)]
