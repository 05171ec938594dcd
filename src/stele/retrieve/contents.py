"""What the record covers: a compact table of contents for the session start.

An agent cannot search for what it does not know exists, and the prompt hook brings only what a
prompt matches. So the session start lists the record's titles, grouped by kind (the weightiest kinds
first), each with the area of the code it is anchored to, the most linked and then the newest first,
within a byte budget (`BUDGET`, ~4 KB); what does not fit is counted per kind. Standing rules are left
out (the session start shows them whole) and so are tasks (listed as open tasks) and anything a
lifecycle rule withholds. The text depends only on the record: the same record gives the same bytes
in every session, so a harness's prompt cache keeps it until the record changes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import textcut
from ..kinds import KINDS

if TYPE_CHECKING:
    from ..index.catalog import Catalog, Node

BUDGET = 4096  # characters of the whole table
TITLE_CHARS = 90
RESERVE = 60  # characters kept for the lines that count what did not fit
SKIPPED_KINDS = frozenset({"task"})
HEAD = "What the record covers (titles only; `stele show ID` reads one, `stele recall \"...\"` searches):"


def area(path: str) -> str:
    """Where a fact is anchored, in two folders at most (`pkg/store`), or its file at the top level."""
    parts = [p for p in path.split("/") if p]
    return "/".join(parts[:2] if len(parts) > 2 else parts[:-1] or parts)


def table(catalog: Catalog, budget: int = BUDGET) -> str:
    """The table of contents, or "" when the record holds nothing it would list."""
    from ..delivery import today, withheld

    on = today()
    groups: dict[str, list[tuple[Node, int, str]]] = {}
    for node, degree, path in catalog.table_of_contents():
        if node.kind in SKIPPED_KINDS or node.delivery == "always" or withheld(node, on) is not None:
            continue
        groups.setdefault(node.kind, []).append((node, degree, path))
    if not groups:
        return ""
    kinds = sorted(groups, key=lambda k: (-(KINDS[k].weight if k in KINDS else 0), k))
    lines, used = [HEAD], len(HEAD) + 1
    for kind in kinds:
        items = sorted(groups[kind], key=lambda x: (-x[1], _newest(x[0]), x[0].id))
        entries = [f"  {node.id} {textcut.one_line(node.title, TITLE_CHARS)}" + (f" [{area(path)}]" if path else "")
                   for node, _, path in items]
        head = f"{kind} ({len(items)}):"
        if used + len(head) + len(entries[0]) + 2 > budget - RESERVE:
            rest = sum(len(groups[k]) for k in kinds[kinds.index(kind):])
            lines.append(f"({rest} more in other kinds: `stele list`)")
            break
        lines.append(head)
        used += len(head) + 1
        shown = 0
        for line in entries:
            if used + len(line) + 1 > budget - RESERVE:
                break
            lines.append(line)
            used += len(line) + 1
            shown += 1
        if shown < len(items):
            more = f"  ({len(items) - shown} more: `stele list --kind {kind}`)"
            lines.append(more)
            used += len(more) + 1
    return "\n".join(lines)


def _newest(node: Node) -> str:
    """A key that sorts the newest first (ISO dates, inverted character by character)."""
    return "".join(chr(0x10FFFF - ord(c)) for c in (node.created or ""))
