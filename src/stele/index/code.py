"""The code index: the repository's source files, chunked, searchable with the record's BM25 analysis.

Files are those git tracks plus new ones it would track (untracked, not ignored): a module an agent
just wrote is found before it is committed, and nothing `.gitignore` excludes (builds, vendored
environments) is ever read.

Layout under `.stele/index/code/`: `manifest.json` (per file: size, mtime, content hash, chunk line
ranges and names) and `text/` (a `TextIndex` from `text.py`, one document per chunk, id
`path:start-end`). It is kept fresh without being asked: every `refresh()` lists the files,
trusts a file whose size and mtime are unchanged, hashes the rest, and re-chunks only files whose
content hash changed. Deleting the folder loses nothing. Chunk text is not stored: it is read from the
file when delivered, which `refresh()` has just made sure the index agrees with.

Writers take an exclusive `flock` on `lock`; the tantivy commit lands before the manifest, so a crash
between them only makes the next refresh redo those files.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .. import atomic, gitrepo, treefile
from ..project import Project
from .chunks import Span, spans

VERSION = 3  # bumped when chunking or the text index changes: the next refresh rebuilds
DIR = "code"  # under .stele/index/, beside the record index, which leaves it alone
MAX_FILE_BYTES = 256 * 1024
SOURCE_SUFFIXES = frozenset([
    ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte", ".go",
    ".rs", ".java", ".kt", ".kts", ".scala", ".groovy", ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".cxx",
    ".hpp", ".hh", ".m", ".mm", ".cs", ".fs", ".swift", ".dart", ".lua", ".pl", ".pm", ".r", ".jl", ".ex",
    ".exs", ".erl", ".hrl", ".hs", ".ml", ".mli", ".clj", ".cljs", ".elm", ".zig", ".nim", ".sh", ".bash",
    ".zsh", ".fish", ".ps1", ".sql", ".proto", ".graphql", ".tf", ".yml", ".yaml", ".toml"
])
SOURCE_NAMES = frozenset({"Makefile", "Dockerfile", "Rakefile", "Gemfile", "Justfile", "CMakeLists.txt"})
SEARCH_BOOSTS = {"title": 2.0, "body": 1.0, "anchors": 1.0}
# Hits scoring under this share of the best hit matched only a stray common word: they would spend the
# code budget on noise.
MIN_SHARE_OF_BEST = 0.25


@dataclass(frozen=True)
class Chunk:
    path: str
    start: int
    end: int
    symbol: str | None
    names: tuple[str, ...] = ()
    text: str = ""

    @property
    def key(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"


@dataclass
class Report:
    files: int = 0
    chunked: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def is_source(path: str, memory_dir: str) -> bool:
    """A listed file worth indexing: source by name, and not Stele's own memory or settings."""
    name = path.rsplit("/", 1)[-1]
    suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
    return ((suffix in SOURCE_SUFFIXES or name in SOURCE_NAMES)
            and not path.startswith((memory_dir + "/", ".stele/")))


def code_dir(project: Project) -> Path:
    return project.index_dir / DIR


class CodeIndex:
    """The manifest of a refreshed code index, and search over it."""

    def __init__(self, project: Project, files: dict[str, dict], text) -> None:
        self.project = project
        self.files = files
        self.text = text  # the open TextIndex
        self._lines: dict[str, list[str]] = {}
        self._shown: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            try:
                self._lines[path] = treefile.read_text(self.project.root / path, root=self.project.root).split("\n")
            except (OSError, UnicodeDecodeError):
                self._lines[path] = []
        return self._lines[path]

    def file_text(self, path: str) -> str:
        return "\n".join(self.lines(path))

    def shown_lines(self, path: str) -> list[str]:
        """The file's lines as a chunk may carry them out: the whole file redacted (the built-in rules
        and `redaction.patterns`) before it is cut, line numbers kept (`Redactor.redact_lines`), so a
        secret that spans two chunks leaves no part of itself in either."""
        if path not in self._shown:
            from ..redact import Redactor

            redactor = Redactor(self.project.config["redaction.patterns"])
            self._shown[path] = redactor.redact_lines("\n".join(self.lines(path))).split("\n")
        return self._shown[path]

    def chunk(self, path: str, span: list) -> Chunk:
        start, end, symbol, names = span
        return Chunk(path, start, end, symbol, tuple(names), "\n".join(self.shown_lines(path)[start - 1:end]))

    def chunks_of(self, path: str) -> list[Chunk]:
        return [self.chunk(path, s) for s in self.files.get(path, {}).get("chunks", [])]

    def search(self, query: str, limit: int) -> list[Chunk]:
        """Chunks best matching `query` (BM25), best first, down to a share of the best score."""
        if not query.strip() or not self.files:
            return []
        hits = self.text.search(query, limit, SEARCH_BOOSTS)
        spans_by_key = {f"{p}:{s[0]}-{s[1]}": (p, s) for p, e in self.files.items() for s in e["chunks"]}
        floor = hits[0][1] * MIN_SHARE_OF_BEST if hits else 0
        return [self.chunk(*spans_by_key[key]) for key, score in hits
                if key in spans_by_key and score >= floor]


