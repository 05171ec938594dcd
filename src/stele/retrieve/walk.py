"""The walk: from the seeds, follow typed edges outward, in both directions.

The walk is what reaches facts that share no word with the prompt: the checkout decision is found by
search, the payment-retry risk it was caused by is found by the edge. Edges are read through a
`Store` (anything with `edges(ids) -> [(src, rel, dst)]` and `nodes(ids) -> {id: Node}`: the index
catalog, or a dict-backed graph in tests), batched one query per hop and cached per recall, because
the callout walks the same neighbourhood again.

Facts that must not be injected (ended, expired, overdue) are neither reached nor walked through.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from ..plain import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from ..index.catalog import Node


    class Store(Protocol):
        def edges(self, ids: Iterable[str]) -> list[tuple[str, str, str]]: ...
        def nodes(self, ids: Iterable[str]) -> dict[str, Node]: ...


@dataclass(frozen=True)
class Via:
    """How a node was reached: from which node, along which relation, how many hops from a seed."""
    from_id: str
    rel: str
    hops: int
    incoming: bool = False  # the edge points at the node we came from (followed against its direction)
    seed: str = ""          # the seed the path started from

    def as_dict(self) -> dict[str, Any]:
        return {"from": self.from_id, "rel": self.rel, "hops": self.hops}


class Neighbourhood:
    """Edges and nodes read from a store once per recall, filtered by `usable(node)`."""

    def __init__(self, store: Store, usable: Callable[[Node], bool]) -> None:
        self.store = store
        self.usable = usable
        self._adj: dict[str, list[tuple[str, str, bool]]] = {}
        self.nodes: dict[str, Node] = {}  # loaded so far (`nodes.get(id)` is None for an unknown id)
        self._absent: set[str] = set()    # asked for and not in the store: not asked for again

    def load_nodes(self, ids: Iterable[str]) -> None:
        missing = [i for i in dict.fromkeys(ids) if i not in self.nodes and i not in self._absent]
        if missing:
            found = self.store.nodes(missing)
            for i in missing:
                if i in found:
                    self.nodes[i] = found[i]
                else:
                    self._absent.add(i)

    def ok(self, node_id: str) -> bool:
        node = self.nodes.get(node_id)
        return node is not None and self.usable(node)

    def around(self, ids: Iterable[str]) -> dict[str, list[tuple[str, str, bool]]]:
        """node -> [(neighbour, relation, edge points at this node)] for usable neighbours."""
        ids = list(dict.fromkeys(ids))
        missing = [i for i in ids if i not in self._adj]
        if missing:
            for i in missing:
                self._adj[i] = []
            want = set(missing)
            for src, rel, dst in self.store.edges(missing):
                if src in want:
                    self._adj[src].append((dst, rel, False))
                if dst in want:
                    self._adj[dst].append((src, rel, True))
            self.load_nodes(n for i in missing for n, _, _ in self._adj[i])
        return {i: [(n, rel, inc) for n, rel, inc in self._adj[i] if n != i and self.ok(n)] for i in ids}


def walk(seeds: list[str], hood: Neighbourhood, depth: int, deadline: float | None = None,
         still: Iterable[str] = ()) -> tuple[dict[str, list[Via]], bool]:
    """Every usable node within `depth` hops of a seed with each way it was reached at its shortest
    distance (a seed appears when another seed reaches it); and whether the deadline cut the walk short.
    `still` are seeds that bring no new node (support of a stronger match): their edges to other seeds
    count (two linked matches back each other up), nothing else is reached from them."""
    reached: dict[str, list[Via]] = {}
    quiet = set(still)
    seed_set = set(seeds) | quiet
    hood.load_nodes(seed_set)
    frontier = [s for s in [*seeds, *still] if hood.ok(s)]
    for hop in range(1, max(0, depth) + 1):
        if not frontier:
            break
        if deadline is not None and time.monotonic() > deadline:
            return reached, True
        nxt: list[str] = []
        for node, links in hood.around(frontier).items():
            origin = node if node in seed_set else reached[node][0].seed
            for other, rel, incoming in links:
                if node in quiet and other not in seed_set:
                    continue
                if other in reached and reached[other][0].hops < hop:
                    continue  # already reached closer
                if other not in reached and other not in seed_set:
                    nxt.append(other)  # a seed reached from another seed is noted, not walked again
                reached.setdefault(other, []).append(Via(node, rel, hop, incoming, origin))
        frontier = nxt
    return reached, False
