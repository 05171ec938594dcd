"""Regular expressions compiled on first use, for modules the hook path imports.

A module-level `re.compile` runs on every import, so in every hook process: the hook path's modules
held ~40 of them, and a 10k-fact prompt used 10 (issue 34: ~2.4 ms of compiling for patterns the
prompt never ran, among them most of `redact`'s value checks and `override`'s). `lazy(...)` is
written where `re.compile(...)` was and is typed as the `re.Pattern` it stands for; the pattern is
compiled the first time one of its attributes is read, and its methods are then kept on the object,
so a later `.search` is one attribute read, as on a compiled pattern (tests/test_lazyre.py). It is not a `re.Pattern`: do not
hand it to `re.sub` and the like, or to `isinstance`; call its methods.
"""
from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]: ...
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
