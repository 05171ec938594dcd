"""One update of the index: re-read the source files that changed since the manifest in the catalog
(a live session log only from where the last update stopped), in committed batches of BATCH_FILES,
then the vector phase (`vectorphase.py`). The caller holds the build lock (`build.py`)."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from ..project import Project
from . import catalog as catalog_mod
from . import contents
from .handle import (
    BUILD_LOCK,
    CATALOG,
    INDEX_VERSION,
    LOCK,
    QUEUE_LOCK,
    TEXT_DIR,
    Committer,
    Lock,
    Report,
    Stages,
    chunks,
    open_parts,
    stage,
)
from .items import COMMITTED, Item
from .sources import Scan, Stamp, is_wal, racy, read_items, rewritten
from .vectorphase import track_vectors, update_vectors

BATCH_FILES = 500


def wipe(folder: Path) -> None:
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


def grown(project: Project, rel: str, before: tuple[Stamp, int] | None, now: Stamp) -> int:
    """Where to resume reading a live session log that only grew since it was indexed (0: read it
    whole). Logs are appended to and never rewritten in place; compaction moves them away whole."""
    if before is None or not rel.endswith(".jsonl") or not is_wal(project, rel):
        return 0
    (_mtime, size, ino), offset = before
    return offset if ino == now[2] and now[1] >= size and 0 < offset <= now[1] else 0


# A hook's read leaves the catalog alone while the sources differ from its manifest only by lines the
# index skips, appended to at most DEFER_FILES live session logs holding at most DEFER_BYTES unread
# (`bookkeeping_only`); past either, the next read's refresh records them, in one commit.
DEFER_FILES = 16
DEFER_BYTES = 32 * 1024


def bookkeeping_only(project: Project, cat: catalog_mod.Catalog, found: Scan, manifest: list[bytes] | None) -> bool:
    """Whether `found` differs from `manifest` (the scan `cat` was last brought up to date with) only
    by lines appended to live session logs (or new ones) that hold no item: delivery notes, restarts,
    goal-less starts (`sessions.is_bookkeeping`), which every hook writes. Then the index already says
    all it would say after a refresh, and a read answers from it without writing: a refresh would
    commit new stamps and offsets only, and each catalog commit costs a hook four fsyncs (the WAL's
    creation and the checkpoint when the last connection closes; 5-40 ms of wall). The lines are read
    again by each read until a refresh records them, so their number is bounded (DEFER_FILES,
    DEFER_BYTES); a log that was rewritten or replaced, a file gone, or a line that does not parse
    (`skipped`) is never deferred."""
    quick = found.changed_since(manifest)
    if quick is None:
        return False
    changed, removed = quick
    if removed or not changed or len(changed) > DEFER_FILES:
        return False
    if not all(p.endswith(".jsonl") and is_wal(project, p) for p in changed):
        return False
    stats = found.stamps(changed)
    stored = cat.files_at(changed)
    starts: dict[str, int] = {}
    for p in changed:
        if p not in stats:
            return False
        start = grown(project, p, stored.get(p), stats[p])
        if not start and p in stored:  # not only appended to: what it held may have to go
            return False
        starts[p] = start
    if sum(stats[p][1] - start for p, start in starts.items()) > DEFER_BYTES:
        return False
    skipped: list[str] = []
    for p, start in starts.items():
        items, _ = read_items(project, p, skipped, start)
        if items or skipped:
            return False
    return True


def create(project: Project) -> None:
    from .text import TextIndex

    lock = Lock(project.index_dir)
    try:
        lock.acquire(True, None)
        wipe(project.index_dir)
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
        create(project)
    cat, text = open_parts(project)
    commit = Committer(project, cat)
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
        advance = stage(on_stage, "reading the record", len(changed))
        claimed: dict[str, str] = {}  # id -> the file that holds it, in this update
        # under a time limit the batches are smaller, so the one that crosses it ends soon after
        for batch in chunks(removed + changed, BATCH_FILES if until is None else max(1, BATCH_FILES // 5)):
            gone: list[str] = []
            fresh: dict[str, Item] = {}
            offsets: dict[str, int] = {}
            for rel in batch:
                if rel not in stats:
                    gone += cat.ids_at(rel)
                    continue
                start = grown(project, rel, stored.get(rel), stats[rel])
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
                # a re-read item keeps its vector row; `update_vectors` re-embeds those whose text changed
                kept = c.vector_rows(list(fresh))
                dropped = c.vector_rows([i for i in gone if i not in fresh])
                c.delete(gone + list(fresh))
                c.add(list(fresh.values()))
                if gone or any(item.source == COMMITTED for item in fresh.values()):
                    c.set_meta(**{contents.META_KEY: ""})  # the record changed: `contents.keep` remakes it
                c.restore_vector_rows(kept)
                changed_text = [i for i, item in fresh.items() if kept.get(i, (0, ""))[1] != item.content_hash]
                track_vectors(c, changed_text, {row for row, _ in dropped.values()}
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
        update_vectors(project, commit, report, on_stage, until, warn)
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
