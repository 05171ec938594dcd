"""Plain text for anchored facts: what the pre-commit hook prints and `stele anchored` shows.

Byte-stable and free of terminal codes: git hooks print into terminals, editors and CI logs alike.
"""
from __future__ import annotations

from ..retrieve.anchored import Anchored
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
    return "\n".join([head, *fact_lines(found)]) + "\n"
