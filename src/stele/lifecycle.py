"""When a fact stops being pushed at agents: expiry, retirement, supersession, overdue review.

Ended facts are never auto-injected (recall, hooks, `always` delivery) but explicit search and `show`
still find them. `STELE_TODAY=YYYY-MM-DD` pins the date so evaluations and tests are reproducible.
"""
from __future__ import annotations

import datetime as dt
import os

from .errors import SteleError
from .kinds import ENDED_STATUSES

TODAY_ENV = "STELE_TODAY"


def today() -> dt.date:
    pinned = os.environ.get(TODAY_ENV)
    if pinned:
        try:
            return dt.date.fromisoformat(pinned)
        except ValueError:
            raise SteleError(f"{TODAY_ENV}={pinned!r} is not a date: use YYYY-MM-DD or unset it") from None
    return dt.date.today()


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
