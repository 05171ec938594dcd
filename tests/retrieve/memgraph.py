"""An in-memory graph with the `Store` interface of the index catalog, for tests of the pure parts."""
from __future__ import annotations

from stele.index.catalog import Node


class MemStore:
    def __init__(self, nodes: dict[str, str | Node], edges: list[tuple[str, str, str]]) -> None:
        # nodes: id -> kind (a current committed fact) or a full Node
        self._nodes = {i: n if isinstance(n, Node) else Node(i, "committed", n, f"title of {i}", "current")
                       for i, n in nodes.items()}
        self._edges = list(edges)
        self.edge_queries = 0

    def nodes(self, ids):
        return {i: self._nodes[i] for i in ids if i in self._nodes}

    def edges(self, ids):
        self.edge_queries += 1
        ids = set(ids)
        return [e for e in self._edges if e[0] in ids or e[2] in ids]
