"""Code that changed under a fact while the fact did not: the co-change gate and `stele review` both
ask it of a change between two revisions.

A fact keeps up with a change to its anchored code in one of three ways: it was edited in the same
change, it was re-verified (`stele verify` moves `verified`/`verified_at`), or a commit in the change
carries a trailer `Stele-Ack: ID reason` saying why the fact still holds as written.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..project import Project
from ..record.load import Record
from ..record.model import Fact
from . import anchored

ACK_TRAILER = "Stele-Ack"
# fields whose change is maintenance, not a change of what the fact says
MAINTENANCE = frozenset({"verified", "verified_at", "review_after", "anchors", "path", "fingerprints",
                         "needs_review"})


@dataclass
class CoChange:
    entry: anchored.Anchored
    edited: bool  # added or changed in what it says
    verified: bool  # `verified` or `verified_at` moved
    ack: tuple[str, str] | None  # (commit, reason) from a Stele-Ack trailer

    @property
    def settled(self) -> bool:
        return self.edited or self.verified or bool(self.ack and self.ack[1])


def content(fact: Fact) -> dict:
    return {k: v for k, v in fact.as_dict().items() if k not in MAINTENANCE}


def parse_acks(trailers: list[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """`Stele-Ack: RISK-2M9Q the limiter order is unchanged` -> {"RISK-2M9Q": (sha, reason)}."""
    acks: dict[str, tuple[str, str]] = {}
    for sha, value in trailers:
        fid, _, reason = value.strip().partition(" ")
        fid = fid.strip(":,").upper()
        if fid and (fid not in acks or not acks[fid][1]):
            acks[fid] = (sha, reason.strip())
    return acks


def cochanges(project: Project, change: anchored.Change, base: Record, head: Record,
              acks: dict[str, tuple[str, str]], kinds: tuple[str, ...] = ()) -> list[CoChange]:
    found = anchored.for_change(project, change, kinds=kinds, facts=head.facts.values())
    out = []
    for entry in found:
        now, before = head.facts[entry.fact.id], base.facts.get(entry.fact.id)
        edited = before is None or content(before) != content(now)
        verified = before is not None and (
            (before.verified, before.verified_at) != (now.verified, now.verified_at))
        out.append(CoChange(entry, edited, verified, acks.get(entry.fact.id)))
    return out
