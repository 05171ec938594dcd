"""Plain text for anchored facts: what the pre-commit hook prints and `stele anchored` shows.

Byte-stable and free of terminal codes (neutralized here, since the pre-commit hook writes some of
it to stderr itself): git hooks print into terminals, editors and CI logs alike.
"""
from __future__ import annotations

from ..neutralize import neutralize
from ..retrieve.anchored import Anchored
from ..retrieve.codechecks import Outcome
from ..textcut import counted


def fact_lines(found: list[Anchored]) -> list[str]:
    out = []
    for entry in found:
        f = entry.fact
        status = "" if f.status == "current" else f" [{f.status}]"
        out.append(f"  {f.id} {f.kind}{status}: {f.title}")
        for hit in entry.hits:
            where = f" (lines {hit.lines[0]}-{hit.lines[1]})" if hit.lines else ""
            shown = hit.anchor if hit.file == hit.anchor.split("::")[0] else f"{hit.anchor} via {hit.file}"
            out.append(f"      {shown}{where}")
    return out


def text(found: list[Anchored], what: str) -> str:
    """A heading naming `what` was looked at, then each fact and the anchors that matched."""
    if not found:
        return f"stele: no facts are anchored to {what}\n"
    head = f"stele: {counted(len(found), 'fact')} anchored to {what}:"
    return neutralize("\n".join([head, *fact_lines(found)]) + "\n")


def check_lines(outcomes: list[Outcome]) -> list[str]:
    """Each fact whose checks the code breaks (or that could not run), then one line a violation."""
    out = []
    for o in outcomes:
        if not o.violations and not o.failures and not o.notes:
            continue
        f = o.fact
        out.append(f"  {f.id} {f.kind}: {f.title}")
        out += [f"      {v.describe()}" for v in o.violations]
        out += [f"      check not run ({f.path}): {why}" for why in o.failures + o.notes]
    return out


def checks_text(outcomes: list[Outcome], what: str) -> str:
    """The violations of the facts' `check:` entries in `what`, or "" when there are none."""
    lines = check_lines(outcomes)
    broken = sum(1 for o in outcomes if o.violations)
    if not lines:
        return ""
    head = (f"stele: {what} break the check of {counted(broken, 'fact')}:" if broken
            else f"stele: some checks of facts anchored to {what} could not run:")
    return neutralize("\n".join([head, *lines]) + "\n")
