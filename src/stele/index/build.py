"""Keeping `.stele/index/` in step with the record and the WAL: open, refresh, rebuild.

Every read goes through `open_index()`, which stats the source files (no parsing), compares the scan
with the manifest in the catalog and re-indexes only what changed: a changed fact file is parsed again,
a live WAL log that only grew is read from where the last refresh stopped, an item whose embedded text
did not change keeps its vector. Deleting the folder loses nothing: the next open builds it again. A
damaged file is reported in one line and rebuilt.

Work is done in committed batches (BATCH_FILES files, then the vectors BATCH_VECTORS at a time): a
kill, a crash or a time budget loses at most the batch under way, and the next open carries on from
what the manifest says is indexed. A read with a deadline (a hook, `stele recall`) spends at most
SLICE_S of it catching up; what is left goes to a detached process (`background.py`), and the read
answers from what is already indexed, with `Index.behind` saying why it may be incomplete. So a
10,000-fact record without an index costs a hook two seconds once, not its whole budget every time.

Concurrency: two `flock`s. `build.lock` is held by whoever brings the index up to date, so at most one
process does; the others wait a little (WAIT_S, for a small refresh to finish) and then read what is
there. `lock` is held shared by readers while they read and exclusively by the builder only while it
commits a batch, so the vectors and the catalog a reader sees belong together. Waiting for either
honours the caller's deadline. A budget's alarm (`errors.OutOfTime`) is never caught here: it stops
the batch under way and reaches the caller.
"""
from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import atomic
from ..errors import ConfigError
from ..plain import dataclass, field
from ..project import Project
from ..textcut import error_line
from . import catalog as catalog_mod
from . import contents
from .catalog import IndexUnavailable
from .items import COMMITTED, Item
from .sources import Scan, Stamp, is_wal, racy, read_items, rewritten, scan

LOCK = "lock"
BUILD_LOCK = "build.lock"
QUEUE_LOCK = "queue.lock"  # held by a background builder from its start until its turn at build.lock
CATALOG = "catalog.sqlite"
TEXT_DIR = "text"
# Bumped whenever what is indexed changes shape (analysis, schema, item fields): forces a rebuild.
INDEX_VERSION = "6"  # 6: search fields hold analyzed terms, with their lengths (exact live BM25)
GARBAGE = 0.25  # compact a model's vectors when more than this share of its rows belong to no item
BATCH_FILES = 500
BATCH_VECTORS = 2048
SLICE_S = 2.0  # the most a read with a deadline spends catching up before it hands the rest over
WAIT_S = 0.5  # how long such a read waits for another process's refresh before reading what is there
RESERVE_S = 1.0  # of a deadline, kept for answering
# Items that may lack a valid vector, tracked by id (meta `vectors_pending`) so that the vector phase of a
# small refresh asks SQLite about those only; past this many it looks at every item (a bulk change).
PENDING_MAX = 1024

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


# -- the handle --------------------------------------------------------------------------------------

class Index:
    """An open, fresh index. Use as a context manager (it holds the shared lock until closed)."""

    def __init__(self, project: Project, lock: _Lock, cat: catalog_mod.Catalog, text: Any) -> None:
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
        ids = _pending(self.catalog)
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


class _Lock:
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
    lock = _Lock(project.index_dir)
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


def _open_parts(project: Project) -> tuple[catalog_mod.Catalog, Any]:
    from .text import TextIndex

    cat = open_catalog(project)
    try:
        return cat, TextIndex(project.index_dir / TEXT_DIR)
    except BaseException:
        cat.close()
        raise


def _stale(project: Project, cat: catalog_mod.Catalog, found: Scan) -> bool:
    if cat.meta("racy") or cat.meta("settled") != "1" or cat.manifest() != found.parts:
        return True  # racy: `update` checks them by content; not settled: an update was cut short
    from .vectors import wanted_model_id

    model = wanted_model_id(project)
    if model != (cat.meta("model_tried") or ""):
        return True
    rows = int(cat.meta("rows") or 0)
    if rows and model:  # the rows the catalog names must all be there (a compaction may have been cut)
        from .vectors import Store

        return Store(project.index_dir, model, int(cat.meta("dim") or 0)).count < rows
    return False


