"""What the record covers: a compact table of contents for the session start.

An agent cannot search for what it does not know exists, and the prompt hook brings only what a
prompt matches. So the session start lists the record's titles, grouped by kind (the weightiest kinds
first), each with the area of the code it is anchored to, the most linked and then the newest first,
within a byte budget (`BUDGET`, ~4 KB); what does not fit is counted per kind. Standing rules are left
out (the session start shows them whole) and so are tasks (listed as open tasks) and anything a
lifecycle rule withholds. The text depends only on the record: the same record gives the same bytes
in every session, so a harness's prompt cache keeps it until the record changes.

Building it reads every committed item (~100 ms at 10,000 facts), so the index keeps it: an update that
adds or removes a committed item clears `META_KEY`, the end of a complete update writes it again
(`keep`), and a session start reads it (`cached`), building it in memory only on a day the stored one
was not made for (an expiry or a review date may have passed since).
"""
from __future__ import annotations

from .. import textcut
from ..kinds import KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalog import Catalog

BUDGET = 4096  # characters of the whole table
META_KEY = "contents"  # the catalog's meta key holding the table kept by the last update
MORE = "\n(more: `stele list`)"
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
    from ..delivery import today
    from ..kinds import CLOSED_STATUSES

    groups: dict[str, list[tuple[str, str, str, int, str]]] = {}
    for row in catalog.table_of_contents(today().isoformat(), CLOSED_STATUSES, SKIPPED_KINDS):
        groups.setdefault(row[1], []).append(row)
    if not groups:
        return ""
    kinds = sorted(groups, key=lambda k: (-(KINDS[k].weight if k in KINDS else 0), k))
    lines, used = [HEAD], len(HEAD) + 1
    for kind in kinds:
        items = groups[kind]
        head = f"{kind} ({len(items)}):"
        first = _line(items[0])
        if used + len(head) + len(first) + 2 > budget - RESERVE:
            rest = sum(len(groups[k]) for k in kinds[kinds.index(kind):])
            lines.append(f"({rest} more in other kinds: `stele list`)")
            break
        lines.append(head)
        used += len(head) + 1
        shown = 0
        for item in items:
            line = _line(item)
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


def _line(item: tuple[str, str, str, int, str]) -> str:
    item_id, _, title, _, path = item
    return f"  {item_id} {textcut.one_line(title, TITLE_CHARS)}" + (f" [{area(path)}]" if path else "")


def keep(catalog: Catalog) -> None:
    """Store today's table in the catalog (the caller commits), unless an update already did."""
    import json

    from ..delivery import today

    if not catalog.meta(META_KEY):
        catalog.set_meta(**{META_KEY: json.dumps({"on": today().isoformat(), "text": table(catalog)})})


def cached(catalog: Catalog, budget: int = BUDGET) -> str:
    """The table, as the index kept it when it was made today, else built now; cut at a line to
    `budget` characters."""
    import json

    from ..delivery import today

    try:
        kept = json.loads(catalog.meta(META_KEY) or "{}")
    except ValueError:
        kept = {}
    text = kept.get("text") if kept.get("on") == today().isoformat() else None
    if not isinstance(text, str):
        text = table(catalog)
    return text if len(text) <= budget else textcut.lines(text, budget, MORE)
