"""The index's read handle and what its writers share: the locks, the catalog opened as the last
refresh left it, one update's report and its commits (each batch under the exclusive lock, in one
SQLite transaction). `build.py` keeps the index fresh with these; `update.py` and `vectorphase.py`
write it."""
from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import atomic
from ..plain import dataclass, field
from ..project import Project
from ..textcut import error_line
from . import catalog as catalog_mod
from .catalog import IndexUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LOCK = "lock"
BUILD_LOCK = "build.lock"
QUEUE_LOCK = "queue.lock"  # held by a background builder from its start until its turn at build.lock
CATALOG = "catalog.sqlite"
TEXT_DIR = "text"
# Bumped whenever what is indexed changes shape (analysis, schema, item fields): forces a rebuild.
INDEX_VERSION = "6"  # 6: search fields hold analyzed terms, with their lengths (exact live BM25)

# on_stage(description, total) -> advance(n): how a caller shows progress (the CLI: Rich bars)
Stages = Callable[[str, int], Callable[[int], None]]


@dataclass
class Report:
    """What a refresh or rebuild did."""
    full: bool = False
    parsed: int = 0
    embedded: int = 0
    reused: int = 0  # vectors taken from teammates' packs instead of embedding (index.packs)
    items: int = 0
    skipped: list[str] = field(default_factory=list)  # `path:line: problem` of files left out
    vector_error: str | None = None
    seconds: float = 0.0
    done: bool = True  # False: stopped at its time limit, with the work so far committed
    deferred: int = 0  # items searchable by full text whose vectors are left to the background builder
    unmerged: bool = False  # text segments committed without waiting for tantivy's merges


class Index:
    """An open, fresh index. Use as a context manager (it holds the shared lock until closed)."""

    def __init__(self, project: Project, lock: Lock, cat: catalog_mod.Catalog, text: Any) -> None:
        self.project = project
        self.dir = project.index_dir
        self.lock = lock
        self.catalog = cat
        self.text = text
        self._matrix: Any = None
        self.behind: str | None = None  # why the index may not hold everything yet (a build under way)

    @property
    def model_id(self) -> str:
        return self.catalog.meta("model_id") or ""

    def matrix(self) -> Any:
        """The vectors (memory-mapped); ValueError when the file is damaged."""
        if self._matrix is None:
            from . import vectors

            self._matrix = vectors.load(self.dir, self.model_id, int(self.catalog.meta("rows") or 0),
                                        int(self.catalog.meta("dim") or 0))
        return self._matrix

    def unembedded(self) -> list[str]:
        """Items a refresh left to the background builder to embed (their vector is missing or holds an
        older text), by id: [] when there are none, or when the index does not track them one by one
        (a bulk change: then `behind` says the index is still being built)."""
        ids = pending_vectors(self.catalog)
        if not ids:
            return []
        return [i for i, _ in self.catalog.needing_vectors(int(self.catalog.meta("rows") or 0), sorted(ids))]

    def close(self) -> None:
        self._matrix = None
        self.catalog.close()
        self.lock.release()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Lock:
    """An flock on a file in the index folder. In a read-only checkout (a CI cache, a mounted volume)
    the file is opened read-only, which still takes a shared lock, or, when it cannot be created,
    not at all: nothing can write the index there, so readers need no lock to agree with a writer."""

    def __init__(self, folder: Path, name: str = LOCK) -> None:
        self.fd = -1
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(folder / name, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            try:
                self.fd = os.open(folder / name, os.O_RDONLY)
            except OSError:
                self.fd = -1

    def acquire(self, exclusive: bool, deadline: float | None) -> None:
        if self.fd < 0:
            if exclusive:
                raise IndexUnavailable("the index folder is read-only; it can be read, not updated")
            return
        try:
            atomic.lock_fd(self.fd, exclusive=exclusive, deadline=deadline)
        except atomic.LockTimeout:
            raise IndexUnavailable("the index is being rebuilt by another stele process; "
                                   "try again shortly") from None

    def unlock(self) -> None:
        if self.fd >= 0:
            atomic.unlock_fd(self.fd)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing drops the flock
            self.fd = -1


@contextmanager
def shared_lock(project: Project, deadline: float | None = None) -> Iterator[None]:
    """Hold the index's shared lock (what readers hold) while reading its files as they stand."""
    lock = Lock(project.index_dir)
    try:
        lock.acquire(False, deadline)
        yield
    finally:
        lock.release()


def open_catalog(project: Project) -> catalog_mod.Catalog:
    """The catalog as the last refresh left it, without any freshness check (the edit hooks read it
    so; a build under way has committed what it has done so far); raises when it is missing, damaged
    or from another Stele version."""
    cat = catalog_mod.Catalog(project.index_dir / CATALOG)
    version = cat.meta("index_version")  # written when the catalog is created
    if version != INDEX_VERSION:
        cat.close()
        if version is None:
            raise ValueError("it was never finished being created")
        raise catalog_mod.OutdatedIndex(f"was built by another Stele version (index version {version}; "
                                        f"this one reads {INDEX_VERSION})")
    return cat


def open_parts(project: Project) -> tuple[catalog_mod.Catalog, Any]:
    from .text import TextIndex

    cat = open_catalog(project)
    try:
        return cat, TextIndex(project.index_dir / TEXT_DIR)
    except BaseException:
        cat.close()
        raise


class Committer:
    """Commits of one update: each under the index's exclusive lock, in one SQLite transaction."""

    def __init__(self, project: Project, cat: catalog_mod.Catalog) -> None:
        self.lock = Lock(project.index_dir)
        self.cat = cat

    def __enter__(self) -> catalog_mod.Catalog:
        self.lock.acquire(True, None)
        self.cat.db.execute("BEGIN")
        return self.cat

    def __exit__(self, kind: Any, *exc: Any) -> None:
        try:
            self.cat.db.execute("COMMIT" if kind is None else "ROLLBACK")
        finally:
            self.lock.unlock()

    def close(self) -> None:
        self.lock.release()


def catalog_meta(project: Project, key: str) -> str | None:
    """One value of the catalog's meta table (None when there is no readable catalog)."""
    try:
        cat = catalog_mod.Catalog(project.index_dir / CATALOG)
    except Exception:
        return None
    try:
        return cat.meta(key)
    finally:
        cat.close()


def pending_vectors(cat: catalog_mod.Catalog) -> set[str] | None:
    """The items that may lack a valid vector (every other item has one); None: any item may (a bulk
    change, another model, or a catalog from before the ids were tracked)."""
    raw = cat.meta("vectors_pending")
    if cat.meta("vectors_done") != "1" or raw is None:
        return None
    return set(json.loads(raw or "[]"))


def why(e: BaseException) -> str:
    return error_line(e, 160)


def stage(on_stage: Stages | None, description: str, total: int) -> Callable[[int], None]:
    return on_stage(description, total) if on_stage else no_progress


def no_progress(n: int = 1) -> None:
    pass


def chunks(values: list, size: int) -> list[list]:
    return [values[i:i + size] for i in range(0, len(values), size)]
