"""Keeping `.stele/index/` in step with the record and the WAL: open, refresh, rebuild.

Every read goes through `open_index()`, which stats the source files (no parsing), compares them with
the manifest in the catalog and re-indexes only what changed: a changed fact file is parsed again, a
changed WAL log is re-read whole (logs are small and append-only), an item whose embedded text did not
change keeps its vector. A different embedding model re-embeds everything. Deleting the folder loses
nothing: the next open builds it again. A damaged file is reported in one line and rebuilt.

Concurrency: one `flock` on `.stele/index/lock`. Readers hold it shared while they read (so the
vectors and the catalog they read belong together); a refresh or rebuild holds it exclusively.
Waiting for the lock honours the caller's deadline.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from .. import atomic
from ..project import Project
from . import catalog as catalog_mod
from .catalog import IndexUnavailable
from .items import COMMITTED, Item
from .sources import digest, racy, read_items, rewritten, scan

LOCK = "lock"
CATALOG = "catalog.sqlite"
TEXT_DIR = "text"
# Bumped whenever what is indexed changes shape (analysis, schema, item fields): forces a rebuild.
INDEX_VERSION = "4"
GARBAGE = 0.25  # compact vectors.npy when more than this share of its rows belong to no item

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


# -- the handle --------------------------------------------------------------------------------------

class Index:
    """An open, fresh index. Use as a context manager (it holds the shared lock until closed)."""

    def __init__(self, project: Project, lock: "_Lock", cat: catalog_mod.Catalog, text: Any) -> None:
        self.project = project
        self.dir = project.index_dir
        self.lock = lock
        self.catalog = cat
        self.text = text
        self._matrix: Any = None

    @property
    def model_id(self) -> str:
        return self.catalog.meta("model_id") or ""

    def matrix(self) -> Any:
        """The vectors (memory-mapped); ValueError when the file is damaged."""
        if self._matrix is None:
            from . import vectors

            self._matrix = vectors.load(self.dir, int(self.catalog.meta("rows") or 0),
                                        int(self.catalog.meta("dim") or 0))
        return self._matrix

    def close(self) -> None:
        self._matrix = None
        self.catalog.close()
        self.lock.release()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Lock:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)

    def acquire(self, exclusive: bool, deadline: float | None) -> None:
        try:
            atomic.lock_fd(self.fd, exclusive=exclusive, deadline=deadline)
        except atomic.LockTimeout:
            raise IndexUnavailable("the index is being rebuilt by another stele process; "
                                   "try again shortly") from None

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing drops the flock
            self.fd = -1


@contextmanager
def shared_lock(project: Project, deadline: float | None = None) -> Iterator[None]:
    """Hold the index's shared lock (what readers hold) while reading its files as they stand."""
    lock = _Lock(project.index_dir)
    try:
        lock.acquire(False, deadline)
        yield
    finally:
        lock.release()


def open_catalog(project: Project) -> catalog_mod.Catalog:
    """The catalog as the last build left it, without any freshness check (the edit hooks read it so);
    raises when it is missing, unfinished or from another Stele version."""
    cat = catalog_mod.Catalog(project.index_dir / CATALOG)
    version = cat.meta("index_version")  # written last, when a build commits
    if version != INDEX_VERSION:
        cat.close()
        if version is None:
            raise ValueError("its last build did not finish")
        raise catalog_mod.OutdatedIndex(f"was built by another Stele version (index version {version}; "
                                        f"this one reads {INDEX_VERSION})")
    return cat


def _open_parts(project: Project) -> tuple[catalog_mod.Catalog, Any]:
    from .text import TextIndex

    cat = open_catalog(project)
    try:
        return cat, TextIndex(project.index_dir / TEXT_DIR)
    except BaseException:
        cat.close()
        raise


def _stale(project: Project, cat: catalog_mod.Catalog, stats: dict) -> bool:
    if cat.meta("sources") != digest(stats) or cat.meta("racy"):  # racy: `update` checks them by content
        return True
    return _wanted_model_id(project) != (cat.meta("model_tried") or "")


def _wanted_model_id(project: Project) -> str:
    """The model id the vectors should have ("" when there is no usable model)."""
    from .vectors import NoModel, model_ref

    try:
        return model_ref(project).model_id
    except NoModel:
        return ""


