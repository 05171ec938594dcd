"""textcut: every cut stays within its budget (mark included, but for `chars`) and says it happened."""
import re
from pathlib import Path

from stele import textcut


def test_words_cut_at_a_word_and_count_the_mark():
    assert textcut.words("short", 10) == "short"
    assert textcut.words("alpha beta gamma delta", 14) == "alpha beta..."
    assert textcut.words("x" * 30, 10) == "x" * 7 + "..."  # one long word is cut inside it
    assert textcut.words("step 2 " + "x" * 300, 200) == "step 2 " + "x" * 190 + "..."
    assert all(len(textcut.words("word " * 50, n)) <= n for n in range(3, 60))


def test_one_line_folds_whitespace_first():
    assert textcut.one_line("a\n  b\tc", 20) == "a b c"
    assert textcut.one_line("one two\nthree four five", 12) == "one two..."


def test_lines_cut_at_a_line_and_end_in_the_mark():
    text = "first line\nsecond line\nthird line"
    assert textcut.lines(text, 100, " [cut]") == text
    assert textcut.lines(text, 28, " [cut]") == "first line\nsecond line [cut]"
    assert len(textcut.lines("y" * 50, 20, " [cut]")) == 20


def test_chars_keep_exactly_the_promised_count():
    assert textcut.chars("abcdef", 3, " [...]") == "abc [...]"
    assert textcut.chars("abc", 3, " [...]") == "abc"


def test_ends_keep_the_beginning_and_the_end_of_a_long_text():
    text = "question first " + "log line " * 1000 + "and the question last"
    cut = textcut.ends(text, 200)
    head, tail = cut.split("\n...\n")
    assert head.startswith("question first") and tail.endswith("the question last")
    assert len(head) + len(tail) <= 200 and not head.endswith(" ") and " " not in (tail[0], head[-1])
    assert textcut.ends("short", 200) == "short"


def test_counted_says_one_and_many():
    assert [textcut.counted(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]
    assert textcut.counted(1, "entry", "entries") == "1 entry" and textcut.counted(3, "entry", "entries") == "3 entries"


# A plural written by hand ("{n} error{'s' if n > 1 else ''}", "problem(s)") drifts from counted():
# it said "0 hop", "1 errors" and "problem(s)" before. Words without a number stay free to say "(s)".
HAND_PLURAL = re.compile(r"""\{['"]s['"] (?:if|\*)|\{[^{}]+\} [a-z]+\(s\)""")


def test_plurals_have_one_home():
    src = Path(textcut.__file__).parent
    found = [f"{p.relative_to(src)}:{n}: {line.strip()}"
             for p in sorted(src.rglob("*.py")) if "examples" not in p.parts
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if HAND_PLURAL.search(line)]
    assert found == [], "say it with textcut.counted(n, noun[, plural])"


def test_the_plural_detector_sees_what_it_should():
    assert HAND_PLURAL.search("f\"{n} fact{'s' if n != 1 else ''}\"")
    assert HAND_PLURAL.search("f\"{e} error{'s' * (e != 1)}\"")
    assert HAND_PLURAL.search('f"{errors} problem(s) keep"')
    assert not HAND_PLURAL.search('"Anchored to the file(s) being edited"')
    assert not HAND_PLURAL.search("counted(n, 'fact')")


def test_error_line_is_the_type_and_the_first_line_cut_at_a_word():
    assert textcut.error_line(ValueError("bad value\ntraceback...")) == "ValueError: bad value"
    assert textcut.error_line(OSError()) == "OSError"
    long = textcut.error_line(RuntimeError("word " * 100), 40)
    assert long.startswith("RuntimeError: word") and long.endswith("...") and len(long) <= len("RuntimeError: ") + 40
