"""Symbols: where `path::Name` or `path::Class.method` is defined in a file's text, as a line range.

Python is parsed with `ast` (exact, decorators included). JavaScript, TypeScript, Go, Rust, Java and
Ruby use a definition pattern per language (`patterns.py`) and find the end by matching braces
(or `end` for Ruby): no parser to install, good enough to tell whether a diff hunk touched a function.
Terraform and other HCL files resolve block addresses (`resource.TYPE.NAME`, `TYPE.NAME`,
`data.TYPE.NAME`, `module.NAME`, `variable.NAME`, `output.NAME`, `local.NAME`, or a bare NAME for the
first block with that last label, a module first) to the block's braces, and never fall back to a word: `main.tf::eks`
once resolved to a `tags = ["eks"]` line 200 lines above `module "eks"`. Any other file falls back to
the first whole-word occurrence of the name (`by_words` says when, so doctor can report it). Everything here is pure:
text in, 1-based inclusive `(start, end)` lines out, so the same code resolves the working tree, the
index and any commit.
"""
from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import PurePosixPath

from . import patterns as pat

Span = tuple[int, int]

LANGUAGES = {
    ".py": "python", ".pyi": "python",
    ".js": "js", ".jsx": "js", ".mjs": "js", ".cjs": "js",
    ".ts": "ts", ".tsx": "ts", ".mts": "ts", ".cts": "ts",
    ".go": "go", ".rs": "rust", ".java": "java", ".rb": "ruby", ".rake": "ruby",
    ".tf": "hcl", ".tofu": "hcl", ".hcl": "hcl",
}


def language(path: str) -> str | None:
    return LANGUAGES.get(PurePosixPath(path).suffix.lower())


def by_words(path: str) -> bool:
    """Does a symbol in this file resolve only by the first whole word of its name (no definition rule
    for the language)? Such an anchor may name a mention, not a definition."""
    return language(path) is None


def find(text: str, symbol: str, path: str) -> Span | None:
    """The lines of `symbol` (`Name` or `Outer.inner`) in `text`, a file at `path`; None when absent."""
    lang = language(path)
    if lang == "hcl":
        return _hcl_find(text, symbol)
    if lang == "python":
        defs = python_definitions(text)
        if defs is not None:
            return defs.get(symbol)
        return _find_nested(_Source(text), symbol.split("."), "python-text")
    if lang is None:
        return _text_search(text, symbol.split("."))
    return _find_nested(_Source(text), symbol.split("."), lang)


# --- Python ----------------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def python_definitions(text: str) -> dict[str, Span] | None:
    """Every class, function, method and module or class constant by qualified name (first definition
    wins); None when the file does not parse. Cached by text: a change usually asks about several
    symbols of one file. (Treat the result as read-only.)"""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, Span] = {}
    _collect(tree.body, "", found)
    return found


_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ())


def _collect(body: list[ast.stmt], prefix: str, found: dict[str, Span]) -> None:
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            name = prefix + node.name
            found.setdefault(name, (start, node.end_lineno or node.lineno))
            _collect(node.body, name + ".", found)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        found.setdefault(prefix + leaf.id, (node.lineno, node.end_lineno or node.lineno))
        elif isinstance(node, _BLOCKS):  # `if TYPE_CHECKING:`, `try: import ...`: same scope
            for part in ("body", "orelse", "finalbody"):
                _collect(getattr(node, part, []), prefix, found)
            for handler in getattr(node, "handlers", []):
                _collect(handler.body, prefix, found)


# --- pattern languages -------------------------------------------------------------------------------

class _Source:
    """Text with a line-number lookup by offset."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def span(self, start: int, end: int) -> Span:
        return self.line(start), self.line(max(start, end))


def _find_nested(src: _Source, parts: list[str], lang: str) -> Span | None:
    """Resolve `A.B.c` by finding A, then B inside A's body, then c inside B's."""
    if len(parts) == 2 and lang in ("go", "rust"):
        hit = _outside_member(src, parts[0], parts[1], lang)
        if hit is not None:
            return src.span(hit[0], hit[1])
    lo, hi, hit = 0, len(src.text), None
    for depth, name in enumerate(parts):
        hit = _first_definition(src, pat.definition_patterns(lang, name, depth > 0), lo, hi, lang)
        if hit is None and len(parts) == 1:  # `path::check` naming a method without its class
            hit = _first_definition(src, pat.definition_patterns(lang, name, True), lo, hi, lang)
        if hit is None:
            return None
        lo, hi = hit[2], hit[1] + 1  # the next part is looked for inside this one's body
    return src.span(hit[0], hit[1]) if hit else None


def _outside_member(src: _Source, owner: str, name: str, lang: str) -> tuple[int, int, int] | None:
    """Methods defined outside their type's body: a Go receiver, a Rust `impl` block."""
    if lang == "go":
        return _first_definition(src, pat.go_method(owner, name), 0, len(src.text), lang)
    for block in pat.impl_blocks(owner).finditer(src.text):
        end = _match_brace(src.text, block.end() - 1, len(src.text), lang)
        hit = _first_definition(src, pat.definition_patterns(lang, name, True), block.end(), end, lang)
        if hit is not None:
            return hit
    return None


