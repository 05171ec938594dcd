"""Regular expressions compiled on first use, for modules the hook path imports.

A module-level `re.compile` runs on every import, so in every hook process: the hook path's modules
held ~40 of them, and a 10k-fact prompt used 10 (issue 34: ~2.4 ms of compiling for patterns the
prompt never ran, among them most of `redact`'s value checks and `override`'s). `lazy(...)` is
written where `re.compile(...)` was; the pattern is compiled the first time one of its attributes is
read, and its methods are then kept on the object, so a later `.search` is one attribute read, as on a
compiled pattern (tests/test_lazyre.py). It is not a `re.Pattern`, and its type (`Pattern`, the
methods it keeps) says so: the checker refuses it in `re.sub(p, ...)` or `isinstance`.
"""
from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from typing import Any, Protocol

    class Pattern(Protocol):
        """What a `lazy` pattern offers (`_KEPT`): the checker refuses it where a real `re.Pattern` is
        needed (`re.sub(p, ...)`, `isinstance`), which would fail at run time."""
        pattern: str
        flags: int
        groups: int
        groupindex: Mapping[str, int]

        def search(self, string: str, pos: int = ..., endpos: int = ...) -> re.Match[str] | None: ...
        def match(self, string: str, pos: int = ..., endpos: int = ...) -> re.Match[str] | None: ...
        def fullmatch(self, string: str, pos: int = ..., endpos: int = ...) -> re.Match[str] | None: ...
        def finditer(self, string: str, pos: int = ..., endpos: int = ...) -> Iterator[re.Match[str]]: ...
        def findall(self, string: str, pos: int = ..., endpos: int = ...) -> list[Any]: ...
        def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = ...) -> str: ...
        def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = ...
                 ) -> tuple[str, int]: ...
        def split(self, string: str, maxsplit: int = ...) -> list[str | Any]: ...

    def lazy(pattern: str, flags: int = 0) -> Pattern: ...
else:
    _KEPT = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "pattern",
             "flags", "groups", "groupindex")

    class lazy:
        def __init__(self, pattern, flags=0):
            self._args = (pattern, flags)

        def __getattr__(self, name):  # only while nothing is kept: the first use compiles
            compiled = re.compile(*self._args)
            for attr in _KEPT:
                setattr(self, attr, getattr(compiled, attr))
            return getattr(compiled, name)

        def __repr__(self):
            return f"lazy({self._args[0]!r}, {self._args[1]!r})"
