"""Executable constraints: a fact's `check:`, parsed, validated and evaluated on code.

A constraint, instruction or decision may say what its anchored code must not (`forbid`) or must
(`require`) contain, as regular expressions:

    check:
      forbid: 'kubectl .*--exec-plugin.*dex'   # no added line in the anchored files may match
      require: '^from __future__ import'       # each anchored file must still match after the change
      enforce: deny                            # pre-edit: refuse the edit (default warn: tell the agent)
      message: Dex is for web UIs only.        # optional: said with a violation
      ast: 'requests.get($$$)'                 # no added code may match this ast-grep pattern
      language: python                         # optional: the pattern's language (default: by extension)
      command: 'make lint-auth'                # run (opt-in, reviewed facts only): non-zero exit = violation
      timeout: 10                              # seconds for `command` (default 10, at most 300)

or a list of such mappings; `forbid`, `require` and `ast` also take a list of patterns. This module is
the one home of that syntax (the record loader validates with `parse`, the index stores `dump`, the
hooks read `load`) and of the matching. It sits on the hook path: plain data classes, `re` and
`signal`; a structural (`ast`) check is matched by `structural.py`, imported only when one is evaluated,
and a `command` is run by `retrieve/commandcheck.py` (never here: not on the hook path).

Facts arrive in pull requests, so a pattern is untrusted input. It is capped in length, each line is
matched on at most `MAX_LINE` characters, and every evaluation runs under a time limit (SIGALRM, in
the main thread: CPython's regex engine checks for signals while it backtracks, so the alarm stops a
catastrophic pattern such as `(a+)+$`). A pattern that does not compile or runs out of time is the
fact's problem (`CheckError`, reported as such), never a violation and never a block.

The limits add up (a pull request can give a fact a thousand slow patterns, anchor it to every file,
or add a thousand facts), so they are held together too. Within a run (`budget`: one hook, one
`stele doctor`; outside one, one `evaluate` call) a pattern that ran out of time is not tried again,
a fact whose patterns ran out of time `MAX_STALLS` times is not evaluated again, and all the checks
together get at most the seconds the caller gives (`EDIT_BUDGET`, `COMMIT_BUDGET`, `CI_BUDGET`).
Within that budget each fact has a share (`turn`): one fact, slow however it is slow (a thousand
patterns each just under its limit, anchors on every file, a structure matched on a huge file),
spends its own share, not the others'. A structural match cannot be stopped once started, so one is
not started where ast-grep's expected cost (`structural.cost`) is more than the fact has left.
What is not run is the fact's problem, said once per fact; its other checks still count.
"""
from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from ..plain import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MODES = ("forbid", "require", "ast", "command")
ENFORCE = ("warn", "deny")
KEYS = (*MODES, "enforce", "message", "language", "timeout")
CHECK_KINDS = ("constraint", "instruction", "decision")  # the kinds whose `check:` is evaluated
MAX_PATTERN = 500  # characters of a pattern
MAX_LINE = 2000  # characters of a line a pattern is matched against
MAX_MESSAGE = 300
MAX_COMMAND = 1000  # characters of a command line
TIMEOUT = 10.0  # seconds a `command` may run, unless the check says `timeout:`
MAX_TIMEOUT = 300.0
TIME_LIMIT = 0.25  # seconds for one pattern over one file's lines
MAX_STALLS = 2  # a fact whose patterns ran out of time this often is not evaluated again in the run
EDIT_BUDGET = 2.0  # seconds for all the checks of one pre-edit hook (which answers within 8 s)
COMMIT_BUDGET = 5.0  # seconds for all the checks of one pre-commit hook
CI_BUDGET = 300.0  # seconds for all the checks of one `stele doctor --check-code`
FLOOR = 0.01  # seconds: the least a fact's share of a run is, however many facts share it (`turn`)
SLOW = "took longer than {:.2g} s; simplify the pattern"
UNAFFORDABLE = ("was not run on a file larger than the fact's time left in this run could cover: ast-grep "
                "cannot be stopped once started (about {:g} s a MB); anchor the fact to smaller files")
