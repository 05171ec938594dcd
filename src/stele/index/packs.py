"""Vector packs: the index's vectors for one session segment, shared through the team store.

A pack holds, for the entries of one segment, the float32 row the writer's index embedded and the
content hash of the text it embedded (the format is `session.segment`'s). `index.teamsync` pushes
and pulls them; a pulled pack sits beside its segment (`<seq>.vec`). `reuse()` is what the index
asks while refreshing: for the items it would embed, the rows a pulled pack already has for the
same model and the same text. (Kept apart from teamsync, which reads the index to push: build
imports this module, and must not import the one that imports build.)
"""
from __future__ import annotations

from pathlib import Path

from ..project import Project
from ..session import segment as seg
from ..session import wal

PACK_SUFFIX = ".vec"


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
