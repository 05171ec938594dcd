"""textcut: every cut stays within its budget (mark included, but for `chars`) and says it happened."""
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
