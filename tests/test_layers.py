"""The floor plan holds: imports run only down the layers of docs/architecture.md, and no module
imports itself back through another (lazy imports inside functions count too: a cycle is a cycle)."""
from __future__ import annotations

import ast
from pathlib import Path

import stele

PACKAGE = Path(stele.__file__).parent
# Lowest first. A module may import its own layer's modules and any layer below, never one above.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "kinds", "ids", "config", "project", "redact", "redact_rules", "neutralize", "lifecycle", "gitrepo",
     "atomic", "textcut"),
    ("anchors",),
    ("record",),
    ("session",),
    ("tasks",),
    ("index",),
    ("retrieve",),
    ("snapshot",),
    ("doctor",),
    ("render",),
    ("install",),
    ("hooks",),
    ("serve",),
    ("cli",),
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "examples" in path.relative_to(PACKAGE).parts:  # the demo's example project, not Stele
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                out.add(sub if sub in known else mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m in known and m != name}


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def area(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_module_has_a_layer():
    unplaced = sorted({area(m) for m in graph() if area(m) and area(m) not in RANK
                       and area(m) not in ("__main__",)})
    assert unplaced == [], f"add these to LAYERS (and to docs/architecture.md): {unplaced}"


def test_imports_only_run_down_the_layers():
    upward = []
    for module, targets in graph().items():
        if area(module) in ("", "__main__"):
            continue
        for target in targets:
            if area(target) and RANK[area(target)] > RANK[area(module)]:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_no_import_cycles():
    g = graph()
    cycles, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(g[node]):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [node, nxt]) if nxt in stack
                              else f"{node} -> {nxt}")
            elif nxt not in state:
                visit(nxt, stack + [node])
        state[node] = "done"

    for node in sorted(g):
        if node not in state:
            visit(node, [])
    assert cycles == []