SHOWN = 160  # characters of an offending line quoted in a violation


class CheckError(Exception):
    """A check that cannot be evaluated (a bad pattern, out of time): the fact's problem."""


class TooSlow(CheckError):
    """A pattern stopped at its time limit."""


@dataclass(frozen=True)
class Check:
    mode: str  # forbid | require | ast | command
    pattern: str  # the regular expression, the ast-grep pattern or the command line
    enforce: str = "warn"  # warn | deny: what the pre-edit hook does with a violation
    message: str = ""
    language: str = ""  # ast: the pattern's language ("" = each file's, by its extension)
    timeout: float = 0.0  # command: seconds (0 = TIMEOUT)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {self.mode: self.pattern, "enforce": self.enforce}
        if self.message:
            out["message"] = self.message
        if self.language:
            out["language"] = self.language
        if self.timeout:
            out["timeout"] = int(self.timeout) if self.timeout == int(self.timeout) else self.timeout
        return out

    @property
    def spelled(self) -> str:
        """The pattern as messages quote it: /regex/, `structure`, `command`; redacted and neutralized
        (`neutralize.shown`), as everything a check says is: a pattern from a pull request can hold an
        escape sequence or a credential (a check forbidding a leaked token spells it)."""
        from ..neutralize import shown

        if self.mode in ("ast", "command"):  # a structural pattern may span lines: a message is one
            return shown("`" + " ".join(self.pattern.split()) + "`")
        return shown(f"/{self.pattern}/")

    def describe(self) -> str:
        what = {"forbid": "forbids", "require": "requires", "ast": "forbids the structure", "command": "runs"}
        return f"{what.get(self.mode, self.mode)} {self.spelled}"


@dataclass(frozen=True)
class Violation:
    check: Check
    path: str
    line: int  # 1-based; for an unmet `require`, 1 (the file as a whole)
    text: str = ""  # the offending line, cut to SHOWN characters ("" for an unmet `require`)

    def what(self) -> str:
        """What is wrong, without where: the offending text and the check, and the check's message.
        Redacted and neutralized (`neutralize.shown`): it reaches terminals, CI logs, SARIF files and
        agents, and the offending line is often the credential a check exists to catch."""
        from ..neutralize import shown

        if self.check.mode == "require":
            said = f"no longer matches /{self.check.pattern}/ (required)"
        elif self.check.mode == "ast":
            said = f"adds `{self.text}`, which matches the structure `{' '.join(self.check.pattern.split())}` (forbidden)"
        elif self.check.mode == "command":
            said = f"`{' '.join(self.check.pattern.split())}` failed ({self.text})"
        else:
            said = f"adds `{self.text}`, which matches /{self.check.pattern}/ (forbidden)"
        return shown(f"{said}{': ' + self.check.message if self.check.message else ''}")

    def describe(self) -> str:
        """One line: where, then `what` (the path neutralized: a pull request names its files)."""
        from ..neutralize import neutralize

        where = self.path if self.check.mode in ("require", "command") else f"{self.path}:{self.line}"
        return f"{neutralize(where)}: {self.what()}"


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
            problems.append(f"{where}must be a mapping with `forbid: REGEX`, `require: REGEX`, `ast: PATTERN` or "
                            "`command: CMD` (and optionally `enforce: warn|deny`, `message: TEXT`)")
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
        language, timeout = _language(item, where, problems), _timeout(item, where, problems)
        found = False
        for mode in MODES:
            patterns = item.get(mode)
            if patterns is None:
                continue
            found = True
            for pattern in patterns if isinstance(patterns, list) and mode != "command" else [patterns]:
                problem = (command_problem(pattern) if mode == "command" else
                           text_problem(pattern, "an ast-grep pattern") if mode == "ast" else pattern_problem(pattern))
                if problem:
                    problems.append(f"{where}`{mode}` {problem}")
                    continue
                if mode == "command" and isinstance(pattern, list):
                    import shlex  # lazily: not on the hook path (tests/hooks/test_imports.py)

                    pattern = shlex.join(pattern)
                checks.append(Check(mode, pattern, enforce, message.strip(), language if mode == "ast" else "",
                                    timeout if mode == "command" else 0.0))
        if not found:
            problems.append(f"{where}has none of `forbid`, `require`, `ast`, `command`: add `forbid: REGEX` (no "
                            "added line may match) or `require: REGEX` (the file must still match)")
        elif "language" in item and "ast" not in item:
            problems.append(f"{where}`language` goes with `ast` (the structural pattern's language)")
        elif "timeout" in item and "command" not in item:
            problems.append(f"{where}`timeout` goes with `command` (the seconds it may run)")
    return checks, problems


