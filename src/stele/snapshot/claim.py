"""A claim and its run's snapshot: the claim is decided first, the snapshot is built for the winner.

Deciding a claim is a compare-and-swap on a git ref (`tasks.claims`): a few git calls. Building the
snapshot loads the whole record, searches the index and the code: seconds on a big record. So the
order is claim, then snapshot, never the other way round: of sixteen agents racing for a task, the
fifteen losers are told who won as soon as the winner's ref moved, and only the winner pays for a
snapshot.

Racing claimers start together, so on a shared machine a round costs the sum of what every one of
them does before the swap: each pays its imports and git calls, nearly all of them before anyone has
won. So a plain local claim of a task id (`_decide_first`) reads no fact file before the swap: not the
task's (that needs the YAML parser and the record's model, ~60 ms of CPU per process), not the
record. The winner then checks the task (`board.accept`: a task, not a container, not closed) and
undoes its claim if the check fails; losers never import the record's modules at all. A latecomer
(someone else already holds the task, as this clone knows it) is answered from the claim ref alone.
The imports below are lazy for that reason, and the classes are `plain` ones (`dataclasses` imports
`inspect`). A claim pushed to a remote, or one naming records, checks first, as before: the network
or the named records cost more than the parser.

A snapshot can still fail for the winner (an `always` rule too big for the budget, a named record
that does not exist). Then the claim is taken back as if it had not been made (a first claim's ref is
deleted, a takeover released) and nothing is logged: the claim line goes to the session log only
once the snapshot is kept, so a claim never stands without the snapshot its run was promised.
"""
from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import clock
from ..errors import SteleError, UsageError
from ..plain import dataclass
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
        super().__init__(f"{cause}\nstele: so {task} was not claimed (nothing was written)")


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
    task = task_id.upper()
    local = claims.read(project, task)
    _refuse_if_held(local, me, remote, now)
    named = [r.upper() for r in dict.fromkeys(records)]
    record = None
    if remote is None and not named and _decide_first(task):
        claimed = claims.claim(project, task, me, lease or claims.default_lease(project), now=now, local=local)
        from ..tasks import board  # the winner's, from here on

        board.accept(project, claimed, me, log=False)
    else:
        from ..tasks import board

        record = _record_if_needed(project, named)
        claimed = board.claim_task(project, task_id, me, lease=lease, remote=remote, now=now, record=record,
                                   log=False)
    decided = time.perf_counter()
    c = claimed.claim
    logged = False
    try:
        from .build import Request, keep, take

        snap = take(project, Request(task=c.task, records=named), record=record)
        snap.inputs["claim"] = {"agent": c.holder.agent, "session": c.holder.session, "token": c.token}
        logged = True
        board.log_claim(project, me, claimed)  # before the snapshot's own line, as a session reads them
        keep(project, snap, me.session)  # every claim stores what its run is told
    except BaseException as e:  # a Ctrl-C too: no claim stands without its snapshot
        if claimed.action == "renewed":
            if not logged:
                board.log_claim(project, me, claimed)  # the lease was extended: that stands
            raise
        board.undo(project, claimed, me)  # a first claim's ref deleted; nothing logged unless kept failed
        if isinstance(e, SteleError):
            raise Withdrawn(e, c.task) from e
        raise
    return ClaimRun(claimed, snap, (decided - start) * 1000, (time.perf_counter() - decided) * 1000)


def _refuse_if_held(local: claims.Claim | None, me: Identity, remote: str | None, now: dt.datetime | None) -> None:
    """A live claim of someone else's, as this clone's own ref records it, needs no more than that
    ref to answer. (Not for a claim decided on a remote: the local copy may be behind it.)"""
    if remote is None and local is not None and local.remote is None and not me.owns(local) \
            and local.live((now or clock.utcnow()).replace(microsecond=0)):
        raise ClaimHeld(local)


def _decide_first(task: str) -> bool:
    """Is `task` a well-formed id of a kind that can be claimed (a task, not a container)? Only such an
    id becomes a ref before its fact is read: anything else is checked first, so a decision's id or a
    malformed name never reaches git as a claim."""
    from ..ids import is_fact_id, prefix_of
    from ..kinds import BY_PREFIX, CONTAINERS, WORK_KINDS

    kind = BY_PREFIX.get(prefix_of(task)) if is_fact_id(task) else None
    return kind is not None and kind.name in WORK_KINDS and kind.name not in CONTAINERS


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
