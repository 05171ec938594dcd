"""Questions about the past: `--as-of`, and prompts that ask what was true then.

Two ways in. An explicit moment (`stele recall --as-of 2026-03-31`, the HTTP `as_of`, the MCP tools'
`as_of`) answers from the record as it stood then (`index.asof`). A prompt can ask too, and a small
fixed set of rules reads it (`cue`), deterministically and from the words alone:

- a time it names: "in March", "in March 2026", "in 2025", "last year", "last month", "as of
  2026-03-04", "3 months ago", "before April". The sentence must also be in the past tense (was,
  were, did, had, used, ...): "what ships in March" is a plan, not a question about history. A month
  without a year is its latest occurrence that has begun; a time that is not past yet is no cue.
  Recall then answers as of the end of that time ("before April": the end of March).
- "before" asked without a date: "before the replacement", "before we switched", "what did we use
  before?", "we used to", "previously", "originally". Recall answers from today's record but lets
  superseded facts in (they are normally withheld), labelled `[superseded]`.

Either way the window says what time it answers for (`When.line`), and the JSON gains `as_of`. A
prompt with none of these cues is answered exactly as before: nothing here runs past `cue()`.
"""
from __future__ import annotations

import datetime as dt
import re

from ..plain import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..index.asof import Moment
    from ..project import Project

OPTION, PROMPT = "option", "prompt"
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH = (r"(?P<month>january|february|march|april|(?-i:May)|june|july|august|september|october|november"
          r"|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?")
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PAST = (r"\b(?:was|were|did|had|used|ran|chose|picked|decided|switched|replaced|moved|went|held|relied"
         r"|preferred|kept|agreed)\b")
_WHEN = [  # (what it names, pattern); the first that matches wins
    ("before_month", rf"\b(?:before|prior to)\s+{_MONTH}(?:\s+(?:of\s+)?{_YEAR})?\b"),
    ("month", rf"\b(?:in|during|as of|by|around|early|mid|late|end of|the end of)\s+(?:(?:early|mid|late)\s+)?"
              rf"{_MONTH}(?:\s+(?:of\s+)?{_YEAR})?\b"),
    ("date", r"\b(?:on|as of|at|by|before)\s+(?P<date>\d{4}-\d{2}-\d{2})\b"),
    ("year", rf"\b(?P<prep>in|during|as of|by|before)\s+{_YEAR}\b"),
    ("last", r"\blast\s+(?P<unit>year|month|week)\b"),
    ("ago", r"\b(?P<n>a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,3})\s+"
            r"(?P<unit>day|week|month|year)s?\s+ago\b"),
]
_BEFORE = (
    r"\bbefore\s+(?:the|we|they|you|it|our|this|that|its)\s+(?:\w+\s+){0,3}?"
    r"(?:replace\w*|switch\w*|migrat\w*|mov(?:e|ed|ing)\b|chang\w*|rewr\w*|adopt\w*|introduc\w*|supersed\w*"
    r"|upgrad\w*|refactor\w*|redesign\w*|rework\w*)"
    r"|\b(?:what|which|how)\b[^.?!\n]{0,80}\b(?:use|used|using|have|had|do|did|was|were)\b[^.?!\n]{0,60}?"
    r"\bbefore\s*(?:\?|$|then\b|that\b)"
    r"|\b(?:we|you|they|it|i)\s+used\s+to\b"
    r"|\b(?:previously|originally|formerly|back then)\b")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
# Words without which no rule can match: a prompt holding none of them (nearly every prompt) is
# answered without compiling the rules (~7 ms of a hook's process) or running them.
_HINTS = frozenset(MONTHS) | {m[:3] for m in MONTHS} | {"sep", "sept", "before", "prior", "last", "ago",
                                                       "used", "previously", "originally", "formerly", "then"}
_SPLIT = str.maketrans(dict.fromkeys("?!.,;:()[]{}\"'`/\\-_", " "))
_compiled: list[Any] = []


def _rules() -> tuple[Any, list[tuple[str, Any]], Any]:
    """(past tense, time rules, "before" rule), compiled on first use."""
    if not _compiled:
        _compiled.extend([re.compile(_PAST, re.I), [(n, re.compile(p, re.I)) for n, p in _WHEN],
                          re.compile(_BEFORE, re.I | re.M)])
    return _compiled[0], _compiled[1], _compiled[2]


def _hinted(text: str) -> bool:
    words = text.lower().translate(_SPLIT).split()
    return any(w in _HINTS or (len(w) == 4 and w[:2] in ("19", "20") and w.isdigit()) for w in words)


@dataclass(frozen=True)
class Cue:
    """What a prompt asks about the past: a moment (end of the time it names, UTC), or only
    `before` (superseded facts let in), and the words that said so."""
    phrase: str
    moment: dt.datetime | None = None
    before: bool = False


@dataclass(frozen=True)
class When:
    """What time an answer is for, as the window and the JSON say it."""
    asked: str
    source: str  # OPTION or PROMPT
    time: str | None = None  # the cutoff, when answering as of a moment
    commit: str | None = None
    before: bool = False  # superseded facts were let in
    note: str = ""  # why the time asked about could not be used

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"asked": self.asked, "from": self.source, "time": self.time,
                                "commit": self.commit, "superseded_included": self.before}
        if self.note:
            data["note"] = self.note
        return data

    def line(self) -> str:
        said = f"asked: \"{self.asked}\"" if self.source == PROMPT else f"--as-of {self.asked}"
        if self.time:
            text = f"(answering as of {self.time}: the record at commit {(self.commit or '')[:7]}, " \
                   f"session notes up to then; {said})"
        else:
            text = f"(answering about the past: superseded facts are included and marked; {said})"
        return text if not self.note else f"{text[:-1]}; {self.note})"

    @classmethod
    def of(cls, moment: Moment, source: str = OPTION) -> When:
        return cls(moment.asked, source, moment.cutoff, moment.commit)


