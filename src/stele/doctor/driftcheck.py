"""The `drift` warning: live facts whose anchored code changed in commits since they were verified.

The same question recall labels (`anchors/drift.py`), asked of every live anchored fact, with the
commits named so a reviewer can look at them. A warning, not an error: changed code often still
agrees with the fact, and only a person can say; `stele verify ID` records that they did. As in the
hooks, only anchors with a recorded fingerprint are checked (a fact written by hand has none until
`stele verify` records them), so a record of thousands of facts costs a file read per anchored file
and git only for what drifted, once per HEAD (the answers are cached in `.stele/index/drift.json`).
"""
from __future__ import annotations

from ..kinds import CLOSED_STATUSES
from ..record.load import Record
from ..textcut import counted
from .findings import Finding

SHOWN_SHAS = 5


def check(record: Record) -> list[Finding]:
    from ..anchors.drift import Baseline, Checker

    anchored = [f for f in sorted(record.facts.values(), key=lambda f: f.id)
                if f.anchors and f.fingerprints and f.status not in CLOSED_STATUSES]
    if not anchored:
        return []
    checker = Checker.for_project(record.project, unpinned=False)
    found = []
    for fact in anchored:
        since = fact.verified or fact.created
        drift = checker.drift(Baseline(tuple(fact.anchors), since.isoformat() if since else None,
                                       fact.verified_at, dict(fact.fingerprints)))
        if drift is None or not drift.commits:
            continue  # uncommitted edits are the checkout's business, not the record's
        verb = "verified" if fact.verified_at else "recorded"
        shas = ", ".join(drift.shas[-SHOWN_SHAS:]) + (", ..." if len(drift.shas) > SHOWN_SHAS else "")
        lines = f", +{drift.added}/-{drift.removed} lines" if drift.added is not None else ""
        line = fact.doc.line_of("anchors") if fact.doc else 1
        found.append(Finding(
            "drift", fact.path, line,
            f"{fact.id}: {', '.join(drift.anchors)} changed in {counted(drift.commits, 'commit')} "
            f"since {verb} ({drift.since}): {shas}{lines}; check it "
            f"still holds, then `stele verify {fact.id}`", fact.id))
    checker.save()
    return found
