"""Structural checks (`check: {ast: PATTERN}`): the one home of ast-grep (`ast_grep_py`).

ast-grep parses a file with tree-sitter and matches a pattern written as code with metavariables
(`requests.get($$$)`, `eval($X)`), so a check can forbid a call without tripping on a comment, a
string or a name that merely contains it. It is an optional extra (`pip install 'stele[checks]'`,
~45 MB installed, 0.51 measured in docs/benchmarks.md) and is imported only here, only when a
structural check is evaluated: a hook for facts without one never loads it (tests/hooks/test_imports.py).

The language a pattern is read in is the check's `language:` or else the file's extension
(`EXTENSIONS`); both are checked against `LANGUAGES` before ast-grep sees them, since ast-grep
panics (a Rust panic, with a backtrace on stderr) on a name it does not know. What cannot be
evaluated (the library missing, a pattern ast-grep rejects, a file too large) is a `CheckError`:
the fact's problem, never a violation.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

EXTRA = "pip install 'stele[checks]'"
MAX_BYTES = 1_000_000  # a file larger than this is not parsed (generated code, a vendored bundle)
# ast-grep's built-in languages (0.51), by the name a check may give
LANGUAGES = frozenset({
    "bash", "c", "cpp", "csharp", "css", "elixir", "go", "haskell", "hcl", "html", "java", "javascript",
    "json", "kotlin", "lua", "nix", "php", "python", "ruby", "rust", "scala", "solidity", "swift", "tsx",
    "typescript", "yaml",
})
EXTENSIONS = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "cjs": "javascript",
    "jsx": "javascript", "ts": "typescript", "mts": "typescript", "cts": "typescript", "tsx": "tsx",
    "go": "go", "rs": "rust", "java": "java", "kt": "kotlin", "kts": "kotlin", "rb": "ruby", "c": "c",
    "h": "c", "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "cs": "csharp",
    "php": "php", "swift": "swift", "scala": "scala", "lua": "lua", "sh": "bash", "bash": "bash",
    "ex": "elixir", "exs": "elixir", "hs": "haskell", "html": "html", "htm": "html", "css": "css",
    "json": "json", "yaml": "yaml", "yml": "yaml", "tf": "hcl", "hcl": "hcl", "nix": "nix", "sol": "solidity",
}


class StructuralError(Exception):
    """The structural check could not be evaluated (codecheck turns it into a CheckError)."""


def language_of(path: str, given: str = "") -> str | None:
    """The language `path` is parsed in: `given` when set, else by its extension; None when unknown."""
    if given:
        return given if given in LANGUAGES else None
    ext = path.rsplit("/", 1)[-1].rsplit(".", 1)
    return EXTENSIONS.get(ext[1].lower()) if len(ext) == 2 else None


def _module() -> Any:
    try:
        import ast_grep_py
    except ImportError:
        raise StructuralError(f"needs ast-grep, an optional extra: {EXTRA}") from None
    return ast_grep_py


def matches(pattern: str, language: str, text: str, lines: Iterable[int]) -> list[tuple[int, str]]:
    """(first line, first line's text) of each match of `pattern` in `text` that covers one of `lines`
    (1-based): a structure the change added to, not one it only sits beside."""
    wanted = set(lines)
    if not wanted:
        return []
    if len(text.encode("utf-8", "replace")) > MAX_BYTES:
        raise StructuralError(f"skipped a file over {MAX_BYTES // 1_000_000} MB")
    grep = _module()
    try:
        found = grep.SgRoot(text, language).root().find_all(pattern=pattern)
    except Exception as e:  # ast-grep's own message is a multi-line report: its first line says it
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise StructuralError(f"is not a pattern ast-grep can use in {language} ({first})") from None
    out = []
    source = text.split("\n")
    for node in found:
        span = node.range()
        start, end = span.start.line + 1, span.end.line + 1
        if any(n in wanted for n in range(start, end + 1)):
            out.append((start, source[start - 1] if start <= len(source) else node.text()))
    return out