def cue(prompt: str, today: dt.date) -> Cue | None:
    """The past a prompt asks about, or None (most prompts: then nothing changes)."""
    text = prompt[:4000]
    if not _hinted(text):
        return None
    past, when, before = _rules()
    for name, pattern in when:
        m = pattern.search(text)
        if m is None:
            continue
        try:
            moment = _moment(name, m, today)
        except (ValueError, OverflowError):  # "900 years ago", "February 30"
            continue
        if moment is not None and moment.date() < today and past.search(text):
            return Cue(m.group(0).strip(), moment)
    m = before.search(text)
    if m is not None:
        return Cue(" ".join(m.group(0).split()), before=True)
    return None


def _end_of_day(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, 23, 59, 59, tzinfo=dt.UTC)


def _month_end(year: int, month: int) -> dt.date:
    nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
    return nxt - dt.timedelta(days=1)


def _month_number(word: str) -> int:
    word = word.lower().rstrip(".")
    return next(n for n, name in enumerate(MONTHS, 1) if name.startswith(word[:3]))


def _moment(name: str, m: re.Match[str], today: dt.date) -> dt.datetime | None:
    """The end of the time a matched phrase names (None: no time it could mean)."""
    if name in ("month", "before_month"):
        month = _month_number(m.group("month"))
        year = int(m.group("year")) if m.group("year") else today.year - (month > today.month)
        if name == "before_month":
            return _end_of_day(dt.date(year, month, 1) - dt.timedelta(days=1))
        return _end_of_day(_month_end(year, month))
    if name == "date":
        try:
            day = dt.date.fromisoformat(m.group("date"))
        except ValueError:
            return None
        return _end_of_day(day - dt.timedelta(days=1) if m.group(0).lower().startswith("before") else day)
    if name == "year":
        year = int(m.group("year"))
        return _end_of_day(dt.date(year - 1, 12, 31) if m.group("prep").lower() == "before"
                           else dt.date(year, 12, 31))
    unit = m.group("unit").lower()
    n = 1 if name == "last" else (_NUMBERS.get(m.group("n").lower()) or int(m.group("n")))
    if unit == "day":
        return _end_of_day(today - dt.timedelta(days=n))
    if unit == "week":
        return _end_of_day(today - dt.timedelta(days=7 * n))
    if name == "last" and unit == "year":
        return _end_of_day(dt.date(today.year - 1, 12, 31))
    if name == "last" and unit == "month":
        return _end_of_day(dt.date(today.year, today.month, 1) - dt.timedelta(days=1))
    months = 12 * n if unit == "year" else n
    year, month = divmod(today.year * 12 + today.month - 1 - months, 12)
    return _end_of_day(dt.date(year, month + 1, min(today.day, _month_end(year, month + 1).day)))


@dataclass
class Plan:
    """How one recall or search runs: over which project (the live one, or a past state), with
    superseded facts let in or not, on which calendar day, saying what time it answers for."""
    project: Project
    when: When | None = None
    history: bool = False
    day: dt.date | None = None


def moment_of(project: Project, as_of: str | Moment) -> Moment:
    """`as_of` (a Moment, or a date or commit as the option takes it) resolved; SteleError naming
    `--as-of` when it names no past state here."""
    from ..index.asof import Moment, resolve

    return as_of if isinstance(as_of, Moment) else resolve(project, as_of)


def explicit(project: Project, moment: Moment) -> Plan:
    """The plan for an explicit `--as-of` (the past state is made here: its errors reach the caller)."""
    from ..delivery import today
    from ..index.asof import prepare

    return Plan(prepare(project, moment), When.of(moment), day=moment.day if moment.day < today() else None)


def from_prompt(project: Project, prompt: str, today: dt.date, warnings: list[str]) -> Plan:
    """The plan a prompt asks for: unchanged without a cue; never raises (a time that cannot be
    answered as of falls back to today's record with superseded facts let in, and says why)."""
    found = cue(prompt, today)
    if found is None:
        return Plan(project)
    if found.moment is None:
        return Plan(project, When(found.phrase, PROMPT, before=True), history=True)
    from ..errors import SteleError
    from ..index.asof import at

    try:
        moment = at(project, found.moment, found.phrase, flag="the time asked about")
        plan = explicit(project, moment)
        return Plan(plan.project, When.of(moment, PROMPT), day=plan.day)
    except SteleError as e:
        note = str(e).split(": ", 1)[-1] if "before the first commit" not in str(e) else \
            "the record's history starts later"
        return Plan(project, When(found.phrase, PROMPT, before=True, note=note), history=True)
    except Exception as e:  # a past state that cannot be made must not cost the agent its memory
        warnings.append(f"stele: cannot answer as of {found.phrase!r} ({type(e).__name__}: {e}); "
                        "answering from today's record")
        return Plan(project, When(found.phrase, PROMPT, before=True), history=True)
