"""`lazyre.lazy` stands where `re.compile` was: compiled at the first use, then the compiled
pattern's own methods, with the same answers."""
import re

from stele.lazyre import lazy


def test_nothing_is_compiled_until_used_and_then_once():
    rx = lazy(r"(?i)(secret|token)_(\d+)")
    assert "search" not in vars(rx)
    first = rx.search
    assert vars(rx)["search"] == first  # kept: a later use is one attribute read
    assert rx.search("a TOKEN_42 b").groups() == ("TOKEN", "42")
    assert rx.pattern == r"(?i)(secret|token)_(\d+)" and rx.flags & re.I


def test_answers_as_the_compiled_pattern_does():
    source, flags, text = r"^(\w+)=(\S*)$", re.M, "a=1\nb=\nnot one\nc=x y\n"
    got, want = lazy(source, flags), re.compile(source, flags)
    assert [m.groups() for m in got.finditer(text)] == [m.groups() for m in want.finditer(text)]
    assert got.findall(text) == want.findall(text)
    assert got.sub(r"\1", text) == want.sub(r"\1", text)
    assert got.split(text) == want.split(text)
    assert got.match("k=v").span() == want.match("k=v").span()
    assert got.fullmatch("k=v x") is None and got.groups == want.groups == 2
