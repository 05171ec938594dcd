"""The gate: what a prompt names, and whether it is worth retrieving for at all.

A prompt under `min_prompt_chars` injects nothing: "ok", "keep going" and "fix retries" carry too
little signal, and a guess injected into a short turn derails the agent. Naming an id (`TASK-418`)
or editing a file bypasses the gate, because both say exactly what the turn is about. In a long
prompt, file paths it names (`src/auth/middleware.py`, `retry.py`) also become anchor queries.

A prompt longer than `ANALYSIS_CHARS` is searched by its beginning and its end only (a pasted log with
the question before or after it): analysing, expanding and embedding megabytes would spend the hook's
whole budget and find nothing better. Ids and paths are still taken from all of it, by two linear scans.
"""
from __future__ import annotations

import re

from .. import textcut
from ..anchors.paths import normalize
from ..ids import mentioned_ids
from ..plain import dataclass, field

ANALYSIS_CHARS = 4000  # of a prompt, searched: the first and the last half of it
DISTILL_CHARS = 4 * ANALYSIS_CHARS  # of a prompt, read for its problem lines (`distill`) before that cut
MAX_NAMED_PATHS = 100  # path-like tokens of one prompt taken as anchor queries (a paste may hold thousands)

# A path-like token: has a slash, or ends in a short extension (retry.py, CheckoutForm.tsx). The
# possessive runs never give back what they matched (none can hold the `/` or `.` that follows), which
# keeps a scan of a multi-megabyte paste linear.
_PATH = re.compile(r"(?<![\w@/.-])((?:[\w.-]++/)++[\w.-]*\w"            # has a slash
                   r"|[\w-]++(?:\.[\w-]++)*\.[A-Za-z][A-Za-z0-9]{0,6})"   # or ends in an extension
                   r"(?![\w/])")
# Extensions a file named without a folder must have: `Cart.total` and `psycopg.errors` are names in
# code, not files (they are identifiers, below).
EXTENSIONS = frozenset({"py", "pyi", "go", "rs", "ts", "tsx", "js", "jsx", "mjs", "cjs", "java", "kt",
    "kts", "scala", "rb", "php", "c", "h", "cc", "cpp", "cxx", "hpp", "cs", "fs", "swift", "m", "mm",
    "dart", "lua", "pl", "r", "jl", "ex", "exs", "erl", "hs", "ml", "clj", "elm", "vue", "svelte", "md",
    "mdx", "rst", "txt", "adoc", "yaml", "yml", "json", "jsonc", "toml", "ini", "cfg", "conf", "env",
    "properties", "xml", "html", "htm", "css", "scss", "sass", "less", "sql", "graphql", "gql", "proto",
    "thrift", "avsc", "sh", "bash", "zsh", "fish", "ps1", "bat", "tf", "tfvars", "hcl", "nix", "gradle",
    "lock", "mk", "cmake", "bzl", "dockerfile", "containerfile", "csv", "tsv", "ipynb", "tex"})
# An identifier: a compound name in code (snake_case, camelCase, a dotted or `::` path of names, a call).
_IDENT = re.compile(r"`([^`\n]{3,80})`|(?<![\w.:/-])([A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_][\w]*)*)(?:\(\))?(?![\w/])")
_COMPOUND = re.compile(r"_|[a-z][A-Z]|[A-Z][A-Z][a-z]|\.|::")
MAX_IDENTIFIERS = 20


@dataclass(frozen=True)
class Gate:
    text: str                    # the prompt to search for ("" when the gate is closed; its ends if long)
    ids: list[str] = field(default_factory=list)    # ids named in the prompt, in order
    paths: list[str] = field(default_factory=list)  # --file paths, then paths named in a long prompt
    named_paths: list[str] = field(default_factory=list)  # the subset named in the prompt
    identifiers: list[str] = field(default_factory=list)  # compound names in code the prompt names
    skipped: bool = False         # nothing to do: short prompt, no id, no file

    @property
    def identifier_only(self) -> bool:
        return not self.text and bool(self.ids) and not self.paths


def check(prompt: str, files: list[str] | tuple[str, ...], min_chars: int) -> Gate:
    prompt = (prompt or "").strip()
    ids = mentioned_ids(prompt.upper()) if prompt else []
    edited = list(dict.fromkeys(normalize(f) for f in files if f and f.strip()))
    long_enough = len(prompt) >= min_chars
    if not long_enough and not ids and not edited:
        return Gate(text="", skipped=True)
    named = prompt_paths(prompt) if long_enough else []
    # distilled within a bounded window (a paste may be megabytes), then cut to what is searched
    text, frames = distilled(textcut.ends(prompt, DISTILL_CHARS)) if long_enough else ("", "")
    text = textcut.ends(text, ANALYSIS_CHARS)
    return Gate(text=text, ids=ids, named_paths=named, paths=edited + [p for p in named if p not in edited],
                identifiers=identifiers(f"{text}\n{frames}", named) if text else [])


def distilled(prompt: str) -> tuple[str, str]:
    """`distill.split(prompt)`: what to search for, and a traceback's frames (searched only for the names
    they hold). Its module is imported only for a prompt of several lines: one line is never a paste
    (`distill.MIN_LOG_LINES`), and its patterns take a few ms of a hook's process to compile."""
    if "\n" not in prompt:
        return prompt, ""
    from .distill import split

    return split(prompt)


def identifiers(text: str, paths: list[str]) -> list[str]:
    """Compound names in code that `text` names (`render_pdf`, `QueryCanceled`, `Cart.total`,
    `Keeper::slash`, anything in backticks), not its paths, at most MAX_IDENTIFIERS."""
    out: dict[str, None] = {}
    taken = set(paths)
    for m in _IDENT.finditer(text):
        token = (m.group(1) or m.group(2) or "").strip().rstrip("()")
        if len(token) < 4 or token in taken or " " in token or not _COMPOUND.search(token):
            continue
        if token.upper() == token and "_" not in token:  # HTTP, TCP: an acronym, not a name
            continue
        out.setdefault(token, None)
        if len(out) >= MAX_IDENTIFIERS:
            break
    return list(out)


def prompt_paths(prompt: str) -> list[str]:
    """Path-like tokens of a prompt (whether they are anchored anywhere is the index's question), at
    most `MAX_NAMED_PATHS`: the first and the last of them when there are more."""
    out: dict[str, None] = {}
    for m in _PATH.finditer(prompt):
        token = normalize(m.group(1).strip(".-"))
        if "/" not in token and token.rsplit(".", 1)[-1].lower() not in EXTENSIONS:
            continue  # a dotted name in code, not a file
        if token and not token.startswith(("http", "www.")) and "//" not in token:
            out.setdefault(token, None)
    found = list(out)
    if len(found) > MAX_NAMED_PATHS:
        half = MAX_NAMED_PATHS // 2
        found = found[:half] + found[-half:]
    return found
