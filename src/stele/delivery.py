"""When a fact is pushed at agents, and when it stops: the delivery rules, in one place.

- `inactive`: expired, retired, superseded or overdue for review. Never auto-injected (recall, hooks,
  `always` delivery), but `stele search --all` and `show` still find it.
- `withheld`: everything retrieval must not deliver unasked: the inactive, `delivery: manual` facts
  (only a named id brings one) and closed work (done and cancelled tasks).
- `is_standing_rule` / `standing_rules`: what every session and every run receives whole, in the
  priority order. The session-start hook and `stele context` both call it, so they cannot disagree.

Each takes a Fact or an index node alike (both have kind, status, delivery, priority and dates), so the
hooks can answer from the catalog without parsing the record. `STELE_TODAY=YYYY-MM-DD` pins the date
so evaluations and tests are reproducible.
"""
from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from .errors import SteleError
from .kinds import ENDED_STATUSES, FIRST_KINDS, KINDS, NOT_CONTEXT_RECORDS, WORK_KINDS, priority_rank

TYPE_CHECKING = False
if TYPE_CHECKING:  # what the checker reads; nothing here runs (`typing` is ~2 ms of a hook's imports)
    from typing import Any, Protocol, TypeVar

    class Deliverable(Protocol):
        """What the delivery rules read: a parsed `Fact` (dates as `date`) or an index `Node` (dates as
        ISO text), read-only so either satisfies it. (A session entry's node says `source == "session"`;
        a Fact's `source` is its provenance list, so `_is_session` asks with getattr.)"""

        @property
        def id(self) -> str: ...
        @property
        def kind(self) -> str: ...
        @property
        def status(self) -> str: ...
        @property
        def delivery(self) -> str: ...
        @property
        def priority(self) -> str: ...
        @property
        def expires(self) -> dt.date | str | None: ...
        @property
        def review_after(self) -> dt.date | str | None: ...


    D = TypeVar("D", bound=Deliverable)

TODAY_ENV = "STELE_TODAY"
MANUAL = "delivery manual"
_pinned: list[dt.date] = []  # set by `pinned()` (a case file's `today:`), innermost last


@contextmanager
def pinned(on: dt.date) -> Iterator[None]:
    """`today()` is `on` inside the block: `stele eval` scores a case file against the date it was
    written for, in one process, as `STELE_TODAY` would for a fresh one."""
    _pinned.append(on)
    try:
        yield
    finally:
        _pinned.pop()


def today() -> dt.date:
    if _pinned:
        return _pinned[-1]
    pinned = os.environ.get(TODAY_ENV)
    if pinned:
        try:
            return dt.date.fromisoformat(pinned)
        except ValueError:
            raise SteleError(f"{TODAY_ENV}={pinned!r} is not a date: use YYYY-MM-DD or unset it") from None
    return dt.date.today()


def inactive(item: Deliverable, on: dt.date) -> str | None:
    """`inactive_reason` for anything with `status`, `expires` and `review_after` (a Fact, or an index
    node whose dates are ISO text). Session entries never end. (A Fact's `source` is its provenance list,
    so only an index node can say "session" there.)"""
    if getattr(item, "source", None) == "session":
        return None
    return inactive_reason(item.status or "", _date(item.expires), _date(item.review_after), on)


def _date(value: Any) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(value) if value else None
    except ValueError:
        return None


def inactive_reason(status: str, expires: dt.date | None, review_after: dt.date | None,
                    on: dt.date) -> str | None:
    """Why a fact must not be auto-injected on day `on`, or None when it may be."""
    if status in ENDED_STATUSES:
        return status
    if expires is not None and expires < on:
        return f"expired {expires.isoformat()}"
    if review_after is not None and review_after < on:
        return f"review overdue since {review_after.isoformat()}"
    return None


def withheld(item: Deliverable, on: dt.date, reached_by_edge: bool = False, history: bool = False) -> str | None:
    """Why retrieval must not deliver `item` unasked, or None when it may. Naming its id overrides
    all of these (the caller checks that first). `history`: the prompt asks what was used before
    (`retrieve.past`), so a superseded fact is an answer, delivered with its status shown.

    A done task is history: matching the prompt's words does not bring it, but an edge from a fact
    that does match (`reached_by_edge`) may, and it is labelled done. A cancelled task is an
    abandoned plan and never comes unasked."""
    why = inactive(item, on)
    if why and not (history and why == "superseded"):
        return why
    if getattr(item, "delivery", "") == "manual":
        return MANUAL
    if item.kind in WORK_KINDS and item.status in ("done", "cancelled"):
        return None if reached_by_edge and item.status == "done" else item.status
    return None


WARNING_KINDS = ("lesson",)  # what was tried and failed: a superseded one still warns (`is_warning`)


def is_warning(item: Deliverable) -> bool:
    """A superseded lesson (a failed approach, replaced by what works): not current, yet a prompt
    about doing it again must still meet it, labelled as superseded. Only its own match brings it
    (it is a text seed, never reached by the walk), and it ranks below what replaced it."""
    return (getattr(item, "source", None) != "session" and item.kind in WARNING_KINDS
            and item.status == "superseded")


def is_standing_rule(item: Deliverable, on: dt.date) -> bool:
    """Delivered whole to every session and every run: a rule (`is_rule`) not expired or overdue."""
    return is_rule(item) and inactive(item, on) is None


def is_rule(item: Deliverable) -> bool:
    """`delivery: always`, current (drafts and proposals are not rules yet), and a context record:
    never work (task progress stays with the task) and never a document, even one marked `always`
    (knowledge is pulled, not pushed: a run gets its title and summary in the briefing, and reads it
    when needed). Whether the calendar lets it be delivered today is `inactive`'s to say."""
    return (getattr(item, "source", None) != "session" and item.delivery == "always"
            and item.status == "current" and item.kind not in NOT_CONTEXT_RECORDS)


def rule_order(item: Deliverable) -> tuple:
    """Critical first, then the heavier kind, then the id: the same record always gives the same order."""
    kind = KINDS.get(item.kind)
    return (priority_rank(item.priority), -(kind.weight if kind else 0), item.id)


def anchored_order(item: Deliverable) -> tuple:
    """Facts anchored to a file, as `stele anchored`, the pre-edit and the pre-commit hooks list them:
    risks and constraints first (what a change can break), then `rule_order`."""
    return (item.kind not in FIRST_KINDS, *rule_order(item))


def standing_rules(items: Iterable[D], on: dt.date) -> list[D]:
    return sorted((i for i in items if is_standing_rule(i, on)), key=rule_order)
