"""The vector phase of an update: give every item the vector of its text under the model in use,
reusing what the model's store and teammates' packs already hold, embedding the rest in committed
batches, and compacting the store when too many of its rows belong to no item (`update_vectors`)."""
from __future__ import annotations

import json
import time
from collections.abc import Callable

from ..project import Project
from . import catalog as catalog_mod
from .handle import Committer, Report, Stages, chunks, pending_vectors, stage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GARBAGE = 0.25  # compact a model's vectors when more than this share of its rows belong to no item

BATCH_VECTORS = 2048
# Items that may lack a valid vector, tracked by id (meta `vectors_pending`) so that the vector phase of a
# small refresh asks SQLite about those only; past this many it looks at every item (a bulk change).
PENDING_MAX = 1024


def update_vectors(project: Project, commit: Committer, report: Report, on_stage: Stages | None,
                    until: float | None, warn: Callable[[str], None] | None = None) -> None:
    """Give every item the vector of its text under the model in use; sets `report`'s embedded,
    reused (from teammates' packs), vector_error (why there are no vectors), deferred and done.

    A text the model's store already holds (unchanged, or embedded before a switch to another model
    and back) is found by its hash; then rows a pulled pack has for the same model and text
    (`index.packs`); the rest are embedded BATCH_VECTORS at a time, each batch appended to the store
    and committed. Once more than GARBAGE of the store's rows belong to no item, it is compacted.

    Which items to look at comes from `pending_vectors` (the ids the refreshes since the last complete phase
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
        keep_background(project, ref)
    pending = pending_vectors(cat)
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
                set_pending(c, [i for i, _ in need])
                c.set_meta(vectors_garbage=str(garbage))
            report.deferred = len(need)
            return
    known = store.hash_rows([bytes.fromhex(h) for _, h in need]) if need else {}
    found = {i: (known[bytes.fromhex(h)], h) for i, h in need if bytes.fromhex(h) in known}
    missing = [(i, h) for i, h in need if i not in found]
    with commit as c:
        c.restore_vector_rows(found)
        set_pending(c, [i for i, _ in missing])  # what a phase cut short from here leaves to the next
        c.set_meta(vectors_garbage=str(garbage))
    if until is not None and len(missing) > vectors.LEAN_MAX:
        from . import background

        if background.enabled():  # loading model2vec alone takes a hook's slice: leave bulk work to it
            report.done = False
            return
    reused = _from_packs(project, commit, store, ref.model_id, missing)
    report.reused = len(reused)
    missing = [(i, h) for i, h in missing if i not in reused]
    advance = stage(on_stage, "embedding", len(missing))
    enc = None
    for batch in chunks(missing, BATCH_VECTORS):
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


def keep_background(project: Project, ref: Any) -> None:
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


def set_pending(c: catalog_mod.Catalog, ids: list[str]) -> None:
    if len(ids) > PENDING_MAX:
        c.set_meta(vectors_done="0", vectors_pending="")
    else:
        c.set_meta(vectors_done="1", vectors_pending=json.dumps(sorted(ids)))


def _garbage(cat: catalog_mod.Catalog) -> int | None:
    """At least how many vector rows belong to no item (None: not known)."""
    raw = cat.meta("vectors_garbage")
    return int(raw) if raw else None


def track_vectors(c: catalog_mod.Catalog, ids: list[str], released: set[int]) -> None:
    """In a batch's transaction: `ids` were written with a text their vector row (if any) does not
    hold, and `released` rows may now belong to no item. The vector phase then looks at those items
    only, and counts the rows exactly only when the bound says a compaction may be due."""
    garbage = _garbage(c)
    if released and garbage is not None:
        c.set_meta(vectors_garbage=str(garbage + len(released)))
    pending = pending_vectors(c)
    if ids and pending is not None:
        set_pending(c, sorted(pending | set(ids)))


def _append(commit: Committer, store: Any, batch: list[tuple[str, str]], matrix: Any) -> None:
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


def _from_packs(project: Project, commit: Committer, store: Any, model_id: str,
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
