"""Anchors that no longer resolve, and what git says happened to them.

`diagnose()` is shared with `--fix`: the message doctor prints and the repair `--fix` makes come from
the same reasoning (follow git renames; re-find a Python symbol by its name in the same file or its
renamed file), so doctor never promises a fix that `--fix` then does not make.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import gitrepo
from ..anchors import symbols
from ..anchors.paths import is_glob, literal_dir, split
from ..anchors.resolve import Tree, explain_missing, resolve
from ..kinds import CLOSED_STATUSES as CLOSED
from ..record.load import Record
from ..record.model import Fact
from .findings import Finding


@dataclass(frozen=True)
class Broken:
    anchor: str
    why: str  # what is wrong and what git says about it
    repair: str | None  # the anchor to write instead, when one is certain


def refind(path: str, symbol: str, tree: Tree) -> str | None:
    """A Python symbol's new qualified name: the one definition left with the same last name."""
    if symbols.language(path) != "python":
        return None
    text = tree.read(path)
    defs = symbols.python_definitions(text) if text is not None else None
    name = symbol.rsplit(".", 1)[-1]
    matches = [q for q in (defs or {}) if q.rsplit(".", 1)[-1] == name]
    return matches[0] if len(matches) == 1 else None


def diagnose(anchor: str, tree: Tree, renames: Callable[[], dict[str, tuple[str, str]]]) -> Broken | None:
    """None when `anchor` resolves; else why not, and the repair when git or the code makes it certain."""
    res = resolve(anchor, tree)
    if res.ok:
        return None
    path, symbol = split(anchor)
    if res.problem == "symbol gone" and symbol is not None:
        moved = refind(path, symbol, tree)
        if moved:
            return Broken(anchor, f"{symbol} is not defined in {path} any more, but {moved} is",
                          f"{path}::{moved}")
        return Broken(anchor, f"{symbol} is not defined in {path} any more", None)
    target = literal_dir(path) if is_glob(path) else path
    missing = "no file matches it" if is_glob(path) else f"{path} is gone"
    renamed = explain_missing(target, tree, renames()) if target else None
    if renamed is None:
        return Broken(anchor, f"{missing} and no git rename explains it", None)
    new_path, commit = renamed
    where = "in uncommitted changes" if commit == "uncommitted" else f"in {commit}"
    why = f"{missing}: git renamed {'it' if target == path else target} to {new_path} {where}"
    new_anchor = new_path + path[len(target):] + (f"::{symbol}" if symbol else "")
    if symbol and not resolve(new_anchor, tree).ok:
        again = refind(new_path + path[len(target):], symbol, tree)
        if again is None:
            return Broken(anchor, f"{why}, and {symbol} is not defined there", None)
        new_anchor = f"{new_path}{path[len(target):]}::{again}"
    return Broken(anchor, why, new_anchor) if resolve(new_anchor, tree).ok else Broken(anchor, why, None)


def broken_anchors(record: Record, tree: Tree) -> list[tuple[Fact, int, Broken]]:
    """(fact, index of the anchor, diagnosis) for every anchor of a live fact that does not resolve."""
    cache: dict[str, dict] = {}

    def renames() -> dict[str, tuple[str, str]]:
        if "r" not in cache:
            cache["r"] = gitrepo.renames(record.project.root)
        return cache["r"]

    # history (ended facts) describes the code as it was; by file, so each file is parsed once
    live = [f for f in record.facts.values() if f.status not in CLOSED]
    todo = sorted(((split(a)[0], f.id, i, f) for f in live for i, a in enumerate(f.anchors)),
                  key=lambda t: t[:3])
    found: list[tuple[Fact, int, Broken]] = []
    for _, _, i, fact in todo:
        broken = diagnose(fact.anchors[i], tree, renames)
        if broken is not None:
            found.append((fact, i, broken))
    return sorted(found, key=lambda t: (t[0].id, t[1]))


def check(record: Record, tree: Tree) -> list[Finding]:
    findings = []
    for fact, i, broken in broken_anchors(record, tree):
        hint = f"; `stele doctor --fix` rewrites it to {broken.repair}" if broken.repair else \
            "; point it at the code it is about, or retire the fact"
        line = fact.doc.line_of("anchors", i) if fact.doc else 1
        findings.append(Finding("broken-anchor", fact.path, line,
                                f"anchor {broken.anchor} no longer resolves: {broken.why}{hint}", fact.id))
    return findings