def _first_definition(src: _Source, patterns: tuple[pat.Pattern, ...], lo: int, hi: int,
                      lang: str) -> tuple[int, int, int] | None:
    """The earliest definition any pattern finds in [lo, hi), as (start, end, end of its header)."""
    best = None
    for p in patterns:
        for m in p.rx.finditer(src.text, lo, hi):
            if best is not None and m.start() >= best[0]:
                break
            end = _definition_end(src.text, m.start(), m.end(), hi, lang, p.needs_body)
            if end is not None:
                best = (m.start(), end, m.end())
                break
    return best


def _definition_end(text: str, start: int, pos: int, hi: int, lang: str, needs_body: bool) -> int | None:
    if lang == "ruby":
        return _keyword_end(text, start, hi)
    if lang == "python-text":
        return _indent_end(text, start, hi)
    body = _body_start(text, pos, hi, lang)
    if body is not None and text[body] == "{":
        return _match_brace(text, body, hi, lang)
    if needs_body:
        return None
    if body is None:
        line_end = text.find("\n", pos, hi)
        return line_end if line_end != -1 else hi - 1
    return body


def _code(text: str, i: int, hi: int, lang: str) -> Iterator[tuple[int, str]]:
    """(offset, character) for each character of `text[i:hi]` outside comments and string literals:
    what every scan for brackets, braces and statement ends below walks over."""
    while i < hi:
        skip = _skip_literal(text, i, hi, lang)
        if skip != i:
            i = skip
            continue
        yield i, text[i]
        i += 1


def _body_start(text: str, pos: int, hi: int, lang: str) -> int | None:
    """Offset of the `{` opening the body, or of the `;`/newline ending a declaration without one."""
    depth = 0
    for i, c in _code(text, pos, hi, lang):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif (depth == 0 and c in "{;") or (depth == 0 and c == "\n" and _ends_statement(text, i, hi, lang)):
            return i
        elif depth == 0 and c == "=" and lang != "rust" and text[i + 1:i + 2] not in (">", "="):
            return _statement_end(text, i, hi, lang)
    return None


def _statement_end(text: str, pos: int, hi: int, lang: str) -> int:
    """After `=` in `const x = ...`: the `;` or line end at depth 0 (a `{` here is a value, not a body)."""
    depth = 0
    for i, c in _code(text, pos + 1, hi, lang):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return i
        elif depth == 0 and (c == ";" or (c == "\n" and _ends_statement(text, i, hi, lang))):
            return i
    return hi - 1


def _ends_statement(text: str, nl: int, hi: int, lang: str) -> bool:
    if lang in ("rust", "java"):
        return False  # these need `;` or `{`; signatures often span lines
    before = text[text.rfind("\n", 0, nl) + 1:nl].rstrip()
    if before.endswith(("=", "=>", ",", "(", ":", "?", "|", "&", "+", "-", "extends", "implements")):
        return False
    after = text[nl + 1:hi].lstrip()
    return not after.startswith(("{", ".", "=>", "?", ":", "|", "&"))


def _match_brace(text: str, open_at: int, hi: int, lang: str) -> int:
    depth = 0
    for i, c in _code(text, open_at, hi, lang):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
    return hi - 1


def _skip_literal(text: str, i: int, hi: int, lang: str) -> int:
    """If a comment or string starts at `i`, the offset just past it; else `i`."""
    c = text[i]
    if lang == "hcl" and c == "#":
        end = text.find("\n", i)
        return end if end != -1 else hi
    if lang == "hcl" and text.startswith("<<", i):  # a heredoc: up to the line holding only its marker
        m = re.match(r"<<-?([A-Za-z_]\w*)\n", text[i:i + 80])
        if m:
            close = re.compile(rf"^[ \t]*{m.group(1)}[ \t]*$", re.M).search(text, i + m.end())
            return close.end() if close else hi
    if c == "/" and text[i + 1:i + 2] == "/":
        end = text.find("\n", i)
        return end if end != -1 else hi
    if c == "/" and text[i + 1:i + 2] == "*":
        end = text.find("*/", i + 2)
        return end + 2 if end != -1 else hi
    if c == "'" and lang == "rust" and not re.match(r"'(?:\\.|[^\\'\n])'", text[i:i + 4]):
        return i  # a lifetime, not a char literal
    if c in "\"'" or (c == "`" and lang in ("js", "ts", "go")):
        j = i + 1
        while j < hi and text[j] != c:
            if text[j] == "\\" and c != "`":
                j += 1
            elif text[j] == "\n" and c != "`":
                return j  # an unterminated quote ends at the line, not the file
            j += 1
        return min(j + 1, hi)
    return i