def _try_open(project: Project, found: Scan, warn: Callable[[str], None] | None) -> tuple[Any, bool]:
    """((catalog, text) when fresh, else None; whether only a full build can help)."""
    try:
        cat, text = _open_parts(project)
    except Exception as e:  # missing, damaged or outdated: build it again
        if warn and (project.index_dir / CATALOG).exists():
            state = str(e) if isinstance(e, catalog_mod.OutdatedIndex) else f"is unreadable ({_why(e)})"
            warn(f"stele: the index in {project.rel(project.index_dir)} {state}; rebuilding it")
        return None, True
    if _stale(project, cat, found):
        cat.close()
        return None, False
    return (cat, text), False


def open_index(project: Project, deadline: float | None = None, warn: Callable[[str], None] | None = None,
               on_stage: Stages | None = None) -> Index:
    """The index of `project`, brought up to date, open for reading under a shared lock.

    With a `deadline` (time.monotonic()), at most SLICE_S of it goes to catching up: past that the
    index is returned as it is, with `behind` saying so, while a background process finishes.
    Raises IndexUnavailable when it cannot be opened or built (never anything else for a bad index)."""
    if not project.stele_dir.is_dir():  # an index here would show up as untracked files in git status
        raise IndexUnavailable("Stele is not set up in this repository: run `stele init`")
    lock = _Lock(project.index_dir)
    try:
        lock.acquire(False, deadline)
        found = scan(project)
        parts, full = _try_open(project, found, warn)
        behind = None
        if parts is None:
            lock.unlock()  # the builder commits under the exclusive lock
            behind = _catch_up(project, full, deadline, warn, on_stage, found)
            lock.acquire(False, deadline)
            try:
                parts = _open_parts(project)
            except Exception:
                raise IndexUnavailable(behind or "the index could not be built") from None
        index = Index(project, lock, *parts)
        index.behind = behind
        if behind and warn:
            warn(f"stele: {behind}; answering from what is indexed")
        return index
    except (IndexUnavailable, ConfigError):  # no rebuild fixes a config file
        lock.release()
        raise
    except Exception as e:
        lock.release()
        raise IndexUnavailable(f"the index cannot be opened ({_why(e)}); run `stele rebuild`") from e
    except BaseException:
        lock.release()
        raise


def open_if_fresh(project: Project, deadline: float | None = None) -> Index | None:
    """The index open for reading when it is up to date with the sources, else None: a read that never
    writes, so the process doing it may be killed at any point (the resident server's spare child,
    `cli/resident/spare.py`)."""
    lock = _Lock(project.index_dir)
    try:
        lock.acquire(False, deadline)
        parts, _ = _try_open(project, scan(project), None)
    except BaseException:
        lock.release()
        raise
    if parts is None:
        lock.release()
        return None
    return Index(project, lock, *parts)


def _catch_up(project: Project, full: bool, deadline: float | None, warn: Callable[[str], None] | None,
              on_stage: Stages | None, found: Scan | None = None) -> str | None:
    """Bring the index up to date with `found` (scanned again if another process held the build
    lock meanwhile), or as far as the deadline allows; None when it is whole, else why it is not
    (another process is at it, or a background process now finishes it)."""
    from . import background

    builder = _Lock(project.index_dir, BUILD_LOCK)
    report = None
    try:
        now = time.monotonic()
        try:
            builder.acquire(True, now)  # free: nobody can have refreshed since our scan
        except IndexUnavailable:
            # a refresh of an index that was whole is worth waiting for (every refresh leaves `settled`
            # at 0 between its first batch and its end); a build from nothing is not
            wait = WAIT_S if _meta(project, "built_at") is not None else 0.0
            try:
                builder.acquire(True, None if deadline is None else min(deadline, now + wait))
            except IndexUnavailable:
                return progress(project, "being brought up to date by another stele process",
                                len(found.paths) if found is not None else None)
            found = None
        if found is None:
            found = scan(project)  # another process may have done it meanwhile
            parts, full = _try_open(project, found, None)
            if parts is not None:
                parts[0].close()
                return None
        # A big record from nothing: a slice would index a part too small to answer well from, for
        # seconds of a hook that a loaded machine stretches to its whole budget. So the builder starts
        # at once and the read answers from nothing; a small record (one batch) is built here.
        if not (full and deadline is not None and len(found.paths) > BATCH_FILES and background.enabled()):
            until = None if deadline is None else min(deadline - RESERVE_S, time.monotonic() + SLICE_S)
            report = _update_or_rebuild(project, full, found, warn, on_stage, until)
    finally:
        builder.release()
    if report is not None and report.done:
        if report.deferred or report.unmerged:  # whole for full text; the rest is the builder's
            background.start(project)
        return None
    started = background.start(project)
    return progress(project, "being built in the background" if started else "being built", len(found.paths))