def _language(item: dict[str, Any], where: str, problems: list[str]) -> str:
    from .structural import LANGUAGES  # the names only: ast-grep itself is not imported

    value = item.get("language", "")
    if value == "" or value in LANGUAGES:
        return str(value)
    problems.append(f"{where}`language` {value!r} is not one ast-grep knows: use one of " + ", ".join(sorted(LANGUAGES)))
    return ""


def _timeout(item: dict[str, Any], where: str, problems: list[str]) -> float:
    value = item.get("timeout")
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TIMEOUT:
        problems.append(f"{where}`timeout` {value!r} must be a number of seconds, above 0 and at most {MAX_TIMEOUT:g}")
        return 0.0
    return float(value)


def text_problem(value: Any, what: str) -> str | None:
    """Why `value` cannot be a check's `what` (quoted text under MAX_PATTERN characters), or None."""
    if not isinstance(value, str) or not value.strip():
        return f"{value!r} is not {what}: write it as quoted text"
    if len(value) > MAX_PATTERN:
        return f"is {len(value)} characters long; keep a pattern under {MAX_PATTERN}"
    return None


def command_problem(value: Any) -> str | None:
    """Why `value` cannot be a `command` (a command line, or a list of its words), or None."""
    import shlex

    if isinstance(value, list):
        if not value or not all(isinstance(w, str) and w for w in value):
            return "as a list must list the command's words as text"
        value = shlex.join(value)
    if not isinstance(value, str) or not value.strip():
        return f"{value!r} is not a command: write it as quoted text, e.g. 'make lint'"
    if len(value) > MAX_COMMAND or "\n" in value:
        return f"must be one line of at most {MAX_COMMAND} characters"
    try:
        shlex.split(value)
    except ValueError as e:
        return f"{value!r} cannot be split into words ({e}); it is run without a shell"
    return None


def pattern_problem(pattern: Any) -> str | None:
    """Why `pattern` cannot be a check's pattern, or None."""
    if not isinstance(pattern, str) or not pattern:
        return f"{pattern!r} is not a regular expression: write it as quoted text"
    if len(pattern) > MAX_PATTERN:
        return f"is {len(pattern)} characters long; keep a pattern under {MAX_PATTERN}"
    try:
        _parsed(pattern)
    except CheckError as e:
        return f"{pattern!r} {e}"
    return None


