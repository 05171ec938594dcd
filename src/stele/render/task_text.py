"""Plain text about tasks and claims, for agents first: no terminal codes, byte-stable for the same
record, claims and clock. `stele task resume` prints it as is; `stele task show` puts it in a panel."""
from __future__ import annotations

import datetime as dt

from ..clock import iso
from ..kinds import KINDS
from ..record.model import Fact
from ..tasks.board import Resume
from ..tasks.claims import Claim

_GROUPS = (("decision", "Decisions"), ("risk", "Risks"))


def claim_line(claim: Claim | None, now: dt.datetime) -> str:
    if claim is None:
        return "not claimed"
    if claim.state != "held":
        by = claim.released_by.agent if claim.released_by else "?"
        when = iso(claim.released_at) if claim.released_at else "?"
        return f"not claimed (last released by {by} at {when}, token {claim.token})"
    holder = f"{claim.holder.describe()} since {iso(claim.since)}"
    if claim.live(now):
        where = f", pushed to {claim.remote}" if claim.remote else ""
        return f"held by {holder}, lease until {iso(claim.until)} (token {claim.token}{where})"
    return (f"expired: held by {holder}, lease ended {iso(claim.until)} (token {claim.token}); "
            "claim it to take over")


def _fact(fact: Fact, note: str = "") -> str:
    return f"  - {fact.id} {fact.title} [{fact.kind}, {fact.status}]" + (f" ({note})" if note else "")


def task_text(r: Resume, now: dt.datetime, *, history: bool = True) -> str:
    fact = r.row.fact
    lines = [f"{fact.id}: {fact.title}",
             f"kind: {fact.kind}, status: {fact.status}, priority: {fact.priority}",
             f"claim: {claim_line(r.row.claim, now)}"]
    if r.blocks:
        lines += ["blocks:", *(_fact(f) for f in r.blocks)]
    if r.blockers:
        open_first = sorted(r.blockers, key=lambda f: f.id not in r.row.blocked_by)
        lines += ["blocked by:", *(_fact(f) for f in open_first)]
    for kind, title in _GROUPS:
        found = [(rel, f) for rel, f in r.linked if f.kind == kind]
        if found:
            lines += ["", f"{title}:", *(_fact(f, rel) for rel, f in found)]
    others = sorted(((rel, f) for rel, f in r.linked if f.kind not in dict(_GROUPS)),
                    key=lambda x: (-KINDS[x[1].kind].weight, x[1].id))
    if others:
        lines += ["", "Other linked facts:", *(_fact(f, rel) for rel, f in others)]
    if history:
        if r.history:
            shown = len(r.history)
            head = f"last {shown} of {r.history_total}" if r.history_total > shown else str(shown)
            lines += ["", f"Session history ({head}):"]
            lines += [f"  {e.ts} {e.session} {e.type}: {' '.join(e.text.split())}" for e in r.history]
        else:
            lines += ["", "Session history: none logged for this task"]
    if fact.body.strip():
        lines += ["", "Description:", *(f"  {ln}".rstrip() for ln in fact.body.strip("\n").splitlines())]
    return "\n".join(lines) + "\n"