def _meta(project: Project, key: str) -> str | None:
    """One value of the catalog's meta table (None when there is no readable catalog)."""
    try:
        cat = catalog_mod.Catalog(project.index_dir / CATALOG)
    except Exception:
        return None
    try:
        return cat.meta(key)
    finally:
        cat.close()


def progress(project: Project, doing: str, total: int | None = None) -> str:
    """One line on a build under way: how many of the `total` source files (default: scanned now)
    are indexed so far."""
    try:
        cat = catalog_mod.Catalog(project.index_dir / CATALOG)
        try:
            done = cat.indexed_files()
        finally:
            cat.close()
    except Exception:
        done = 0
    total = len(scan(project).paths) if total is None else total
    return f"the index is {doing} ({min(done, total):,} of {total:,} files indexed so far)"


def finish(project: Project, queued: _Lock | None = None, leftover: bool = False) -> Report:
    """Bring the index up to date with no time limit, waiting for any other builder first: what a
    hook's refresh left, too (the vectors of the items it added, tantivy's merges). `queued` (the
    builder's QUEUE_LOCK) is let go once it is this process's turn: from then on a builder started by
    the next hook waits for it. With `leftover` (the background builder), an index whose last update
    ran to its end gets only that update's leftovers, without a scan of the sources (at 50,000 facts
    the scan was most of the builder's time; the next read scans anyway)."""
    builder = _Lock(project.index_dir, BUILD_LOCK)
    try:
        builder.acquire(True, None)
        if queued is not None:
            queued.release()
        if leftover and _meta(project, "settled") == "1":
            report = _leftovers(project)
        else:
            found = scan(project)
            parts, full = _try_open(project, found, None)
            if parts is None:
                report = _update_or_rebuild(project, full, found, None, None, None)
            else:
                cat = parts[0]
                try:
                    pending = _pending(cat)
                finally:
                    cat.close()
                report = _update_or_rebuild(project, False, found, None, None, None) if pending else Report()
        _merge(project)
        return report
    finally:
        builder.release()


def _leftovers(project: Project) -> Report:
    """The vector phase of an update that ran to its end (what it left pending, under the build lock)."""
    report = Report()
    try:
        cat = open_catalog(project)
    except Exception:  # damaged or outdated: the next read rebuilds it
        return report
    commit = _Committer(project, cat)
    try:
        _update_vectors(project, commit, report, None, None)
    finally:
        commit.close()
        cat.close()
    return report


def _merge(project: Project) -> None:
    """Merge the text segments hooks' refreshes committed without merging, once tantivy would."""
    from .text import MERGE_AT, TextIndex

    try:
        text = TextIndex(project.index_dir / TEXT_DIR)
    except Exception:  # damaged or missing: the next read rebuilds it
        return
    if text.segments() < MERGE_AT:
        return
    lock = _Lock(project.index_dir)
    try:
        lock.acquire(True, None)  # the merge deletes the merged segments' files: no reader may be opening them
        text.merge()
    finally:
        lock.release()


def _update_or_rebuild(project: Project, full: bool, found: Scan, warn: Callable[[str], None] | None,
                       on_stage: Stages | None, until: float | None) -> Report:
    if not full:
        try:
            return update(project, False, found, on_stage, until, warn)
        except Exception as e:  # a damaged part that opened fine: start over (an OutOfTime is no Exception)
            if warn:
                warn(f"stele: refreshing the index failed ({_why(e)}); rebuilding it")
    return update(project, True, found, on_stage, until, warn)


def _why(e: BaseException) -> str:
    return error_line(e, 160)


def rebuild(project: Project, on_stage: Stages | None = None) -> Report:
    """Throw the index away and build it from the record and the WAL."""
    if not project.stele_dir.is_dir():
        raise IndexUnavailable("Stele is not set up in this repository: run `stele init`")
    builder = _Lock(project.index_dir, BUILD_LOCK)
    try:
        builder.acquire(True, None)
        return update(project, True, scan(project), on_stage)
    finally:
        builder.release()


# -- writing -----------------------------------------------------------------------------------------