def _parsed(pattern: str) -> None:
    """CheckError when `pattern` is not a valid regular expression, found by parsing it, not compiling
    it: parsing takes a fraction of a millisecond, while compiling some patterns takes 0.2 s (a
    case-insensitive range over most of Unicode), and a fact is read on every load of the record (a
    hook's index refresh included): a hundred such patterns took 18 s. The one error only the compiler
    raises, a look-behind of variable width, is looked for here too."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]

    try:
        tree = _parser.parse(pattern, re.MULTILINE)
    except (re.error, OverflowError, RecursionError) as e:
        raise CheckError(f"is not a valid regular expression ({e})") from None

    def walk(items: Any) -> None:
        for op, av in items:
            if op in (c.ASSERT, c.ASSERT_NOT) and av[0] < 0:
                lo, hi = av[1].getwidth()
                if lo != hi:
                    raise CheckError("is not a valid regular expression (look-behind requires fixed-width pattern)")
            for part in av if isinstance(av, (tuple, list)) else (av,):
                for sub in part if isinstance(part, list) else (part,):
                    if isinstance(sub, _parser.SubPattern):
                        walk(sub)

    walk(tree)


_COMPILED: dict[str, re.Pattern[str]] = {}


def compiled(pattern: str) -> re.Pattern[str]:
    """The compiled pattern (kept for the process); CheckError when it does not compile. Not timed
    here: an evaluation compiles inside its own time limit (`forbidden`, `required`)."""
    found = _COMPILED.get(pattern)
    if found is None:
        try:
            found = re.compile(pattern, re.MULTILINE)
        except (re.error, OverflowError, RecursionError) as e:
            raise CheckError(f"is not a valid regular expression ({e})") from None
        _COMPILED[pattern] = found
    return found


def dump(checks: Iterable[Check]) -> str | None:
    """The checks as compact JSON, for the index; None when there are none."""
    rows = [[c.mode, c.pattern, c.enforce, c.message, c.language, c.timeout] for c in checks]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")) if rows else None


def load(text: str | None) -> list[Check]:
    """`dump`'s text back as checks (anything unreadable counts as none: the index is derived)."""
    if not text:
        return []
    try:
        return [Check(str(m), str(p), str(e), str(msg), str(rest[0]) if rest else "", float(rest[1]) if rest[1:] else 0.0)
                for m, p, e, msg, *rest in json.loads(text)]
    except (ValueError, TypeError):
        return []


class _Run:
    """The time left to the checks of one run, each fact's share of it, and the patterns that ran out
    of it there."""

    def __init__(self, seconds: float, facts: int = 0) -> None:
        self.seconds, self.deadline = seconds, time.monotonic() + seconds  # inf: no budget
        self.facts = facts  # how many facts take a `turn` (0: not said; a fact's share is what is left)
        self.slow: dict[tuple[str, str], str] = {}  # (mode, pattern) -> how it ran out of time
        self.stalls: dict[str, int] = {}  # a fact (its `turn`'s name, else `_key`) -> its patterns stopped
        self.shares: dict[str, list[float]] = {}  # a fact -> [its share in seconds, what its turns took]
        self.turn = ""  # the fact whose turn it is ("": none)
        self.turn_end = float("inf")  # when that fact's share runs out
        self.ast_rate = 0.0  # the most a structural match took a MB in this run (`structural.rate`)


_RUN: _Run | None = None


@contextmanager
def budget(seconds: float, facts: int = 0) -> Iterator[None]:
    """Evaluate the block's checks in at most `seconds` all together, shared by `facts` facts that each
    take a `turn` (a block inside another keeps the outer one's)."""
    global _RUN
    if _RUN is not None:
        yield
        return
    _RUN = _Run(seconds, facts)
    try:
        yield
    finally:
        _RUN = None


@contextmanager
def turn(fact: str) -> Iterator[None]:
    """The block is `fact`'s turn (`fact` names it: its file): all the time the block takes, reading
    and numbering its files too, counts against the fact's share of the run, fixed at its first turn as
    max(FLOOR, what the run has left / the facts that have not had a turn yet). Every fact so gets at
    least the budget over the number of facts (less only where FLOOR times that number is over the
    budget), and what one leaves goes to those after it. A fact past its share is not evaluated further
    (`spent`, `evaluate` say so, once); the others still are. Outside a `budget`, or inside another
    turn, the block runs as it would without."""
    run = _RUN
    if run is None or run.turn:
        yield
        return
    start = time.monotonic()
    share = run.shares.get(fact)
    if share is None:
        waiting = max(run.facts - len(run.shares), 1)
        share = run.shares[fact] = [max(FLOOR, (run.deadline - start) / waiting), 0.0]
    run.turn, run.turn_end = fact, start + share[0] - share[1]
    try:
        yield
    finally:
        share[1] += time.monotonic() - start
        run.turn, run.turn_end = "", float("inf")


