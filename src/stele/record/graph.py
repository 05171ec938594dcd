"""Typed edges between facts, walkable in both directions.

Declared links become edges as written; ids mentioned in a body become `mentions` edges (only to
facts that exist, and not where a declared edge already joins the same pair).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .model import Fact


@dataclass(frozen=True)
class Edge:
    src: str
    rel: str
    dst: str


class Graph:
    def __init__(self, edges: Iterable[Edge] = ()) -> None:
        self.out: dict[str, list[Edge]] = {}
        self.inc: dict[str, list[Edge]] = {}
        for e in edges:
            self.add(e)

    def add(self, edge: Edge) -> None:
        self.out.setdefault(edge.src, []).append(edge)
        self.inc.setdefault(edge.dst, []).append(edge)

    def neighbors(self, node: str) -> list[tuple[Edge, str]]:
        """Every edge touching `node`, with the node at its other end."""
        return [(e, e.dst) for e in self.out.get(node, ())] + [(e, e.src) for e in self.inc.get(node, ())]

    @classmethod
    def from_facts(cls, facts: dict[str, Fact]) -> Graph:
        return cls(e for f in facts.values() for e in edges_of(f, facts))


def edges_of(fact: Fact, known: dict[str, Fact] | set[str]) -> list[Edge]:
    """`Fact.edges`, with mentions only of facts in `known` (a body may name an id that does not exist)."""
    return [Edge(fact.id, rel, dst) for rel, dst in fact.edges() if rel != "mentions" or dst in known]
