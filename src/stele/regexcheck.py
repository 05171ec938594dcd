"""The configured redaction patterns (`redaction.patterns` of `.stele/config.yaml`) are hostile input:
a pull request can change them, and every write path runs them, the hooks included.

So each is judged from its parse tree before anything compiles it. Parsing is linear in the pattern
and cheap; compiling is not: Python's compiler walks every code point below 65,536 of each range
in a character class (`[\u0100-\uffff]` costs ~3 ms, ~9 ms case-insensitive), so a few hundred such
classes cost seconds, and the first load of a config validates it before a hook's timer is set. A
pattern is refused (by its index, once, when the config loads) when it is longer than `MAX_CHARS`,
when the patterns together are longer than `MAX_TOTAL_CHARS` or their classes span more than
`MAX_RANGE_CHARS` code points (what compiling costs, bounded: ~50 ms at worst on a busy machine), and
when it can backtrack catastrophically (a repeat inside a repeat, `(a+)+$`; a repeated alternation
whose branches can start alike, `(a|ab)*`). Only then is it compiled, which also finds the errors
only the compiler raises. What matching costs past that is bounded by the hook's own timer: `re`
checks for signals while it matches, so the budget's alarm stops even a slow match.
"""
from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_CHARS = 1000          # a pattern: far past any token shape (the longest built-in row is ~330)
MAX_TOTAL_CHARS = 10_000  # all of them
MAX_RANGE_CHARS = 4 * 65_536  # code points below 65,536 spanned by class ranges, over all patterns
_BMP = 0xFFFF


def first_problem(patterns: Any) -> tuple[int, str] | None:
    """(index, why) of the first pattern of `patterns` that is refused, or None when all may be used."""
    from re import _parser  # type: ignore[attr-defined]

    total = ranges = 0
    for i, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern:
            return i, "must be a non-empty regular expression (text)"
        if len(pattern) > MAX_CHARS:
            return i, (f"is {len(pattern):,} characters long; a pattern may have {MAX_CHARS:,}: redaction runs "
                       "on every write, hooks included, and a longer one costs each of them its compiling")
        total += len(pattern)
        if total > MAX_TOTAL_CHARS:
            return i, (f"brings the patterns to {total:,} characters; together they may have {MAX_TOTAL_CHARS:,}: "
                       "drop or merge some")
        try:
            tree = _parser.parse(pattern)
            ranges += _range_chars(tree)
            found = _nested_repeat(tree, inside=False)
        except (re.error, OverflowError) as e:
            return i, f"is not a valid regular expression ({e}); fix or remove it"
        except RecursionError:
            return i, "nests its groups too deep to be read; flatten it"
        if ranges > MAX_RANGE_CHARS:
            return i, (f"brings the character-class ranges of the patterns to {ranges:,} characters; together "
                       f"they may span {MAX_RANGE_CHARS:,}, since compiling walks each one: narrow the ranges "
                       "(`[^\\x00-\\x7f]` for any non-ASCII character costs 128)")
        if found:
            return i, (f"{found} can take exponential time on text that almost matches; rewrite it without the "
                       "nested repeat (e.g. `(a+)+$` as `a+$`), or use a possessive or atomic group")
        try:
            re.compile(pattern)
        except (re.error, OverflowError, RecursionError) as e:
            return i, f"is not a valid regular expression ({e}); fix or remove it"
    return None


def _subpatterns(av: Any) -> list[Any]:
    """The parsed sub-patterns an item holds (a group's body, a repeat's, each branch, a condition's)."""
    from re import _parser  # type: ignore[attr-defined]

    if isinstance(av, _parser.SubPattern):
        return [av]
    found = []
    for part in av if isinstance(av, (tuple, list)) else ():
        for sub in part if isinstance(part, list) else (part,):
            if isinstance(sub, _parser.SubPattern):
                found.append(sub)
    return found


def _range_chars(items: Any) -> int:
    """Code points below 65,536 that the compiler walks for the class ranges in `items`."""
    from re import _constants as c  # type: ignore[attr-defined]

    total = 0
    for op, av in items:
        if op == c.IN:
            total += sum(max(0, min(arg[1], _BMP) - arg[0] + 1) for kind, arg in av if kind == c.RANGE)
        else:
            total += sum(_range_chars(sub) for sub in _subpatterns(av))
    return total


def _nested_repeat(items: Any, inside: bool) -> str | None:
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            lo, hi, body = av
            grows = hi is c.MAXREPEAT or hi > 1
            if inside and lo != hi:
                return "a repeat inside a repeat"
            if grows and hi is c.MAXREPEAT and _overlapping_branches(body):
                return "a repeated alternation whose branches can match the same text"
            found = _nested_repeat(body, inside or (grows and hi is c.MAXREPEAT))
            if found:
                return found
        elif op == c.SUBPATTERN:
            found = _nested_repeat(av[-1], inside)
            if found:
                return found
        elif op == c.BRANCH:
            for branch in av[1]:
                found = _nested_repeat(branch, inside)
                if found:
                    return found
        elif op == c.ATOMIC_GROUP:
            continue  # an atomic group never backtracks into itself
    return None


def _overlapping_branches(items: Any) -> bool:
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in items:
        if op == c.SUBPATTERN:
            return _overlapping_branches(av[-1])
        if op == c.BRANCH:
            firsts = [f for f in (_first(branch) for branch in av[1]) if f is not None]
            return len(set(firsts)) < len(firsts)
    return False


def _first(items: Any) -> Any:
    from re import _constants as c  # type: ignore[attr-defined]

    for op, av in items:
        if op == c.LITERAL:
            return av
        return None
    return None
