"""What a session has been delivered, and what a later recall may still deliver to it: the one rule
the prompt hook (whose state `hooks/state.py` keeps per session), its claim of what it shows, and
`stele eval`'s session cases all follow.

A fact reaches an agent in one of two forms: as an entry of the window, or as a risk callout ("RISK
on your path"). `shown` holds every id delivered in either form, `warned` those delivered as a
callout (a subset). An id in `shown` is never listed again as an entry; an id in `warned` is never
called out again. A risk in `shown` but not in `warned` was only ever listed: the agent never
received it as a warning, so when a later prompt lifts it into the callout it is called out once
(the callout line only, its entry is not repeated), and from then on it is in both.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..plain import dataclass


@dataclass(frozen=True)
class Delivered:
    shown: frozenset[str] = frozenset()  # delivered in any form: never listed again
    warned: frozenset[str] = frozenset()  # delivered as a risk callout: never called out again

    def add(self, entries: Iterable[str] = (), risks: Iterable[str] = ()) -> Delivered:
        """After a delivery of `entries` (listed) and `risks` (called out)."""
        risks = frozenset(risks)
        return Delivered(self.shown | frozenset(entries) | risks, self.warned | risks)

    def new(self, ids: Iterable[str], risks: Iterable[str] = ()) -> list[str]:
        """Of the ids a delivery holds (`risks` those of them called out), those new to the session in
        the form they are delivered in."""
        risks = frozenset(risks)
        return [i for i in dict.fromkeys(ids) if i not in (self.warned if i in risks else self.shown)]

