"""Fingerprints: what an anchored symbol or file is, so it can be found again after a rename or a move.

An anchor names code by where it is (`src/shop.py::checkout`); when the code is renamed or moved, the
name stops resolving but the code is still there. A fingerprint is a short hash of the code's
normalized content, recorded on the fact when it is written or verified: doctor looks for a definition
(or a file) with the same fingerprint and proposes that as the new anchor.

Normalized means what a rename or a move does not change:
- Python: the definition's syntax tree without positions, with its own name (and every use of it
  inside, e.g. a recursive call) replaced by a placeholder; comments, blank lines and formatting do
  not count. A docstring or a decorator does.
- Other languages: the definition's text (the lines `symbols.find` gives) with whitespace removed and
  the name replaced by a placeholder.
- A file: its text with whitespace removed.

Pure functions, text in and hashes out, like `symbols.py`; which files to search is the caller's
business (`doctor/anchorcheck.py`, which knows git).
"""
from __future__ import annotations

import ast
import copy
import hashlib
import re
from collections.abc import Callable
from functools import lru_cache

from . import patterns as pat
from . import symbols
from .paths import split

LENGTH = 16  # hex characters: 64 bits, ample for the definitions of one repository
_SPACE = re.compile(r"\s+")
PLACEHOLDER = "\x00name\x00"


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:LENGTH]


def of_file(text: str) -> str:
    return _hash(_SPACE.sub("", text))


def of_symbol(text: str, symbol: str, path: str) -> str | None:
    """The fingerprint of `symbol` as defined in `text` (a file at `path`); None when it is not there."""
    if symbols.language(path) == "python":
        nodes = _python_nodes(text)
        if nodes is not None:
            node = nodes.get(symbol)
            return _python_print(node, symbol.rsplit(".", 1)[-1]) if node is not None else None
    span = symbols.find(text, symbol, path)
    return _text_print(text, span, symbol.rsplit(".", 1)[-1]) if span else None


def of_anchor(anchor: str, read: Callable[[str], str | None]) -> str | None:
    """The fingerprint of what `anchor` names now, reading files with `read(path) -> text | None`;
    None for a glob or when the anchor does not resolve."""
    path, symbol = split(anchor)
    if any(c in path for c in "*?["):
        return None
    text = read(path)
    if text is None:
        return None
    return of_symbol(text, symbol, path) if symbol else of_file(text)


def definitions(text: str, path: str) -> dict[str, str]:
    """qualified name -> fingerprint, for every definition in a file this module can list (Python:
    classes, functions, methods and constants; other languages: top-level definitions and the members
    inside them)."""
    lang = symbols.language(path)
    if lang == "python":
        nodes = _python_nodes(text)
        if nodes is not None:
            return {q: _python_print(n, q.rsplit(".", 1)[-1]) for q, n in nodes.items()}
        lang = "python-text"
    if lang is None:
        return {}
    return _pattern_definitions(text, path, lang)


# --- Python ----------------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _python_nodes(text: str) -> dict[str, ast.AST] | None:
    """qualified name -> the node defining it (first definition wins, as in `symbols`); None when the
    file does not parse. Cached by text; treat the result as read-only."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, ast.AST] = {}
    _collect(tree.body, "", found)
    return found


_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ())


def _collect(body: list[ast.stmt], prefix: str, found: dict[str, ast.AST]) -> None:
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(prefix + node.name, node)
            _collect(node.body, prefix + node.name + ".", found)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        found.setdefault(prefix + leaf.id, node)
        elif isinstance(node, _BLOCKS):
            for part in ("body", "orelse", "finalbody"):
                _collect(getattr(node, part, []), prefix, found)
            for handler in getattr(node, "handlers", []):
                _collect(handler.body, prefix, found)


def _python_print(node: ast.AST, name: str) -> str:
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        node = node.value if node.value is not None else node  # a constant is its value
    return _hash(ast.dump(_Renamer(name).visit(_copy(node)), annotate_fields=False, include_attributes=False))


def _copy(node: ast.AST) -> ast.AST:
    return copy.deepcopy(node)  # the cached tree stays as parsed


class _Renamer(ast.NodeTransformer):
    """The definition's own name, wherever it appears, becomes the placeholder."""

    def __init__(self, name: str) -> None:
        self.name = name

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("name", "id", "attr", "arg"):
            if getattr(node, field, None) == self.name:
                setattr(node, field, PLACEHOLDER)
        return super().generic_visit(node)


# --- pattern languages ---------------------------------------------------------------------------------

def _text_print(text: str, span: tuple[int, int], name: str) -> str:
    lines = text.splitlines()[span[0] - 1:span[1]]
    body = re.sub(rf"(?<![\w$]){re.escape(name)}(?![\w$])", PLACEHOLDER, "\n".join(lines))
    return _hash(_SPACE.sub("", body))


def _pattern_definitions(text: str, path: str, lang: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, qual in _names(text, path, lang):
        span = symbols.find(text, qual, path)  # an unparsable .py falls back to its text here too
        if span and qual not in found:
            found[qual] = _text_print(text, span, name)
    return found


def _names(text: str, path: str, lang: str) -> list[tuple[str, str]]:
    """(name, qualified name) of the top-level definitions and of the members inside each."""
    tops = sorted({(m.start(), m.group("name")) for p in pat.name_patterns(lang, False)
                   for m in p.rx.finditer(text)})
    members = sorted({(m.start(), m.group("name")) for p in pat.name_patterns(lang, True)
                      for m in p.rx.finditer(text)})
    source = symbols._Source(text)
    out: list[tuple[str, str]] = []
    owners = []
    for _, name in tops:
        out.append((name, name))
        span = symbols.find(text, name, path)
        if span:
            owners.append((span, name))
    for start, name in members:
        line = source.line(start)
        owner = next((o for (lo, hi), o in owners if lo < line <= hi), None)
        if owner is not None and owner != name:
            out.append((name, f"{owner}.{name}"))
    return out
