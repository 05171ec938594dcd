"""regexcheck: a configured redaction pattern is judged from its parse tree before it is compiled, so
a hostile one is refused (by index, with what to do) in bounded time, never after seconds of compiling."""
import time

import pytest

from stele.regexcheck import MAX_CHARS, MAX_TOTAL_CHARS, first_problem

WIDE = "[\u0100-\uffff]"  # one class over most of the BMP: ~3 ms to compile, ~9 ms case-insensitive


@pytest.mark.parametrize("patterns,index,says", [
    (["ok-[0-9]+", "(?i)" + WIDE * 5], 1, "character-class ranges of the patterns to"),
    ([WIDE, WIDE, WIDE, WIDE, WIDE], 4, "they may span 262,144"),
    (["a" * (MAX_CHARS + 1)], 0, "is 1,001 characters long"),
    (["b" * 900] * (MAX_TOTAL_CHARS // 900 + 1), MAX_TOTAL_CHARS // 900, "together they may have 10,000"),
    (["(a+)+$"], 0, "a repeat inside a repeat"),
    (["[unclosed"], 0, "is not a valid regular expression"),
    (["(?<=a+)b"], 0, "look-behind requires fixed-width pattern"),
    ([7], 0, "must be a non-empty regular expression"),
])
def test_a_refused_pattern_is_named_by_index_with_why(patterns, index, says):
    found = first_problem(patterns)
    assert found is not None and found[0] == index and says in found[1], found


def test_ordinary_patterns_pass():
    assert first_problem(["ACME-[0-9]{6}", "[\u4e00-\u9fff]{8,}", "[^\\x00-\\x7f]+", "(?i)internal-[a-z]+",
                          "(?:foo|bar)+", "TOKEN_[A-Z0-9]{20}"]) is None


def test_judging_a_hostile_config_is_fast():
    """1,500 wide case-insensitive classes took ~13 s to compile; judging them is a parse (a loose
    bound: the point is that nothing compiles them)."""
    start = time.monotonic()
    assert first_problem(["(?i)" + WIDE * 60] * 100) is not None
    assert time.monotonic() - start < 2