def _try_open(project: Project, stats: dict, warn: Callable[[str], None] | None) -> tuple[Any, bool]:
    """((catalog, text) when fresh, else None; whether only a full build can help)."""
    try:
        cat, text = _open_parts(project)
    except Exception as e:  # missing, damaged or outdated: build it again
        if warn and (project.index_dir / CATALOG).exists():
            state = str(e) if isinstance(e, catalog_mod.OutdatedIndex) else f"is unreadable ({_why(e)})"
            warn(f"stele: the index in {project.rel(project.index_dir)} {state}; rebuilding it")
        return None, True
    if _stale(project, cat, stats):
        cat.close()
        return None, False
    return (cat, text), False


def open_index(project: Project, deadline: float | None = None, warn: Callable[[str], None] | None = None,
               on_stage: Stages | None = None) -> Index:
    """The index of `project`, refreshed or built as needed, open for reading under a shared lock.

    Raises IndexUnavailable when it cannot be opened or built (never anything else for a bad index)."""
    if not project.stele_dir.is_dir():  # an index here would show up as untracked files in git status
        raise IndexUnavailable("Stele is not set up in this repository: run `stele init`")
    lock = _Lock(project.index_dir)
    try:
        lock.acquire(False, deadline)
        stats = scan(project)
        parts, full = _try_open(project, stats, warn)
        if parts is None:
            lock.acquire(True, deadline)  # drops the shared lock, then waits for the exclusive one
            parts, full = _try_open(project, stats, None)  # another process may have done it meanwhile
            if parts is None:
                _update_or_rebuild(project, full, stats, warn, on_stage)
            else:
                parts[0].close()
            lock.acquire(False, deadline)
            parts = _open_parts(project)
        return Index(project, lock, *parts)
    except IndexUnavailable:
        lock.release()
        raise
    except Exception as e:
        lock.release()
        raise IndexUnavailable(f"the index cannot be opened ({_why(e)}); run `stele rebuild`") from e
    except BaseException:
        lock.release()
        raise


def _update_or_rebuild(project: Project, full: bool, stats: dict, warn: Callable[[str], None] | None,
                       on_stage: Stages | None) -> Report:
    if not full:
        try:
            return update(project, False, stats, on_stage)
        except Exception as e:  # a damaged part that opened fine: start over
            if warn:
                warn(f"stele: refreshing the index failed ({_why(e)}); rebuilding it")
    return update(project, True, stats, on_stage)


def _why(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:160]}" if text else type(e).__name__


def rebuild(project: Project, on_stage: Stages | None = None) -> Report:
    """Throw the index away and build it from the record and the WAL."""
    if not project.stele_dir.is_dir():
        raise IndexUnavailable("Stele is not set up in this repository: run `stele init`")
    lock = _Lock(project.index_dir)
    try:
        lock.acquire(True, None)
        return update(project, True, scan(project), on_stage)
    finally:
        lock.release()


# -- writing -----------------------------------------------------------------------------------------

def _wipe(folder: Path) -> None:
    """Empty the record index's folder but for its lock and the code index (`code.py`), which is not
    the record index's to throw away: it has its own lock, and a snapshot may be refreshing it."""
    from .code import DIR as CODE_DIR

    for child in folder.iterdir():
        if child.name in (LOCK, CODE_DIR):
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _stage(on_stage: Stages | None, description: str, total: int) -> Callable[[int], None]:
    return on_stage(description, total) if on_stage else (lambda n=1: None)