class _Expired(BaseException):
    """The alarm, raised where the block was: a BaseException, so that no `except Exception` in the code
    it stops takes it for that code's own error."""


_ARMED = False  # a `time_limit` block is running: only then does its alarm raise


def _expire(signum: int, frame: object) -> None:
    if _ARMED:  # an alarm that arrives as the block ends is let go: it must not escape the block
        raise _Expired


@contextmanager
def time_limit(seconds: float, shown: float | None = None) -> Iterator[None]:
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
    global _ARMED
    _ARMED, expired = True, False
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer) if outer else seconds)
    try:
        yield
    except _Expired:
        expired = True
    finally:
        _ARMED = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer and not (expired and outer_first):
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 0.001))
    if expired:
        if outer_first and callable(outer_handler):
            outer_handler(signal.SIGALRM, None)  # the hook's budget is spent: its handler decides
        raise TooSlow(SLOW.format(shown or seconds))


def forbidden(check: Check, path: str, lines: Iterable[tuple[int, str]], seconds: float = TIME_LIMIT
              ) -> list[Violation]:
    """The added `lines` (number, text) of `path` that a `forbid` check's pattern matches."""
    out = []
    with time_limit(seconds, TIME_LIMIT):
        pattern = compiled(check.pattern)
        for number, text in lines:
            if pattern.search(text[:MAX_LINE]):
                out.append(Violation(check, path, number, _shown(text)))
    return out


def required(check: Check, path: str, text: str, seconds: float = TIME_LIMIT) -> Violation | None:
    """A violation when `path`'s whole text (each line capped) no longer matches a `require` check."""
    capped = "\n".join(line[:MAX_LINE] for line in text.split("\n"))
    with time_limit(seconds, TIME_LIMIT):
        found = compiled(check.pattern).search(capped)
    return None if found else Violation(check, path, 1)


def structural(check: Check, path: str, lines: Iterable[tuple[int, str]], after: str,
               seconds: float = float("inf")) -> list[Violation]:
    """The matches of an `ast` check's pattern in `after` (the file as the change leaves it) that cover
    one of the added `lines`, in at most `seconds`; CheckError when it cannot be evaluated
    (structural.py). ast-grep's own step cannot be stopped, so it is not started when its expected cost
    is over `seconds`, or over what an interval timer already set (the hook's budget) leaves
    (`UNAFFORDABLE`), and runs without an alarm (which could act only once it returned, throwing away
    what was paid for). Locating its matches can be stopped: it gets that cost plus TIME_LIMIT, within
    what `seconds` has left."""
    from . import structural as sg  # ast-grep is loaded only where a structural check is evaluated

    language = sg.language_of(path, check.language)
    wanted = [n for n, _ in lines if n]
    if language is None or not wanted:
        return []  # a file in no language ast-grep knows (or no line added): the pattern says nothing
    run = _RUN or _Run(float("inf"))
    size = len(after.encode("utf-8", "replace"))
    try:
        sg.module()  # imported before the clock starts: the import is not the match's cost
        expected = sg.cost(size, run.ast_rate)
        if expected > min(seconds, signal.getitimer(signal.ITIMER_REAL)[0] or seconds):
            raise CheckError(UNAFFORDABLE.format(sg.SECONDS_PER_MB))
        start = time.monotonic()
        nodes = sg.find(check.pattern, language, after)
        took = time.monotonic() - start
        run.ast_rate = max(run.ast_rate, sg.rate(size, took))
        own = expected + TIME_LIMIT
        if seconds - took <= 0:  # ast-grep took what the fact (or the run) had left: `evaluate` says which
            raise TooSlow(SLOW.format(own))
        with time_limit(min(own, seconds - took), own):
            found = sg.covering(nodes, after, wanted)
    except sg.StructuralError as e:
        raise CheckError(str(e)) from None
    return [Violation(check, path, n, _shown(text)) for n, text in found]