def _wipe(folder: Path) -> None:
    """Empty the record index's folder but for its locks and the code index (`code.py`), which is not
    the record index's to throw away: it has its own lock, and a snapshot may be refreshing it."""
    import shutil

    from .code import DIR as CODE_DIR

    for child in folder.iterdir():
        if child.name in (LOCK, BUILD_LOCK, QUEUE_LOCK, CODE_DIR):
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _stage(on_stage: Stages | None, description: str, total: int) -> Callable[[int], None]:
    return on_stage(description, total) if on_stage else _no_progress


def _no_progress(n: int = 1) -> None:
    pass


def _chunks(values: list, size: int) -> list[list]:
    return [values[i:i + size] for i in range(0, len(values), size)]


def _grown(project: Project, rel: str, before: tuple[Stamp, int] | None, now: Stamp) -> int:
    """Where to resume reading a live session log that only grew since it was indexed (0: read it
    whole). Logs are appended to and never rewritten in place; compaction moves them away whole."""
    if before is None or not rel.endswith(".jsonl") or not is_wal(project, rel):
        return 0
    (_mtime, size, ino), offset = before
    return offset if ino == now[2] and now[1] >= size and 0 < offset <= now[1] else 0


class _Committer:
    """Commits of one update: each under the index's exclusive lock, in one SQLite transaction."""

    def __init__(self, project: Project, cat: catalog_mod.Catalog) -> None:
        self.lock = _Lock(project.index_dir)
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


def _create(project: Project) -> None:
    from .text import TextIndex

    lock = _Lock(project.index_dir)
    try:
        lock.acquire(True, None)
        _wipe(project.index_dir)
        cat = catalog_mod.Catalog(project.index_dir / CATALOG, create=True)
        TextIndex(project.index_dir / TEXT_DIR, create=True)
        cat.set_meta(index_version=INDEX_VERSION)
        cat.close()
    finally:
        lock.release()


