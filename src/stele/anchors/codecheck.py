"""Executable constraints: a fact's `check:`, parsed, validated and evaluated on code.

A constraint, instruction or decision may say what its anchored code must not (`forbid`) or must
(`require`) contain, as regular expressions:

    check:
      forbid: 'kubectl .*--exec-plugin.*dex'   # no added line in the anchored files may match
      require: '^from __future__ import'       # each anchored file must still match after the change
      enforce: deny                            # pre-edit: refuse the edit (default warn: tell the agent)
      message: Dex is for web UIs only.        # optional: said with a violation

or a list of such mappings; `forbid` and `require` also take a list of patterns. This module is the
one home of that syntax (the record loader validates with `parse`, the index stores `dump`, the hooks
read `load`) and of the matching. It sits on the hook path: plain data classes, `re` and `signal`.

Facts arrive in pull requests, so a pattern is untrusted input. It is capped in length, each line is
matched on at most `MAX_LINE` characters, and every evaluation runs under a time limit (SIGALRM, in
the main thread: CPython's regex engine checks for signals while it backtracks, so the alarm stops a
catastrophic pattern such as `(a+)+$`). A pattern that does not compile or runs out of time is the
fact's problem (`CheckError`, reported as such), never a violation and never a block.
"""
from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ..plain import dataclass

MODES = ("forbid", "require")
ENFORCE = ("warn", "deny")
KEYS = (*MODES, "enforce", "message")
CHECK_KINDS = ("constraint", "instruction", "decision")  # the kinds whose `check:` is evaluated
MAX_PATTERN = 500  # characters of a pattern
MAX_LINE = 2000  # characters of a line a pattern is matched against
MAX_MESSAGE = 300
TIME_LIMIT = 0.25  # seconds for one pattern over one file's lines
SHOWN = 160  # characters of an offending line quoted in a violation


class CheckError(Exception):
    """A check that cannot be evaluated (a bad pattern, out of time): the fact's problem."""


@dataclass(frozen=True)
class Check:
    mode: str  # forbid | require
    pattern: str
    enforce: str = "warn"  # warn | deny: what the pre-edit hook does with a violation
    message: str = ""

    def as_dict(self) -> dict[str, str]:
        out = {self.mode: self.pattern, "enforce": self.enforce}
        if self.message:
            out["message"] = self.message
        return out

    def describe(self) -> str:
        what = "forbids" if self.mode == "forbid" else "requires"
        return f"{what} /{self.pattern}/"


@dataclass(frozen=True)
class Violation:
    check: Check
    path: str
    line: int  # 1-based; for an unmet `require`, 1 (the file as a whole)
    text: str = ""  # the offending line, cut to SHOWN characters ("" for an unmet `require`)

    def what(self) -> str:
        """What is wrong, without where: the offending text and the check, and the check's message."""
        if self.check.mode == "require":
            said = f"no longer matches /{self.check.pattern}/ (required)"
        else:
            said = f"adds `{self.text}`, which matches /{self.check.pattern}/ (forbidden)"
        return f"{said}{': ' + self.check.message if self.check.message else ''}"

    def describe(self) -> str:
        """One line: where, then `what`."""
        where = self.path if self.check.mode == "require" else f"{self.path}:{self.line}"
        return f"{where}: {self.what()}"


def parse(value: Any) -> tuple[list[Check], list[str]]:
    """The checks a `check:` value declares, and what is wrong with it (each message reads after the
    field's name). A wrong part is left out; the rest still counts."""
    if value is None:
        return [], []
    items = value if isinstance(value, list) else [value]
    checks: list[Check] = []
    problems: list[str] = []
    for n, item in enumerate(items):
        where = f"item {n + 1} " if isinstance(value, list) else ""
        if not isinstance(item, dict):
            problems.append(f"{where}must be a mapping with `forbid: REGEX` or `require: REGEX` (and optionally "
                            "`enforce: warn|deny`, `message: TEXT`)")
            continue
        unknown = [str(k) for k in item if k not in KEYS]
        if unknown:
            problems.append(f"{where}has unknown key(s) {', '.join(unknown)}: use " + ", ".join(KEYS))
        enforce = item.get("enforce", "warn")
        if enforce not in ENFORCE:
            problems.append(f"{where}`enforce` {enforce!r} is not one of warn, deny")
            enforce = "warn"
        message = item.get("message", "")
        if not isinstance(message, str) or len(message) > MAX_MESSAGE or "\n" in message.strip():
            problems.append(f"{where}`message` must be one line of text, at most {MAX_MESSAGE} characters")
            message = ""
        found = False
        for mode in MODES:
            patterns = item.get(mode)
            if patterns is None:
                continue
            found = True
            for pattern in patterns if isinstance(patterns, list) else [patterns]:
                problem = pattern_problem(pattern)
                if problem:
                    problems.append(f"{where}`{mode}` {problem}")
                else:
                    checks.append(Check(mode, pattern, enforce, message.strip()))
        if not found:
            problems.append(f"{where}has neither `forbid` nor `require`: add `forbid: REGEX` (no added line may "
                            "match) or `require: REGEX` (the file must still match)")
    return checks, problems