def _keyword_end(text: str, start: int, hi: int) -> int:
    """Ruby: the `end` at the definition's own indentation (or the definition line when one-lined)."""
    line_end = text.find("\n", start)
    line_end = hi if line_end == -1 or line_end > hi else line_end
    first = text[start:line_end]
    if not re.match(r"\s*(?:def|class|module)\b", first):
        return line_end  # a constant
    if re.search(r"\bend\s*$", first) or re.match(r"\s*def\s+[\w.?!]+(\(.*?\))?\s*=", first):
        return line_end
    indent = len(first) - len(first.lstrip())
    for m in re.finditer(r"^([ \t]*)end\b.*$", text[line_end:hi], re.M):
        if len(m.group(1)) == indent:
            return line_end + m.end()
    return line_end


def _indent_end(text: str, start: int, hi: int) -> int:
    """Python without a parse: up to the next non-blank line indented no deeper than the definition."""
    line_end = text.find("\n", start)
    if line_end == -1 or line_end >= hi:
        return hi
    indent = len(text[start:line_end]) - len(text[start:line_end].lstrip())
    last = line_end
    for m in re.finditer(r"^([ \t]*)(\S.*)$", text[line_end + 1:hi], re.M):
        if len(m.group(1)) <= indent and not m.group(2).startswith(("#", ")", "]", "}")):
            break
        last = line_end + 1 + m.end()
    return last


# --- HCL (Terraform) ---------------------------------------------------------------------------------

_HCL_BLOCK = re.compile(r'^([A-Za-z_][\w-]*)((?:[ \t]+"[^"\n]*")*)[ \t]*\{', re.M)  # top level only
_HCL_TYPES = {"resource": "resource", "data": "data", "module": "module", "variable": "variable",
              "var": "variable", "output": "output", "provider": "provider"}


def _hcl_blocks(text: str) -> Iterator[tuple[str, list[str], int, int]]:
    """(block type, labels, start offset, offset of its `{`) of every top-level block."""
    for m in _HCL_BLOCK.finditer(text):
        yield m.group(1), re.findall(r'"([^"]*)"', m.group(2)), m.start(), m.end() - 1


def _hcl_find(text: str, symbol: str) -> Span | None:
    parts = symbol.split(".")
    src = _Source(text)
    if parts[0] in ("local", "locals") and len(parts) == 2:
        for kind, _, _start, brace in _hcl_blocks(text):
            if kind == "locals":
                end = _match_brace(text, brace, len(text), "hcl")
                m = re.compile(rf"^[ \t]+{re.escape(parts[1])}[ \t]*=", re.M).search(text, brace, end)
                if m:
                    return src.span(m.start(), _statement_end(text, m.end() - 1, end, "hcl"))
        return None
    hits = [(kind, start, brace) for kind, labels, start, brace in _hcl_blocks(text)
            if _hcl_matches(kind, labels, parts)]
    if not hits:
        return None
    # a bare name: a module of that name first (resources are often all called `this` or `main`)
    _, start, brace = next((h for h in hits if h[0] == "module"), hits[0])
    return src.span(start, _match_brace(text, brace, len(text), "hcl"))


def _hcl_matches(kind: str, labels: list[str], parts: list[str]) -> bool:
    if parts[0] in _HCL_TYPES and len(parts) > 1:
        return kind == _HCL_TYPES[parts[0]] and labels == parts[1:]
    if len(parts) == 2:  # `aws_instance.web`: Terraform's own address of a resource
        return kind == "resource" and labels == parts
    return len(parts) == 1 and bool(labels) and labels[-1] == parts[0]


# --- unknown languages -------------------------------------------------------------------------------

def _text_search(text: str, parts: list[str]) -> Span | None:
    """The first whole-word occurrence of each part in turn; the span is the last part's line."""
    src, pos, hit = _Source(text), 0, None
    for name in parts:
        hit = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])").search(text, pos)
        if hit is None:
            return None
        pos = hit.end()
    if hit is None:  # no parts
        return None
    line = src.line(hit.start())
    return line, line
