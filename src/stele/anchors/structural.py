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

ast-grep cannot be stopped once it has started: parsing a file and matching a pattern over it is one
call into Rust, which a signal interrupts only after it returns (0.25-0.9 s for 1 MB here, by the
pattern and the shape of the code). So a match is in two steps: `find` (parse and match, not
stoppable: the caller asks `cost` first and does not start what its time cannot cover) and
`covering` (where each match is, in Python, stoppable: on a long line each position costs a scan of
the line, 5 s for a 100 KB line of nested brackets and `$X`).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

EXTRA = "pip install 'stele[checks]'"
MAX_BYTES = 1_000_000  # a file larger than this is not parsed (generated code, a vendored bundle)
SECONDS_PER_MB = 1.0  # what `find` may take: measured 0.25-0.9 s a MB (docs/benchmarks.md), rounded up
SAMPLE = 100_000  # bytes: the least a file's size counts for in `rate`
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


def cost(size: int, rate: float = 0.0) -> float:
    """Seconds `find` is expected to take, without a stop, over a file of `size` bytes: SECONDS_PER_MB,
    or `rate` where it is higher (`rate`: what matches took in this run: a busy machine is slower).
    Asked before `find`: StructuralError for a file over MAX_BYTES, which is not parsed at all."""
    if size > MAX_BYTES:
        raise StructuralError(f"skipped a file over {MAX_BYTES // 1_000_000} MB")
    return size / 1e6 * max(SECONDS_PER_MB, rate)


def rate(size: int, seconds: float) -> float:
    """Seconds per MB that `find` took over `size` bytes in `seconds` (a file under SAMPLE bytes counts
    as SAMPLE: its time is mostly fixed costs, which say nothing of a large file)."""
    return seconds / max(size, SAMPLE) * 1e6


def module() -> Any:
    """ast-grep, imported (StructuralError when the extra is not installed)."""
    try:
        import ast_grep_py
    except ImportError:
        raise StructuralError(f"needs ast-grep, an optional extra: {EXTRA}") from None
    return ast_grep_py


def find(pattern: str, language: str, text: str) -> list[Any]:
    """Every match of `pattern` in `text`: one call that cannot be stopped (see `cost`)."""
    grep = module()
    try:
        return list(grep.SgRoot(text, language).root().find_all(pattern=pattern))
    except Exception as e:  # ast-grep's own message is a multi-line report: its first line says it
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise StructuralError(f"is not a pattern ast-grep can use in {language} ({first})") from None


def covering(found: list[Any], text: str, lines: Iterable[int]) -> list[tuple[int, str]]:
    """(first line, first line's text) of each of `find`'s matches in `text` that covers one of `lines`
    (1-based): a structure the change added to, not one it only sits beside. Python throughout, so a
    time limit stops it."""
    from bisect import bisect_left

    wanted = sorted(set(lines))
    out = []
    source = text.split("\n")
    for node in found:
        span = node.range()
        start, end = span.start.line + 1, span.end.line + 1
        at = bisect_left(wanted, start)  # the first wanted line from `start` on: inside when not past `end`
        if at < len(wanted) and wanted[at] <= end:
            out.append((start, source[start - 1] if start <= len(source) else node.text()))
    return out
