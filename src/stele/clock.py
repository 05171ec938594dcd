"""Time as Stele stores it, in one place: a UTC moment to the second, written `2026-12-01T15:32:35Z`.

Session-log entries, claims and their leases, and the recall-gap's `--since` all write and read this
one format, so a string compare orders them and no reader guesses a zone. Parsing is `fromisoformat`,
not `strptime`: its import (`_strptime`, `calendar`, `locale`) is ~6 ms of every racing claimer's CPU.
(The calendar date that decides expiry and review is `delivery.today()`: it may be pinned.)
"""
from __future__ import annotations

import datetime as dt

FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def iso(moment: dt.datetime) -> str:
    """`moment` (aware, any zone) in the stored format."""
    return moment.astimezone(dt.UTC).strftime(FORMAT)


def now_iso() -> str:
    return iso(dt.datetime.now(dt.UTC))


def parse_time(text: str) -> dt.datetime:
    """`2026-12-01T15:32:35Z` exactly (what `iso` writes)."""
    if len(text) != 20 or text[10] != "T" or text[-1] != "Z":
        raise ValueError(f"not a UTC time (YYYY-MM-DDTHH:MM:SSZ): {text!r}")
    return dt.datetime.fromisoformat(text[:-1]).replace(tzinfo=dt.UTC)


def parse_given(text: str, now: dt.datetime | None = None) -> str:
    """A moment a person typed (`--at`): ISO 8601 with a zone (`Z`, `+02:00`; fractions of a second
    are dropped), in the stored format. A time without a zone, or in the future, is refused: a log
    entry says when something happened, and that cannot be later than now."""
    raw = text.strip()
    try:
        moment = dt.datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith(("Z", "z")) else raw)
    except ValueError:
        raise ValueError(f"not an ISO 8601 time: {text!r} (e.g. 2026-03-01T09:30:00Z)") from None
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no zone: add Z (UTC) or an offset such as +02:00")
    moment = moment.replace(microsecond=0)
    if moment > (now or utcnow()):
        raise ValueError(f"{text!r} is in the future: an entry records what already happened")
    return iso(moment)
