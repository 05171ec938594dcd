"""A claim and its run's snapshot: the claim is decided first, the snapshot is built for the winner.

Deciding a claim is a compare-and-swap on a git ref (`tasks.claims`): a few git calls. Building the
snapshot loads the whole record, searches the index and the code: seconds on a big record. So the
order is claim, then snapshot, never the other way round: of sixteen agents racing for a task, the
fifteen losers are told who won as soon as the winner's ref moved, and only the winner pays for a
snapshot. What the losers read is the task's own file (`record.load.find_one`), not the record, and
a latecomer (the task is already held by someone else, as this clone knows it) is answered from the
claim ref alone, before the record's parser is even imported: that is why the imports below are lazy.

A snapshot can still fail for the winner (an `always` rule too big for the budget, a named record
that does not exist). Then the claim is withdrawn (released, and the release logged with the
reason), so a claim never stands without the snapshot its run was promised.
"""
from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import SteleError, UsageError
from ..project import Project
from ..tasks import claims
from ..tasks.claims import Claimed, ClaimHeld, Identity

if TYPE_CHECKING:
    from ..record.load import Record
    from .model import Snapshot


class Withdrawn(SteleError):
    """The claim was won, its snapshot failed, and the claim was released again; `cause` is why."""

    def __init__(self, cause: SteleError, task: str) -> None:
        self.cause = cause
        self.exit_code = cause.exit_code
        super().__init__(f"{cause}\nstele: so the claim on {task} was released again")


@dataclass
class ClaimRun:
    claimed: Claimed
    snapshot: Snapshot
    claim_ms: float  # deciding the claim: what a loser waits for, too
    snapshot_ms: float  # the winner's snapshot, taken and stored

    def timings(self) -> dict[str, float]:
        return {"claim_ms": round(self.claim_ms, 1), "snapshot_ms": round(self.snapshot_ms, 1)}


def claim(project: Project, task_id: str, me: Identity, *, lease: dt.timedelta | None = None,
          remote: str | None = None, records: Sequence[str] = (), now: dt.datetime | None = None) -> ClaimRun:
    """Claim `task_id` for `me`, then take and keep the snapshot of its run, with `records` named in
    it (they reach the run even when `delivery: manual`). Raises ClaimHeld for a loser at once."""
    start = time.perf_counter()
    _refuse_if_held(project, task_id.upper(), me, remote, now)
    from ..tasks import board

    named = [r.upper() for r in dict.fromkeys(records)]
    record = _record_if_needed(project, named)
    claimed = board.claim_task(project, task_id, me, lease=lease, remote=remote, now=now, record=record)
    decided = time.perf_counter()
    c = claimed.claim
    try:
        from .build import Request, keep, take

        snap = take(project, Request(task=c.task, records=named), record=record)
        snap.inputs["claim"] = {"agent": c.holder.agent, "session": c.holder.session, "token": c.token}
        keep(project, snap, me.session)  # every claim stores what its run is told
    except BaseException as e:  # a Ctrl-C too: no claim stands without its snapshot
        why = " ".join(str(e).split()) if isinstance(e, SteleError) else type(e).__name__
        released = board.withdraw(project, claimed, me, f"its snapshot failed: {why}")
        if isinstance(e, SteleError) and released is not None:
            raise Withdrawn(e, c.task) from e
        raise
    return ClaimRun(claimed, snap, (decided - start) * 1000, (time.perf_counter() - decided) * 1000)


def _refuse_if_held(project: Project, task: str, me: Identity, remote: str | None,
                    now: dt.datetime | None) -> None:
    """A live claim of someone else's, as this clone's own ref records it, needs no more than that
    ref to answer. (Not for a claim decided on a remote: the local copy may be behind it.)"""
    local = claims.read(project, task)
    if remote is None and local is not None and local.remote is None and not me.owns(local) \
            and local.live((now or claims.utcnow()).replace(microsecond=0)):
        raise ClaimHeld(local)


def _record_if_needed(project: Project, named: list[str]) -> Record | None:
    """Named records are checked before the claim (a typo should not take a task and give it back).
    Each is looked up by its file name; only when one is not found that way is the record loaded, and
    then it is handed on to the snapshot, so it is loaded once."""
    from ..record.load import find_one, load

    if all(find_one(project, fid) is not None for fid in named):
        return None
    record = load(project).usable()  # a bad file elsewhere never stops a claim
    missing = [fid for fid in named if fid not in record.facts]
    if missing:
        raise UsageError(f"--record {', '.join(missing)}: no fact has that id (`stele list` shows the ids); "
                         "nothing was claimed")
    return record
