"""Keeping `.stele/index/` in step with the record and the WAL: open, refresh, rebuild.

Every read goes through `open_index()`, which stats the source files (no parsing), compares the scan
with the manifest in the catalog and re-indexes only what changed: a changed fact file is parsed again,
a live WAL log that only grew is read from where the last refresh stopped, an item whose embedded text
did not change keeps its vector. Lines that add no item (the delivery notes every hook appends) leave
the index fresh and are recorded by a later refresh (`update.bookkeeping_only`): a read writes nothing
for them. Deleting the folder loses nothing: the next open builds it again. A
damaged file is reported in one line and rebuilt.

Work is done in committed batches (`update.py`: BATCH_FILES files, then `vectorphase.py`: the vectors
BATCH_VECTORS at a time; the locks and the commits are `handle.py`'s): a kill, a crash or a time budget loses at most the batch under way, and the next open carries on from
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

import time
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from ..project import Project
from . import catalog as catalog_mod
from . import update as update_mod
from .catalog import IndexUnavailable
from .handle import (
    BUILD_LOCK,
    CATALOG,
    QUEUE_LOCK,
    TEXT_DIR,
    Committer,
    Index,
    Lock,
    Report,
    Stages,
    catalog_meta,
    open_catalog,
    open_parts,
    pending_vectors,
    why,
)
from .sources import Scan, scan
from .vectorphase import update_vectors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SLICE_S = 2.0  # the most a read with a deadline spends catching up before it hands the rest over
WAIT_S = 0.5  # how long such a read waits for another process's refresh before reading what is there
RESERVE_S = 1.0  # of a deadline, kept for answering


def _stale(project: Project, cat: catalog_mod.Catalog, found: Scan) -> bool:
    if cat.meta("racy") or cat.meta("settled") != "1":
        return True  # racy: `update` checks them by content; not settled: an update was cut short
    manifest = cat.manifest()
    if manifest != found.parts and not update_mod.bookkeeping_only(project, cat, found, manifest):
        return True  # (bookkeeping lines appended to session logs add nothing to the index)
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
        cat, text = open_parts(project)
    except Exception as e:  # missing, damaged or outdated: build it again
        if warn and (project.index_dir / CATALOG).exists():
            state = str(e) if isinstance(e, catalog_mod.OutdatedIndex) else f"is unreadable ({why(e)})"
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
    lock = Lock(project.index_dir)
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
                parts = open_parts(project)
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
        raise IndexUnavailable(f"the index cannot be opened ({why(e)}); run `stele rebuild`") from e
    except BaseException:
        lock.release()
        raise


def open_if_fresh(project: Project, deadline: float | None = None) -> Index | None:
    """The index open for reading when it is up to date with the sources, else None: a read that never
    writes, so the process doing it may be killed at any point (the resident server's spare child,
    `cli/resident/spare.py`)."""
    lock = Lock(project.index_dir)
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

    builder = Lock(project.index_dir, BUILD_LOCK)
    report = None
    try:
        now = time.monotonic()
        try:
            builder.acquire(True, now)  # free: nobody can have refreshed since our scan
        except IndexUnavailable:
            # a refresh of an index that was whole is worth waiting for (every refresh leaves `settled`
            # at 0 between its first batch and its end); a build from nothing is not
            wait = WAIT_S if catalog_meta(project, "built_at") is not None else 0.0
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
        if not (full and deadline is not None and len(found.paths) > update_mod.BATCH_FILES and background.enabled()):
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


def finish(project: Project, queued: Lock | None = None, leftover: bool = False) -> Report:
    """Bring the index up to date with no time limit, waiting for any other builder first: what a
    hook's refresh left, too (the vectors of the items it added, tantivy's merges). `queued` (the
    builder's QUEUE_LOCK) is let go once it is this process's turn: from then on a builder started by
    the next hook waits for it. With `leftover` (the background builder), an index whose last update
    ran to its end gets only that update's leftovers, without a scan of the sources (at 50,000 facts
    the scan was most of the builder's time; the next read scans anyway)."""
    builder = Lock(project.index_dir, BUILD_LOCK)
    try:
        builder.acquire(True, None)
        if queued is not None:
            queued.release()
        if leftover and catalog_meta(project, "settled") == "1":
            report = _leftovers(project)
        else:
            found = scan(project)
            parts, full = _try_open(project, found, None)
            if parts is None:
                report = _update_or_rebuild(project, full, found, None, None, None)
            else:
                cat = parts[0]
                try:
                    pending = pending_vectors(cat)
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
    commit = Committer(project, cat)
    try:
        update_vectors(project, commit, report, None, None)
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
    lock = Lock(project.index_dir)
    try:
        lock.acquire(True, None)  # the merge deletes the merged segments' files: no reader may be opening them
        text.merge()
    finally:
        lock.release()


def _update_or_rebuild(project: Project, full: bool, found: Scan, warn: Callable[[str], None] | None,
                       on_stage: Stages | None, until: float | None) -> Report:
    if not full:
        try:
            return update_mod.update(project, False, found, on_stage, until, warn)
        except Exception as e:  # a damaged part that opened fine: start over (an OutOfTime is no Exception)
            if warn:
                warn(f"stele: refreshing the index failed ({why(e)}); rebuilding it")
    return update_mod.update(project, True, found, on_stage, until, warn)


def rebuild(project: Project, on_stage: Stages | None = None) -> Report:
    """Throw the index away and build it from the record and the WAL."""
    if not project.stele_dir.is_dir():
        raise IndexUnavailable("Stele is not set up in this repository: run `stele init`")
    builder = Lock(project.index_dir, BUILD_LOCK)
    try:
        builder.acquire(True, None)
        return update_mod.update(project, True, scan(project), on_stage)
    finally:
        builder.release()


def main(argv: list[str]) -> int:
    """`python -m stele.index.build ROOT`: the background builder (`background.py`). Each hook whose
    refresh left work starts one; a builder that finds another still waiting for its turn exits at
    once: that one reads the catalog only when its turn comes, so it does this one's work too."""
    try:
        project = Project(Path(argv[0]))
        queued = Lock(project.index_dir, QUEUE_LOCK)
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
