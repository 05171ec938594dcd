"""When a fact stops being pushed at agents: expiry, retirement, supersession, overdue review.

Ended facts are never auto-injected (recall, hooks, `always` delivery) but explicit search and `show`
still find them. `STELE_TODAY=YYYY-MM-DD` pins the date so evaluations and tests are reproducible.
"""
from __future__ import annotations

import datetime as dt
import os
from contextlib import contextmanager
from typing import Any, Iterator

from .errors import SteleError
from .kinds import ENDED_STATUSES

TODAY_ENV = "STELE_TODAY"
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


def inactive(item: Any, on: dt.date) -> str | None:
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
