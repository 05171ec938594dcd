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
