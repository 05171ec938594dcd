"""YAML that no reader could walk: alias bombs and deep nesting, found before anything walks them.

Aliases share one node, so thirty lines of `&b {x: *a, y: *a}` stand for a billion values, and a chain
of them nests a thousand levels deep in a few lines; every reader that walks the values (line numbers,
checks, redaction, error messages quoting a value, JSON) would take hours or overflow Python's stack.
Fact files and `.stele/config.yaml` arrive in pull requests, so both loaders ask this module first.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ALIAS_EXPANSION = 10_000  # values that aliases may add to a document once it is read as a tree
MAX_DEPTH = 50  # levels of nesting: a fact needs three (`links:`, a relation, its ids), the config three


def _children(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def unreadable(root: Any) -> tuple[int, str] | None:
    """(the 0-based line of the top-level key where it starts, "`key` what is wrong") for a mapping no
    reader could walk, or None. Measured without recursion, each distinct node once (a node inside itself, `&a [*a]`,
    counts once): the values aliases add past `ALIAS_EXPANSION`, and depth past `MAX_DEPTH`."""
    import yaml

    measured: dict[int, tuple[int, int]] = {}  # node -> (values once expanded, capped; depth)
    entered: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finish = stack.pop()
        if finish:  # every child is measured by now, or is an ancestor of this node
            kids = [measured.get(id(c), (1, 1)) for c in _children(node)]
            measured[id(node)] = (min(1 + sum(k[0] for k in kids), 2 * ALIAS_EXPANSION),
                                  1 + max((k[1] for k in kids), default=0))
        elif id(node) not in entered:
            entered.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in _children(node))
    if not isinstance(root, yaml.MappingNode):
        return None  # the loader says what its document must be
    expanded = 0
    for key_node, value_node in root.value:
        size, depth = measured[id(value_node)]
        expanded += size
        if depth > MAX_DEPTH:
            why = f"nests more than {MAX_DEPTH} levels deep: write its values as text, lists and mappings a few levels deep"
        elif expanded > len(measured) + ALIAS_EXPANSION:
            why = (f"is expanded past {ALIAS_EXPANSION:,} values by YAML aliases (`*name`): write the values out "
                   "instead of repeating anchors")
        else:
            continue
        name = f"`{key_node.value}`" if isinstance(key_node, yaml.ScalarNode) else "a key"
        return key_node.start_mark.line, f"{name} {why}"
    return None