def evaluate(checks: Iterable[Check], path: str, added: list[tuple[int, str]] | None,
             after: str | None) -> tuple[list[Violation], list[str]]:
    """Every check on one file: `added` (number, text) lines for `forbid`, `after` (the file as it will
    be, None when deleted or unknown) for `require`, both for `ast`. Violations, and the checks that
    failed to run. A `command` is not evaluated on a file (retrieve/commandcheck.py runs it)."""
    found: list[Violation] = []
    failed: list[str] = []
    checks = tuple(checks)
    run = _RUN or _Run(float("inf"))  # outside a `budget`, the limits hold for this call
    fact = run.turn or _key(checks)
    for check in checks:
        if check.mode == "command" or not (added or (after is not None and check.mode == "require")):
            continue
        left, why = _allowed(run, check, fact)
        if why:
            _add(failed, why.format(_said(check)) if "{}" in why else why)
            continue
        try:
            if check.mode == "forbid":
                found += forbidden(check, path, added or [], min(TIME_LIMIT, left))
            elif check.mode == "require" and after is not None:
                hit = required(check, path, after, min(TIME_LIMIT, left))
                if hit is not None:
                    found.append(hit)
            elif check.mode == "ast" and added and after is not None:
                found += structural(check, path, added, after, left)
        except TooSlow as e:
            out = _out(run, time.monotonic())
            if out:
                _add(failed, out)  # the run's budget or the fact's share ran out under this pattern
                continue
            run.slow[check.mode, check.pattern] = str(e)  # not tried again in this run, said alike
            run.stalls[fact] = run.stalls.get(fact, 0) + 1
            _add(failed, f"{_said(check)} {e}")
        except CheckError as e:
            _add(failed, f"{_said(check)} {e}")
    return found, failed


def _key(checks: tuple[Check, ...]) -> str:
    """A fact's checks as one string: hashing the frozen data classes cost 49 s over 4 million
    evaluations (2,000 facts anchored to every one of 2,100 files)."""
    return "\0".join(f"{c.mode}\1{c.pattern}" for c in checks)


def _said(check: Check) -> str:
    return f"`check` {check.mode} {check.spelled}"


def _add(said: list[str], line: str) -> None:
    if line not in said:
        said.append(line)


def _allowed(run: _Run, check: Check, fact: str) -> tuple[float, str]:
    """The seconds `check` (one of `fact`'s) may take now, all told (a regex also stops at its own
    TIME_LIMIT), or why it is not run (`{}` stands for the check): it ran out of time earlier in this
    run, the fact's patterns ran out of time `MAX_STALLS` times in this run, the run's budget is spent,
    or the fact's share of it. The last three name no pattern, so a fact says each once."""
    if run.slow and (check.mode, check.pattern) in run.slow:
        return 0.0, "{} " + run.slow[check.mode, check.pattern]
    if run.stalls and run.stalls.get(fact, 0) >= MAX_STALLS:
        return 0.0, (f"`check`: the fact's patterns ran out of time {MAX_STALLS} times in this run; the rest "
                     "were not tried: simplify them")
    now = time.monotonic()
    out = _out(run, now)
    return (0.0, out) if out else (min(run.deadline, run.turn_end) - now, "")


def spent() -> str | None:
    """Why no check may run any more in this run (its budget is spent) or in this fact's turn (its share
    is), or None: a caller with work to do before each evaluation (reading, numbering lines) skips it."""
    return _out(_RUN, time.monotonic()) if _RUN is not None else None


def _out(run: _Run, now: float) -> str | None:
    """Why nothing more is run at `now`: the run's budget is spent, or the fact's share of it."""
    if now >= run.deadline:
        return _spent(run)
    if now >= run.turn_end:
        share = run.shares[run.turn][0]
        return (f"`check`: the fact's checks took all of its share of this run ({share:.2g} s of the {run.seconds:g} s "
                f"shared by {max(run.facts, len(run.shares))} facts) and the rest were not evaluated: make them "
                "cheaper (simpler patterns, fewer or smaller anchored files)")
    return None


def _spent(run: _Run) -> str:
    return f"`check`: the checks of this run took all of their {run.seconds:g} s (a slow pattern elsewhere)"


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