def update(project: Project, full: bool, stats: dict[str, tuple[int, int]], on_stage: Stages | None = None
           ) -> Report:
    """Bring the index up to date with `stats`, the caller's fresh `scan()` (the caller holds the
    exclusive lock); `full` starts from nothing."""
    from .text import TextIndex

    t0, now = time.monotonic(), time.time_ns()  # a file modified after `now` is racy
    report = Report(full=full)
    folder = project.index_dir
    if full:
        _wipe(folder)
        cat = catalog_mod.Catalog(folder / CATALOG, create=True)
        text = TextIndex(folder / TEXT_DIR, create=True)
        stored: dict[str, tuple[int, int]] = {}
    else:
        cat, text = _open_parts(project)
        stored = cat.files()
    try:
        # hashed before anything is parsed, so a rewrite after the hash shows up as a change next time
        again = rewritten(project, json.loads(cat.meta("racy") or "{}"))
        hashes = racy(project, stats, now)
        changed = sorted(p for p in stats if stored.get(p) != stats[p] or p in again)
        removed = sorted(p for p in stored if p not in stats)
        gone: list[str] = []
        for rel in changed + removed:
            gone += cat.ids_at(rel)
        advance = _stage(on_stage, "reading the record", len(changed))
        fresh: dict[str, Item] = {}
        for rel in changed:
            for item in read_items(project, rel, report.skipped):
                owner = fresh.get(item.id)
                elsewhere = owner.path if owner else cat.path_of(item.id)
                if elsewhere and elsewhere != item.path and (owner or elsewhere not in changed + removed):
                    if item.source == COMMITTED:  # a session entry seen live and archived is one entry
                        report.skipped.append(f"{item.path}:1: duplicate id {item.id}: "
                                              f"also used by {elsewhere}")
                    continue
                fresh[item.id] = item
            advance(1)
        report.parsed = len(changed)
        cat.db.execute("BEGIN")
        # a re-read item keeps its vector row; `_update_vectors` re-embeds those whose text hash changed
        kept = cat.vector_rows(list(fresh))
        cat.delete(gone + list(fresh))
        cat.add(list(fresh.values()))
        cat.restore_vector_rows(kept)
        if changed or removed or full:
            writer = text.writer()
            for item_id in dict.fromkeys(gone + list(fresh)):
                writer.delete(item_id)
            for item in fresh.values():
                writer.add(item)
            writer.commit()
        report.embedded, report.reused, report.vector_error = _update_vectors(project, cat, full, on_stage)
        cat.set_files({p: stats[p] for p in changed}, removed)
        cat.set_meta(sources=digest(stats), racy=json.dumps(hashes) if hashes else "")
        cat.set_meta(index_version=INDEX_VERSION, built_at=str(int(time.time())))
        cat.db.execute("COMMIT")
        report.items = cat.count()
    finally:
        if cat.db.in_transaction:
            cat.db.execute("ROLLBACK")
        cat.close()
    report.seconds = time.monotonic() - t0
    return report


def _update_vectors(project: Project, cat: catalog_mod.Catalog, full: bool,
                    on_stage: Stages | None) -> tuple[int, int, str | None]:
    """Embed what is new or changed; returns (embedded, taken from packs, why there are no vectors).

    Rows of unchanged items stay where they are and new rows are appended, so an edit costs one
    embedding and one file write; rows that no item uses any more are dropped (the file compacted)
    once they are more than a quarter of it."""
    from . import vectors

    try:
        ref = vectors.model_ref(project)
    except vectors.NoModel as e:
        cat.set_meta(model_id="", model_tried="")
        return 0, 0, str(e)
    cat.set_meta(model_tried=ref.model_id)
    rows = int(cat.meta("rows") or 0) if not full and cat.meta("model_id") == ref.model_id else 0
    need, live = cat.needing_vectors(rows), cat.live_vectors(rows)
    compact = rows - len(live) > GARBAGE * (len(live) + len(need))
    if not need and not compact:
        return 0, 0, None  # decided from the catalog alone: a refresh that embeds nothing never loads numpy
    old = None
    if rows:
        try:
            old = vectors.load(project.index_dir, rows, int(cat.meta("dim") or 0))
        except (OSError, ValueError):  # damaged: embed everything again
            need, live, compact = cat.needing_vectors(0), [], False
    new, reused = None, 0
    if need:
        from . import packs

        dim, rows_of = packs.reuse(project, cat.paths([i for i, _ in need]), need, ref.model_id)
        todo = [i for i, _ in need if i not in rows_of]
        try:
            made = None
            if todo:
                enc = vectors.load_encoder(ref, bulk=len(todo) > vectors.LEAN_MAX)
                made = vectors.embed(enc, cat.embed_texts(todo), _stage(on_stage, "embedding", len(todo)))
            new = vectors.assemble([i for i, _ in need], rows_of, dim, todo, made)
            reused = len(need) - len(todo)
        except vectors.NoModel as e:
            cat.set_meta(model_id="")
            return 0, 0, str(e)
    matrix = vectors.merge(old, [row for _, row, _ in live] if compact else None, new)
    base = matrix.shape[0] - len(need)  # new rows go last
    moved = {i: (n, h) for n, (i, _, h) in enumerate(live)} if compact else {}  # the rest are all in `need`
    cat.restore_vector_rows(moved | {i: (base + n, h) for n, (i, h) in enumerate(need)})
    vectors.save(project.index_dir, matrix)
    cat.set_meta(model_id=ref.model_id, rows=str(matrix.shape[0]), dim=str(matrix.shape[1]))
    return len(need) - reused, reused, None
