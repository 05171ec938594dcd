"""The committed facts the session-start and edit hooks need, looked up in the index's catalog:
standing rules, open tasks, and the facts anchored to a file.

Reading them from the catalog (SQLite, indexed by anchor path) instead of parsing every fact file
keeps these hooks fast on large records: parsing 10,000 fact files takes seconds, the lookups take
milliseconds. Only current, unexpired facts that are not overdue for review are pushed at an agent
(DESIGN.md section 2); `stele show` and search still find the rest. Ordering is fixed (priority,
then weight, then id) so the same record always gives the same text.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

from ..delivery import anchored_order
from ..errors import say
from ..project import Project
from ..render.facts import Line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from ..index.catalog import Catalog, Node
    from ..index.handle import Index

OPEN_TASK_STATUSES = ("in-progress", "blocked", "open")


class _AsIs:
    """The catalog as the last refresh left it, without the freshness scan (a stat of every source
    file: the larger part of an edit hook's time on a 10,000-fact record). The prompt hook refreshes the
    index on every prompt, so an edit sees the record as of the turn's start at worst."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def __enter__(self) -> _AsIs:
        return self

    def __exit__(self, *exc) -> None:
        self.catalog.close()


if TYPE_CHECKING:
    class Opened(Protocol):
        """What the lookups below read: an open `Index`, or the catalog taken as it is."""
        catalog: Catalog


def open_index(project: Project, fresh: bool = True) -> Index | _AsIs:
    """Something with a `.catalog`, to use in a `with` block: the index refreshed from every source
    file first, its first warning (rebuilt, unreadable) the hook's one stderr line. `fresh=False` takes
    the catalog as it is when there is a readable one, and refreshes (or builds) the index only when
    there is not."""
    from ..index.build import open_index as open_
    from ..index.handle import open_catalog

    if not fresh:
        try:
            return _AsIs(open_catalog(project))
        except Exception:
            pass  # missing, unfinished or outdated: refresh (or build) it below
    budget = int(project.config["retrieval.hook_budget_ms"]) / 1000
    return open_(project, deadline=time.monotonic() + budget, warn=_first_warning())


def _first_warning() -> Callable[[str], None]:
    said: list[str] = []

    def warn(line: str) -> None:
        if not said:
            said.append(line)
            say(line)

    return warn


def _pushable(nodes: Iterable[Node]) -> list[Node]:
    from ..delivery import today, withheld

    on = today()
    return [n for n in nodes if n.source == "committed" and withheld(n, on) is None]


def always(index: Opened) -> Iterator[Line]:
    """The standing rules (`delivery.standing_rules`, as `stele context` gives them), whole, in
    order. SQLite orders them by `rule_order`'s parts and `is_standing_rule` picks them as they come,
    each read (and its body) only when taken: a hook stops once its answer is full."""
    from ..delivery import is_standing_rule, today
    from ..kinds import KINDS, PRIORITIES, priority_rank

    on = today()
    weights = {name: kind.weight for name, kind in KINDS.items()}
    for n in index.catalog.ranked_committed("delivery", "always", PRIORITIES, priority_rank(None), weights):
        if is_standing_rule(n, on):
            yield Line(n.id, n.kind, n.title, n.status, index.catalog.body(n.id))


def always_from_files(project: Project) -> list[Line]:
    """The standing rules read from the fact files, for a session that starts before any index exists
    (a fresh clone of a 10,000-fact record builds for longer than a hook may wait): only the files
    whose text can hold one (`delivery: always`, or an instruction or constraint) are parsed."""
    from ..delivery import standing_rules, today
    from ..record.load import parse_fact, read_files

    facts = []
    for file in read_files(project):  # the loader's files: not a link out of the repository, nor to /dev/zero
        text = file.text
        if text is None or ("delivery: always" not in text and "kind: instruction" not in text
                            and "kind: constraint" not in text):
            continue
        fact, _ = parse_fact(text, file.rel)
        if fact is not None:
            facts.append(fact)
    return [Line(f.id, f.kind, f.title, f.status, f.body) for f in standing_rules(facts, today())]


def fact_files(project: Project) -> int:
    return sum(1 for _ in project.memory_dir.rglob("*.md")) if project.memory_dir.is_dir() else 0


def has_index(project: Project) -> bool:
    from ..index.handle import open_catalog

    try:
        open_catalog(project).close()
    except Exception:
        return False
    return True


def open_tasks(index: Opened, project: Project, limit: int) -> tuple[list[Line], int]:
    """The first `limit` tasks not done or cancelled, each with who holds a live claim on it, and how
    many there are: the ones claimed by this agent (`stele task list --mine`'s identity) first, then in
    progress, blocked, open, then by `rule_order`. SQLite sorts them and reads only the rows shown."""
    from ..clock import utcnow
    from ..kinds import PRIORITIES, priority_rank
    from ..tasks.claims import Identity, known_claims

    held = {tid: c for tid, c in known_claims(project).items() if c.live(utcnow())}
    me = Identity.current()
    mine = {tid for tid, c in held.items() if me.matches(c)}
    # rule_order for tasks alike: priority, then id (the kind's weight is the same for all of them)
    tasks, total = index.catalog.ranked_tasks(OPEN_TASK_STATUSES, PRIORITIES, priority_rank(None), mine, limit)
    out = []
    for n in tasks:
        status = n.status if n.status != "open" else ""
        if n.id in held:
            who = "you" if n.id in mine else held[n.id].holder.agent
            status = f"{status}, claimed by {who}" if status else f"claimed by {who}"
        out.append(Line(n.id, n.kind, n.title, status))
    return out, total


def anchored(index: Opened, paths: Iterable[str],
             touches: Callable[[str, str], bool] | None = None, project: Project | None = None) -> list[Line]:
    """Pushable facts with an anchor covering any of `paths` (repo-relative), in `anchored_order`
    (risks and constraints first, then by priority and weight). Tasks are left out: they are work,
    not knowledge about the file. `touches(path, symbol)` may rule out a symbol anchor (the edit is elsewhere in the file).
    With `project`, each carries its freshness (`retrieve/fresh.py`): `verified 12 days ago`, or how
    its anchored code changed since."""
    ids = {i for i, path, symbol, _ in index.catalog.anchored(list(paths))
           if symbol is None or touches is None or touches(path, symbol)}
    nodes = [n for n in _pushable(index.catalog.nodes(ids).values()) if n.kind != "task"]
    nodes.sort(key=anchored_order)
    notes = {}
    if project is not None and nodes:
        from ..delivery import today
        from ..retrieve.fresh import check

        notes = {i: f.label or "" for i, f in check(project, index.catalog, [n.id for n in nodes], today(), say).items()}
    return [Line(n.id, n.kind, n.title, n.status, n.excerpt or n.summary, notes.get(n.id, "")) for n in nodes]