def _manifest(folder: Path) -> dict[str, dict] | None:
    """The files as last indexed; None when there is no usable index (start over)."""
    try:
        data = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if data.get("v") == VERSION and (folder / "text" / "meta.json").is_file():
            return data["files"]
    except (OSError, ValueError, AttributeError, KeyError):
        pass
    return None


def _lock(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    atomic.lock_fd(fd)
    return fd


def refresh(project: Project, report: Report | None = None) -> CodeIndex:
    """Bring the code index in step with the working tree and return it (built on first use).
    A damaged index is thrown away and built again once. Raises IndexUnavailable where Stele is not
    set up, as the record index does: an index there would be untracked files in `git status`."""
    from .catalog import IndexUnavailable

    if not project.stele_dir.is_dir():
        raise IndexUnavailable("Stele is not set up in this repository: run `stele init`")
    report = report if report is not None else Report()
    folder = code_dir(project)
    fd = _lock(folder)
    try:
        try:
            return _update(project, folder, _manifest(folder), report)
        except (OSError, ValueError):  # tantivy could not open or write it
            return _update(project, folder, None, report)
    finally:
        os.close(fd)


def _update(project: Project, folder: Path, files: dict[str, dict] | None, report: Report) -> CodeIndex:
    from .items import Item
    from .text import TextIndex

    if files is None:
        shutil.rmtree(folder / "text", ignore_errors=True)
        files = {}
    memory = project.rel(project.memory_dir)
    tracked = [p for p in gitrepo.ls_files(project.root) if is_source(p, memory)]
    report.files = len(tracked)
    fresh: dict[str, dict] = {}
    changed: dict[str, tuple[str, list[Span]]] = {}
    for path in tracked:
        entry = _scan(project.root, path, files.get(path))
        if entry is None:
            continue
        if "new" in entry:
            changed[path] = entry.pop("new")
        fresh[path] = entry
    gone = [p for p in files if p not in fresh or p in changed]
    report.chunked, report.removed = sorted(changed), sorted(p for p in files if p not in fresh)
    text = TextIndex(folder / "text", create=not (folder / "text" / "meta.json").is_file())
    if changed or gone:
        writer = text.writer()
        for path in gone:
            for start, end, *_ in files[path]["chunks"]:
                writer.delete(f"{path}:{start}-{end}")
        for path, (content, found) in changed.items():
            lines = content.split("\n")
            for span in found:
                writer.add(Item(id=f"{path}:{span.start}-{span.end}", source="code", kind="code",
                                title=" ".join((*span.names, path)), path=path, anchors=[path],
                                body="\n".join(lines[span.start - 1:span.end])))
        writer.commit()
    if fresh != files:
        atomic.write(folder / "manifest.json", json.dumps({"v": VERSION, "files": fresh}) + "\n")
    return CodeIndex(project, fresh, text)


def _definitions(name: str, text: str) -> list[tuple[int, int]] | None:
    """Top-level definition line ranges where a parser knows them exactly (Python), else None."""
    from ..anchors.symbols import language, python_definitions

    defs = python_definitions(text) if language(name) == "python" else None
    return [span for qualified, span in defs.items() if "." not in qualified] if defs else None


def _scan(root: Path, rel: str, old: dict | None) -> dict | None:
    """The manifest entry of one file, with `new`: (text, spans) when it must be (re)indexed; None to
    skip the file."""
    path = root / rel
    try:
        st = path.stat()
    except OSError:
        return None
    if st.st_size > MAX_FILE_BYTES:
        return None
    if old and old["size"] == st.st_size and old["mtime_ns"] == st.st_mtime_ns:
        return old
    try:
        raw = treefile.read_bytes(path, root)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if "\0" in text:
        return None
    sha = hashlib.sha1(raw).hexdigest()
    entry = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha": sha}
    if old and old["sha"] == sha:
        return {**entry, "chunks": old["chunks"]}
    found = spans(text, _definitions(path.name, text))
    chunks = [[s.start, s.end, s.symbol, list(s.names)] for s in found]
    return {**entry, "chunks": chunks, "new": (text, found)}
