"""Freshness in what the agent is told: the drift of each candidate's anchors, its label, its rank.

`anchors/drift.py` says whether an item's anchored code changed since it was confirmed; this module
asks it for the items a recall scored (or a hook is about to show), once each, and turns the answer
into what the agent sees and into a small downrank:

- a fact: `anchor changed in 3 commits since verified (+40/-12 lines)`, else `verified 12 days ago`
  (`recorded ...` when it was never verified);
- a session entry written before its anchored code changed: `stale: anchor changed in 2 commits since
  written`; it ranks below every session entry that is not stale;
- an item whose anchored code changed in a commit since loses `retrieval.drift_penalty` (0.5) of its
  score (uncommitted edits are labelled only). Downrank, never exclude: the window's relevance cut
  judges it without the penalty, and a named id keeps its place.
- only anchors with a recorded fingerprint are checked here (a fact written before fingerprints, an
  old session entry: `stele doctor` reads their baseline from git), so a fresh anchor costs no git.

Fails open: whatever goes wrong (no git, an unreadable cache) costs the labels, never the recall.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable

from ..plain import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..anchors.drift import Baseline, Drift
    from ..index.catalog import Catalog
    from ..project import Project
    from .rank import Scored
    from .settings import Settings

SESSION = "session"


@dataclass(frozen=True)
class Freshness:
    drift: Drift | None
    label: str | None


def check(project: Project, catalog: Catalog, ids: Iterable[str], today: dt.date,
          warn: Callable[[str], None] | None = None, deadline: float | None = None) -> dict[str, Freshness]:
    """id -> its freshness, for those of `ids` that are anchored (the others have nothing to compare).
    Past `deadline` (monotonic) git is not asked: a drifted item is labelled without its commits."""
    try:
        from ..anchors.drift import Checker

        bases = {i: b for i, b in catalog.baselines(ids).items() if b.prints}  # only fingerprinted anchors
        if not bases:
            return {}
        sources = {i: n.source for i, n in catalog.nodes(bases).items()}
        checker = Checker.for_project(project, unpinned=False, deadline=deadline)  # no git for an unpinned anchor
        out = {}
        for i, base in bases.items():
            drift, compared = checker.check(base)
            if compared:  # no anchor resolves: nothing to say (doctor reports broken anchors)
                out[i] = Freshness(drift, label(base, drift, today, sources.get(i) == SESSION))
        checker.save()
        return out
    except Exception as e:  # the labels are a nicety: never the reason a recall fails
        if warn is not None:
            warn(f"stele: freshness not checked ({type(e).__name__}: {e})")
        return {}


def label(base: Baseline, drift: Drift | None, today: dt.date, session: bool = False) -> str | None:
    """What the agent reads beside the item (None: nothing worth saying)."""
    from ..anchors.drift import days_ago

    if session:
        return f"stale: {drift.label('written')}" if drift is not None else None
    verb = "verified" if base.commit else "recorded"
    if drift is not None:
        return drift.label(verb)
    when = days_ago(base.since, today)
    return f"{verb} {when}" if when else None


def downrank(scored: dict[str, Scored], found: dict[str, Freshness], s: Settings) -> None:
    """Take `drift_penalty` off each item whose anchored code changed in a commit since it was verified
    (in place; `parts["drift"]` says so). Uncommitted edits are labelled, not downranked: they are
    most often the session's own work in progress, about which the fact is most relevant."""
    from .rank import pinned

    for i, f in found.items():
        x = scored.get(i)
        if x is None or f.drift is None or not f.drift.commits or pinned(x) or not s.drift_penalty:
            continue
        x.parts["drift"] = -s.drift_penalty
        x.score = round(x.score - s.drift_penalty, 3)
