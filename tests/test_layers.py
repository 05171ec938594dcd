"""The floor plan holds: imports run only down the layers of docs/architecture.md, and no module
imports itself back through another (lazy imports inside functions count too: a cycle is a cycle)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import stele

PACKAGE = Path(stele.__file__).parent
# Lowest first. A module may import its own layer's modules and any layer below, never one above.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "kinds", "ids", "config", "project", "redact", "redact_rules", "neutralize", "delivery", "gitrepo",
     "atomic", "textcut", "plain", "clock", "residency", "textform", "lazyre", "gitroot",
     "yamlshape", "treefile", "regexcheck", "procs"),
    ("anchors",),
    ("record",),
    ("session",),
    ("tasks",),
    ("index",),
    ("retrieve",),
    ("snapshot",),
    ("export",),
    ("doctor",),
    ("render",),
    ("install",),
    ("hooks",),
    ("agenteval",),
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
    """What `name` imports: import statements (lazy ones inside functions too) and module names written
    as strings (`"stele.hooks.prompt"`, `"hooks.prompt"` for `import_module(f"{__package__}...")` and
    the resident server's PRELOAD list): a module imported by name is imported all the same. Not a
    module run in a new process (`[sys.executable, "-m", "stele.index.build", ...]`): that is a
    process boundary, not an import."""
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    out = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    spawned = {id(b) for n in ast.walk(tree) if isinstance(n, (ast.List, ast.Tuple))
               for a, b in zip(n.elts, n.elts[1:], strict=False) if isinstance(a, ast.Constant) and a.value == "-m"}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.fullmatch(node.value)
                and id(node) not in spawned):
            out.add(node.value)
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                out.add(sub if sub in known else mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m in known and m != name}


_DOTTED = re.compile(r"stele(\.[a-z_]+)+")


def test_module_names_written_as_strings_count_as_imports(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('PRELOAD = ("stele.cli.fast", "json", "stele.cli")\nx = "stele.cli.fast is fast"\n'
                      'run([sys.executable, "-m", "stele.cli.fast"])\n')
    assert imports("stele.serve.sample", sample, {"stele.cli.fast", "stele.cli"}) == {"stele.cli.fast", "stele.cli"}


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


# A CLI command never writes a file itself: it calls the one library function that does (STYLE.md 10),
# so validation, redaction and atomicity cannot be skipped by a command that took a shortcut.
WRITING_METHODS = {"write_text", "write_bytes", "mkdir", "unlink", "rmdir", "rename", "touch", "symlink_to",
                   "hardlink_to"}
WRITING_MODULES = {"shutil", "tempfile"}
WRITING_OS = {"open", "remove", "unlink", "rename", "replace", "makedirs", "mkdir", "write", "rmdir"}
# Still writing, and who is moving it: remove the entry when the move lands (the test below says so).
STILL_WRITING: dict[str, str] = {}


def file_writes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # `edit.unlink(...)` on an imported module is a library call (removing an edge), not Path.unlink
    imported = {a.asname or a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names} - WRITING_MODULES - {"os"}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                found.append(f"line {node.lineno}: open(..., {mode.value!r})")
        elif isinstance(f, ast.Attribute):
            owner = f.value.id if isinstance(f.value, ast.Name) else ""
            if owner in imported:
                continue
            if f.attr in WRITING_METHODS or owner in WRITING_MODULES or (owner == "os" and f.attr in WRITING_OS):
                found.append(f"line {node.lineno}: {owner + '.' if owner else ''}{f.attr}()")
    return found


def cli_writes() -> dict[str, list[str]]:
    return {name: w for name, path in modules().items() if area(name) == "cli" and (w := file_writes(path))}


def test_cli_commands_never_write_files_themselves():
    writing = {name: w for name, w in cli_writes().items() if name not in STILL_WRITING}
    assert writing == {}, "call the library function that writes (atomic, record.edit, ...) instead"


def test_the_list_of_cli_modules_still_writing_is_not_stale():
    assert set(STILL_WRITING) <= set(cli_writes()), "it no longer writes files: take it off STILL_WRITING"


def test_the_write_detector_sees_what_it_should(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import os, shutil\nopen(p, 'a')\nopen(p)\np.write_text('x')\nshutil.copytree(a, b)\n"
                      "os.replace(a, b)\natomic.write(p, 'x')\n'a b'.replace(' ', '')\nfrom x import edit\n"
                      "edit.unlink(p, 'a', 'b')\n")
    assert file_writes(sample) == ["line 2: open(..., 'a')", "line 4: p.write_text()", "line 5: shutil.copytree()",
                                   "line 6: os.replace()"]


def test_the_architecture_page_draws_these_layers():
    """docs/architecture.md's layer drawing lists the same layers, in the same order, with the same
    ground-floor modules, as LAYERS."""
    page = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    drawing = page.split("## Layers", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    rows = [line.split() for line in drawing.strip().splitlines()]
    drawn = {int(row[0]): row[1:] for row in rows}
    assert sorted(drawn) == list(range(len(LAYERS)))
    assert tuple(drawn[0][1:]) == LAYERS[0] and drawn[0][0] == "ground"
    assert [drawn[i][0] for i in range(1, len(LAYERS))] == [names[0] for names in LAYERS[1:]]
