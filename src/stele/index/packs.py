"""Vector packs: the index's vectors for one session segment, shared through the team store.

A pack holds, for the entries of one segment, the float32 row this index embedded and the content
hash of the text it embedded (the format is `session.segment`'s). Pushing reads the local index as
it stands (shared lock, no refresh: a hook must not embed to push); entries without a current
vector are left out. Pulling stores the pack for this clone's model id beside its segment
(`<seq>.vec`). `reuse()` is what the index asks while refreshing: for the items it would embed,
the rows a pulled pack already has for the same model and the same text.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..project import Project
from ..teamstore import segment as seg
from .. import wal
from ..teamstore.remote import Remote
from ..teamstore.sync import Pulled, Pushed, write_file

PACK_SUFFIX = ".vec"


def push(project: Project, remote: Remote, store: Any, pushed: Pushed) -> None:
    found = _local_rows(project, pushed.ids)
    if found is None:
        return
    model_id, dim, rows = found
    ids = [i for i in pushed.ids if i in rows]
    if not ids:
        return
    data = seg.encode_pack(model_id, dim, ids, [rows[i][0] for i in ids], b"".join(rows[i][1] for i in ids))
    store.put_new(seg.pack_key(remote.prefix, model_id, pushed.session, pushed.seq), data)


def pull(project: Project, remote: Remote, store: Any, model_id: str, pulled: Pulled) -> None:
    data = store.get(seg.pack_key(remote.prefix, model_id, pulled.session, pulled.seq))
    if data is None:
        return
    pack = seg.decode_pack(data)  # ValueError (BadSegment) when damaged: the caller notes it
    if pack.model_id != model_id:
        return
    write_file(pulled.path.with_suffix(PACK_SUFFIX), data)


def _local_rows(project: Project, ids: list[str]) -> tuple[str, int, dict[str, tuple[str, bytes]]] | None:
    """(model id, dim, id -> (content hash, float32 row bytes)) from the index as it stands, or None."""
    from .build import CATALOG, shared_lock
    from .catalog import Catalog

    if not (project.index_dir / CATALOG).is_file():
        return None
    with shared_lock(project):
        cat = Catalog(project.index_dir / CATALOG)
        try:
            model_id, rows, dim = cat.meta("model_id"), int(cat.meta("rows") or 0), int(cat.meta("dim") or 0)
            if not model_id or not rows:
                return None
            wanted = {i: (row, h) for i, (row, h) in cat.vector_rows(ids).items() if row < rows}
            hashes = cat.hashes(list(wanted))
            from . import vectors

            matrix = vectors.load(project.index_dir, rows, dim)
            out = {i: (h, matrix[row].astype("<f4").tobytes()) for i, (row, h) in wanted.items()
                   if hashes.get(i) == h}
            return model_id, dim, out
        finally:
            cat.close()


def reuse(project: Project, paths: dict[str, str], need: list[tuple[str, str]], model_id: str
          ) -> tuple[int, dict[str, bytes]]:
    """For items to embed (`need`: (id, content hash); `paths`: id -> source path), the rows pulled
    packs hold for the same model and text: (dim, id -> float32 row bytes)."""
    team = project.rel(wal.team_dir(project)).rstrip("/") + "/"
    by_file: dict[str, list[tuple[str, str]]] = {}
    for item_id, h in need:
        path = paths.get(item_id, "")
        if path.startswith(team):
            by_file.setdefault(path, []).append((item_id, h))
    dim, out = 0, {}
    for rel, wanted in by_file.items():
        pack = _read_pack(project.root / Path(rel).with_suffix(PACK_SUFFIX))
        if pack is None or pack.model_id != model_id or (dim and pack.dim != dim):
            continue
        dim = pack.dim
        where = {i: n for n, i in enumerate(pack.ids)}
        for item_id, h in wanted:
            n = where.get(item_id)
            if n is not None and pack.hashes[n] == h:
                out[item_id] = pack.row(n)
    return dim, out


def _read_pack(path: Path) -> seg.Pack | None:
    try:
        return seg.decode_pack(path.read_bytes())
    except (OSError, ValueError):
        return None