def pattern_problem(pattern: Any) -> str | None:
    """Why `pattern` cannot be a check's pattern, or None."""
    if not isinstance(pattern, str) or not pattern:
        return f"{pattern!r} is not a regular expression: write it as quoted text"
    if len(pattern) > MAX_PATTERN:
        return f"is {len(pattern)} characters long; keep a pattern under {MAX_PATTERN}"
    try:
        compiled(pattern)
    except CheckError as e:
        return f"{pattern!r} {e}"
    return None


_COMPILED: dict[str, re.Pattern[str]] = {}


def compiled(pattern: str) -> re.Pattern[str]:
    """The compiled pattern (kept for the process); CheckError when it does not compile."""
    found = _COMPILED.get(pattern)
    if found is None:
        try:
            with time_limit(TIME_LIMIT):
                found = re.compile(pattern, re.MULTILINE)
        except re.error as e:
            raise CheckError(f"is not a valid regular expression ({e})") from None
        _COMPILED[pattern] = found
    return found


def dump(checks: Iterable[Check]) -> str | None:
    """The checks as compact JSON, for the index; None when there are none."""
    rows = [[c.mode, c.pattern, c.enforce, c.message] for c in checks]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")) if rows else None


def load(text: str | None) -> list[Check]:
    """`dump`'s text back as checks (anything unreadable counts as none: the index is derived)."""
    if not text:
        return []
    try:
        return [Check(str(m), str(p), str(e), str(msg)) for m, p, e, msg in json.loads(text)]
    except (ValueError, TypeError):
        return []


class _Expired(Exception):
    pass


def _expire(signum: int, frame: object) -> None:
    raise _Expired


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Run the block for at most `seconds` (CheckError past it), inside any interval timer already set
    (the hook's budget): when that one runs out first, its own handler runs as it would have. Outside
    the main thread no alarm can be set, and only the line cap bounds the work."""
    try:
        outer_handler = signal.signal(signal.SIGALRM, _expire)
    except (ValueError, AttributeError):
        yield
        return
    outer, _ = signal.getitimer(signal.ITIMER_REAL)
    start = time.monotonic()
    outer_first = bool(outer) and outer <= seconds
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer) if outer else seconds)
    expired = False
    try:
        yield
    except _Expired:
        expired = True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer and not (expired and outer_first):
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 0.001))
    if expired:
        if outer_first and callable(outer_handler):
            outer_handler(signal.SIGALRM, None)  # the hook's budget is spent: its handler decides
        raise CheckError(f"took longer than {seconds:g} s; simplify the pattern")


def forbidden(check: Check, path: str, lines: Iterable[tuple[int, str]]) -> list[Violation]:
    """The added `lines` (number, text) of `path` that a `forbid` check's pattern matches."""
    pattern = compiled(check.pattern)
    out = []
    with time_limit(TIME_LIMIT):
        for number, text in lines:
            if pattern.search(text[:MAX_LINE]):
                out.append(Violation(check, path, number, _shown(text)))
    return out


def required(check: Check, path: str, text: str) -> Violation | None:
    """A violation when `path`'s whole text (each line capped) no longer matches a `require` check."""
    pattern = compiled(check.pattern)
    capped = "\n".join(line[:MAX_LINE] for line in text.split("\n"))
    with time_limit(TIME_LIMIT):
        found = pattern.search(capped)
    return None if found else Violation(check, path, 1)


def evaluate(checks: Iterable[Check], path: str, added: list[tuple[int, str]] | None,
             after: str | None) -> tuple[list[Violation], list[str]]:
    """Every check on one file: `added` (number, text) lines for `forbid`, `after` (the file as it will
    be, None when deleted or unknown) for `require`. Violations, and the checks that failed to run."""
    found: list[Violation] = []
    failed: list[str] = []
    for check in checks:
        try:
            if check.mode == "forbid" and added:
                found += forbidden(check, path, added)
            elif check.mode == "require" and after is not None:
                hit = required(check, path, after)
                if hit is not None:
                    found.append(hit)
        except CheckError as e:
            failed.append(f"`check` {check.mode} /{check.pattern}/ {e}")
    return found, failed


def numbered(text: str, ranges: Iterable[tuple[int, int]] | None = None) -> list[tuple[int, str]]:
    """`text`'s lines as (number, line), only those inside `ranges` (1-based, inclusive) when given."""
    lines = text.split("\n")
    if ranges is None:
        return [(i + 1, line) for i, line in enumerate(lines)]
    out = []
    for start, end in ranges:
        out += [(n, lines[n - 1]) for n in range(max(start, 1), min(end, len(lines)) + 1)]
    return out


def _shown(text: str) -> str:
    flat = text.strip()
    return flat if len(flat) <= SHOWN else flat[:SHOWN - 1] + "…"