def update(project: Project, full: bool, found: Scan, on_stage: Stages | None = None,
           until: float | None = None, warn: Callable[[str], None] | None = None) -> Report:
    """Bring the index up to date with `found`, the caller's fresh `scan()` (the caller holds the build
    lock); `full` starts from nothing. Stops after the batch that passes `until` (time.monotonic()),
    with `done` False and everything so far committed."""
    from . import background
    from .text import MERGE_AT

    t0, now = time.monotonic(), time.time_ns()  # a file modified after `now` is racy
    report = Report(full=full)
    # a hook's refresh does not wait for tantivy's merges (~150 ms when one rewrites a 10,000-document
    # segment): the background builder it starts does them (`finish`)
    merge = until is None or not background.enabled()
    if full:
        _create(project)
    cat, text = _open_parts(project)
    commit = _Committer(project, cat)
    try:
        # hashed before anything is parsed, so a rewrite after the hash shows up as a change next time
        prior = json.loads(cat.meta("racy") or "{}")
        again = rewritten(project, prior)
        # the last manifest says what the files table holds only if no update was cut short since
        manifest = None if full else cat.manifest()
        quick = None if manifest is None or cat.meta("settled") != "1" else found.changed_since(manifest)
        # a file whose stamp is the manifest's was racy then if it can be now: only those and the
        # changed ones can be (not a look at 50,000 mtimes)
        hashes = racy(project, found, now, None if quick is None else quick[0] + list(prior))
        if quick is not None:  # against the last complete scan: the catalog is asked about those only
            stats = found.stamps(quick[0] + again)  # not a dict of every file: only these are read
            stored = cat.files_at(quick[0] + quick[1] + again)
            changed = sorted(set(quick[0]) | {p for p in again if p in stats})
            removed = sorted(p for p in quick[1] if p in stored)
        else:
            stats = found.stats()
            stored = cat.files()
            changed = sorted(p for p in stats if p not in stored or stored[p][0] != stats[p] or p in again)
            removed = sorted(p for p in stored if p not in stats)
        pending = set(changed + removed)
        advance = _stage(on_stage, "reading the record", len(changed))
        claimed: dict[str, str] = {}  # id -> the file that holds it, in this update
        # under a time limit the batches are smaller, so the one that crosses it ends soon after
        for batch in _chunks(removed + changed, BATCH_FILES if until is None else max(1, BATCH_FILES // 5)):
            gone: list[str] = []
            fresh: dict[str, Item] = {}
            offsets: dict[str, int] = {}
            for rel in batch:
                if rel not in stats:
                    gone += cat.ids_at(rel)
                    continue
                start = _grown(project, rel, stored.get(rel), stats[rel])
                if not start:
                    gone += cat.ids_at(rel)
                items, offsets[rel] = read_items(project, rel, report.skipped, start)
                for item in items:
                    owner = claimed.get(item.id)
                    elsewhere = owner or cat.path_of(item.id)
                    if elsewhere and elsewhere != rel and (owner or elsewhere not in pending):
                        if item.source == COMMITTED:  # a session entry seen live and archived is one entry
                            report.skipped.append(f"{item.path}:1: duplicate id {item.id}: "
                                                  f"also used by {elsewhere}")
                        continue
                    claimed[item.id] = rel
                    fresh[item.id] = item
                advance(1)
            report.parsed += len(batch) - len([p for p in batch if p not in stats])
            with commit as c:
                # a re-read item keeps its vector row; `_update_vectors` re-embeds those whose text changed
                kept = c.vector_rows(list(fresh))
                dropped = c.vector_rows([i for i in gone if i not in fresh])
                c.delete(gone + list(fresh))
                c.add(list(fresh.values()))
                if gone or any(item.source == COMMITTED for item in fresh.values()):
                    c.set_meta(**{contents.META_KEY: ""})  # the record changed: `contents.keep` remakes it
                c.restore_vector_rows(kept)
                changed_text = [i for i, item in fresh.items() if kept.get(i, (0, ""))[1] != item.content_hash]
                _track_vectors(c, changed_text, {row for row, _ in dropped.values()}
                               | {kept[i][0] for i in changed_text if i in kept})
                if gone or fresh:  # a log that grew by bookkeeping only costs no text-index commit
                    writer = text.writer()
                    for item_id in dict.fromkeys(gone + list(fresh)):
                        writer.delete(item_id)
                    for item in fresh.values():
                        writer.add(item)
                    writer.commit(merge=merge)
                    report.unmerged = report.unmerged or (not merge and text.segments() >= MERGE_AT)
                c.set_files({p: (stats[p], offsets.get(p, 0)) for p in batch if p in stats},
                            [p for p in batch if p not in stats])
                c.set_meta(settled="0")
            if until is not None and time.monotonic() > until:
                report.done = False
                return report
        _update_vectors(project, commit, report, on_stage, until, warn)
        if report.done:
            with commit as c:
                contents.keep(c)
                c.set_manifest(found.parts, manifest)
                c.set_meta(racy=json.dumps(hashes) if hashes else "", built_at=str(int(time.time())),
                           settled="1")
        report.items = cat.count()
    finally:
        commit.close()
        cat.close()
        report.seconds = time.monotonic() - t0
    return report


def _update_vectors(project: Project, commit: _Committer, report: Report, on_stage: Stages | None,
                    until: float | None, warn: Callable[[str], None] | None = None) -> None:
    """Give every item the vector of its text under the model in use; sets `report`'s embedded,
    reused (from teammates' packs), vector_error (why there are no vectors), deferred and done.

    A text the model's store already holds (unchanged, or embedded before a switch to another model
    and back) is found by its hash; then rows a pulled pack has for the same model and text
    (`index.packs`); the rest are embedded BATCH_VECTORS at a time, each batch appended to the store
    and committed. Once more than GARBAGE of the store's rows belong to no item, it is compacted.

    Which items to look at comes from `_pending` (the ids the refreshes since the last complete phase
    changed), not from a scan of every item, and whether to compact from an upper bound on the rows
    that belong to no item, counted exactly only when the bound says it might be time: at 100,000
    session entries each of those queries is a scan of every row (~0.5 s). Under a deadline with the
    background builder on, the few texts left are not embedded here (the lean encoder alone costs a
    hook ~60 ms to load): they stay pending, searchable by full text, for the builder (`finish`)."""
    from . import vectors
    from .encoder import EncoderUnavailable

    cat = commit.cat
    try:
        ref = vectors.model_ref(project)
    except EncoderUnavailable as e:
        with commit as c:
            c.set_meta(model_id="", model_tried="", rows="0")
        report.vector_error = str(e)
        return
    store = vectors.Store(project.index_dir, ref.model_id)
    same = cat.meta("model_id") == ref.model_id and cat.meta("model_tried") == ref.model_id
    rows = int(cat.meta("rows") or 0) if same else 0
    if same and store.count < rows and warn:
        warn(f"stele: {project.rel(store.folder)} holds {store.count} of the {rows} vectors the index names; "
             "embedding the missing ones again")
    if not same or store.count < rows:  # another model, or rows lost: match every item again
        with commit as c:
            c.clear_vector_rows()
            c.set_meta(model_id=ref.model_id, model_tried=ref.model_id, rows=str(store.count),
                       dim=str(store.dim), vectors_done="0", vectors_garbage="")
        rows = store.count
    if until is None:  # a hook's refresh leaves it to a rebuild or the background builder
        _keep_background(project, ref)
    pending = _pending(cat)
    garbage = _garbage(cat)
    if pending == set() and garbage is not None and not _over(garbage, rows, 0):
        return  # no item's text came or changed, and no compaction due: nothing to look at
    need = cat.needing_vectors(rows, None if pending is None else sorted(pending))
    if garbage is None or _over(garbage, rows, len(need)):
        garbage = rows - cat.vector_rows_used(rows)  # counted in SQLite: the rows are read only to compact
    if not need and not _over(garbage, rows, 0):
        with commit as c:
            c.set_meta(vectors_done="1", vectors_pending="[]", vectors_garbage=str(garbage))
        return  # decided from the catalog alone: a refresh that embeds nothing loads nothing
    if until is not None and 0 < len(need) <= vectors.LEAN_MAX:
        from . import background

        if background.enabled():  # full text already finds them: the builder looks them up and embeds
            with commit as c:
                _set_pending(c, [i for i, _ in need])
                c.set_meta(vectors_garbage=str(garbage))
            report.deferred = len(need)
            return
    known = store.hash_rows([bytes.fromhex(h) for _, h in need]) if need else {}
    found = {i: (known[bytes.fromhex(h)], h) for i, h in need if bytes.fromhex(h) in known}
    missing = [(i, h) for i, h in need if i not in found]
    with commit as c:
        c.restore_vector_rows(found)
        _set_pending(c, [i for i, _ in missing])  # what a phase cut short from here leaves to the next
        c.set_meta(vectors_garbage=str(garbage))
    if until is not None and len(missing) > vectors.LEAN_MAX:
        from . import background

        if background.enabled():  # loading model2vec alone takes a hook's slice: leave bulk work to it
            report.done = False
            return
    reused = _from_packs(project, commit, store, ref.model_id, missing)
    report.reused = len(reused)
    missing = [(i, h) for i, h in missing if i not in reused]
    advance = _stage(on_stage, "embedding", len(missing))
    enc = None
    for batch in _chunks(missing, BATCH_VECTORS):
        if until is not None and time.monotonic() > until:
            report.done = False
            return
        try:
            bulk = len(missing) > vectors.LEAN_MAX
            enc = enc or vectors.load_encoder(ref, bulk=bulk, index_dir=project.index_dir)
            texts = cat.embed_texts([i for i, _ in batch])
            # a few texts: the query encoder's rows as they come (no numpy); many: numpy, batched
            matrix = vectors.embed(enc, texts, advance) if bulk else enc.encode(texts)
        except EncoderUnavailable as e:
            with commit as c:
                c.set_meta(model_id="", rows="0")
            report.vector_error = str(e)
            return
        _append(commit, store, batch, matrix)
        report.embedded += len(batch)
    if _over(garbage, store.count, 0):  # appended rows all belong to an item: the bound still holds
        garbage = store.count - cat.vector_rows_used(store.count)
    if _over(garbage, store.count, 0):
        live = cat.live_vectors(store.count)
        keep = list(dict.fromkeys(row for _, row, _ in live))
        moved = {row: n for n, row in enumerate(keep)}
        with commit as c:  # readers are held off while the rows move
            store.compact(keep)
            c.restore_vector_rows({i: (moved[row], h) for i, row, h in live})
            c.set_meta(rows=str(len(keep)))
        garbage = 0
    with commit as c:
        c.set_meta(vectors_done="1", vectors_pending="[]", vectors_garbage=str(garbage))
    store.touch()
    vectors.prune(project.index_dir, ref.model_id)


def _keep_background(project: Project, ref: Any) -> None:
    """The model's background rows (`vectors.background_file`), embedded once per model and kept in
    its store, so no read has to embed them. A model that cannot load leaves it to the next time."""
    from . import vectors
    from .encoder import EncoderUnavailable

    if vectors.background_file(project.index_dir, ref.model_id).is_file():
        return
    try:
        enc = vectors.load_encoder(ref, bulk=False, index_dir=project.index_dir)
        vectors.store_dir(project.index_dir, ref.model_id).mkdir(parents=True, exist_ok=True)
        vectors.keep_background(project.index_dir, ref.model_id, enc)
    except EncoderUnavailable:
        pass


def _over(garbage: int, rows: int, coming: int) -> bool:
    """Whether `garbage` of `rows` rows belonging to no item (with `coming` more to be added) is past
    GARBAGE, the share at which the store is compacted."""
    return garbage > GARBAGE * (rows - garbage + coming)


def _pending(cat: catalog_mod.Catalog) -> set[str] | None:
    """The items that may lack a valid vector (every other item has one); None: any item may (a bulk
    change, another model, or a catalog from before the ids were tracked)."""
    raw = cat.meta("vectors_pending")
    if cat.meta("vectors_done") != "1" or raw is None:
        return None
    return set(json.loads(raw or "[]"))


def _set_pending(c: catalog_mod.Catalog, ids: list[str]) -> None:
    if len(ids) > PENDING_MAX:
        c.set_meta(vectors_done="0", vectors_pending="")
    else:
        c.set_meta(vectors_done="1", vectors_pending=json.dumps(sorted(ids)))


def _garbage(cat: catalog_mod.Catalog) -> int | None:
    """At least how many vector rows belong to no item (None: not known)."""
    raw = cat.meta("vectors_garbage")
    return int(raw) if raw else None


def _track_vectors(c: catalog_mod.Catalog, ids: list[str], released: set[int]) -> None:
    """In a batch's transaction: `ids` were written with a text their vector row (if any) does not
    hold, and `released` rows may now belong to no item. The vector phase then looks at those items
    only, and counts the rows exactly only when the bound says a compaction may be due."""
    garbage = _garbage(c)
    if released and garbage is not None:
        c.set_meta(vectors_garbage=str(garbage + len(released)))
    pending = _pending(c)
    if ids and pending is not None:
        _set_pending(c, sorted(pending | set(ids)))


def _append(commit: _Committer, store: Any, batch: list[tuple[str, str]], matrix: Any) -> None:
    """Append `matrix` (rows for `batch`'s (id, hash), in order: numpy or a list of vectors) to the
    store, one row per distinct text, and point the items at their rows."""
    from . import vectors

    first_row: dict[str, int] = {}
    for n, (_, h) in enumerate(batch):
        first_row.setdefault(h, n)
    order = list(first_row)
    picked = [first_row[h] for h in order]
    unique = matrix[picked] if hasattr(matrix, "dtype") else [matrix[n] for n in picked]
    int8, f32, width = vectors.encode_rows(unique)
    if not store.dim:
        store.dim = width
    base = store.append(int8, f32, [bytes.fromhex(h) for h in order])
    at = {h: base + n for n, h in enumerate(order)}
    with commit as c:
        c.restore_vector_rows({i: (at[h], h) for i, h in batch})
        c.set_meta(rows=str(store.count), dim=str(store.dim))


def _from_packs(project: Project, commit: _Committer, store: Any, model_id: str,
                missing: list[tuple[str, str]]) -> set[str]:
    """Take the rows teammates' pulled packs hold for the same model and text; the ids taken."""
    if not missing:
        return set()
    from . import packs

    dim, rows_of = packs.reuse(project, commit.cat.paths([i for i, _ in missing]), missing, model_id)
    taken = [(i, h) for i, h in missing if i in rows_of]
    if not taken or (store.dim and dim != store.dim):
        return set()
    import numpy as np

    matrix = np.stack([np.frombuffer(rows_of[i], dtype="<f4") for i, _ in taken])
    _append(commit, store, taken, matrix)
    return {i for i, _ in taken}


def main(argv: list[str]) -> int:
    """`python -m stele.index.build ROOT`: the background builder (`background.py`). Each hook whose
    refresh left work starts one; a builder that finds another still waiting for its turn exits at
    once: that one reads the catalog only when its turn comes, so it does this one's work too."""
    try:
        project = Project(Path(argv[0]))
        queued = _Lock(project.index_dir, QUEUE_LOCK)
        try:
            queued.acquire(True, time.monotonic())  # one try
        except IndexUnavailable:
            queued.release()
            return 0
        try:
            finish(project, queued, leftover=True)
        finally:
            queued.release()
    except Exception:  # nobody is listening: the next read reports what is wrong
        return 1
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
