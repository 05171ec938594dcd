"""The vector half of the index: the one module (with the encoder) that imports numpy.

On-disk format, `.stele/index/vectors.npy`: a standard NumPy `.npy` file (format 1.0), float32, shape
(rows, dim), every row L2-normalised, so a dot product is the cosine. Which item a row belongs to, and
the hash of the text it embeds, are in the catalog (`items.vec_row`, `items.vec_hash`); the model id,
`dim` and `rows` are in the catalog's meta table. A row count or width that disagrees with the meta
means the file is damaged, and it is rebuilt. The file is replaced atomically (temp file + rename).

Embedding goes through `stele.index.encoder` (model2vec for bulk indexing, the lean encoder for a few
texts and queries; a test proves they agree). Anything wrong with the model raises
`EncoderUnavailable` (a `SteleError`), which callers turn into full-text mode.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .. import atomic
from ..errors import SteleError

if TYPE_CHECKING:
    import numpy as np

FILE = "vectors.npy"
BATCH = 512
# Below this many texts the lean encoder is cheaper than importing model2vec (~400 ms).
LEAN_MAX = 64


class NoModel(SteleError):
    """The embedding model cannot be used (wraps the encoder's own error, or its absence)."""


def model_ref(project: Any):
    """The resolved `embedding.model` (cheap: no model file is read)."""
    try:
        from .encoder import resolve
    except ImportError as e:  # the encoder is not installed: full text only
        raise NoModel(f"the embedding encoder is not available ({e})") from None
    try:
        return resolve(str(project.config["embedding.model"]), project.root)
    except SteleError as e:
        raise NoModel(str(e)) from None


def load_encoder(ref: Any, bulk: bool) -> Any:
    """An object with `.encode(list[str]) -> float32 rows, L2-normalised`: model2vec for bulk work,
    the lean encoder otherwise."""
    try:
        from . import encoder
    except ImportError as e:
        raise NoModel(f"the embedding encoder is not available ({e})") from None
    try:
        return encoder.index_encoder(ref) if bulk else encoder.query_encoder(ref)
    except SteleError as e:
        raise NoModel(str(e)) from None
    except Exception as e:  # a broken model must degrade to full text, never crash a read
        raise NoModel(f"embedding model {ref.ref!r} cannot be loaded ({type(e).__name__}: {e})") from None


def embed(enc: Any, texts: Sequence[str], advance: Callable[[int], None] | None = None) -> np.ndarray:
    import numpy as np

    parts = []
    for i in range(0, len(texts), BATCH):
        batch = list(texts[i:i + BATCH])
        parts.append(np.asarray(enc.encode(batch), dtype=np.float32))
        if advance:
            advance(len(batch))
    if not parts:
        return np.zeros((0, 0), dtype=np.float32)
    return normalize(np.concatenate(parts))


def assemble(ids: list[str], reused: dict[str, bytes], dim: int, embedded_ids: list[str],
             embedded: np.ndarray | None) -> np.ndarray:
    """Rows for `ids` in order: a pack's row (float32 bytes) where `reused` has one, else the next row
    of `embedded` (made for `embedded_ids`, in order). A pack of another width than the model's
    own rows is not used: raises NoModel-free ValueError only if nothing at all can be placed."""
    import numpy as np

    if embedded is not None and embedded.size and reused and embedded.shape[1] != dim:
        raise ValueError("vector packs of another width than the model")
    width = embedded.shape[1] if embedded is not None and embedded.size else dim
    out = np.zeros((len(ids), width), dtype=np.float32)
    where = {i: n for n, i in enumerate(embedded_ids)}
    for n, item_id in enumerate(ids):
        if item_id in reused:
            out[n] = np.frombuffer(reused[item_id], dtype="<f4")
        else:
            out[n] = embedded[where[item_id]]  # type: ignore[index]
    return out


def normalize(m: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms == 0, 1, norms)).astype(np.float32, copy=False)


def merge(old: np.ndarray | None, keep: list[int] | None, new: np.ndarray | None) -> np.ndarray:
    """The next matrix: the rows `keep` of `old` (all of them when None), then `new`."""
    import numpy as np

    parts = [] if old is None else [old if keep is None else old[keep]]
    if new is not None:
        parts.append(new)
    return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)


def save(folder: Path, matrix: np.ndarray) -> None:
    import numpy as np

    atomic.write(folder / FILE, lambda f: np.save(f, np.ascontiguousarray(matrix, dtype=np.float32)),
                 durable=False)  # derived: a lost write is rebuilt


def load(folder: Path, rows: int, dim: int) -> np.ndarray:
    """The matrix, memory-mapped; ValueError when it is not what the catalog says."""
    import numpy as np

    path = folder / FILE
    if rows == 0:
        return np.zeros((0, dim), dtype=np.float32)
    m = np.load(path, mmap_mode="r", allow_pickle=False)
    if m.dtype != np.float32 or m.ndim != 2 or m.shape != (rows, dim):
        raise ValueError(f"{path} holds {m.dtype} {m.shape}, expected float32 ({rows}, {dim})")
    return m


def top_k(matrix: np.ndarray, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The `k` rows most similar to `query` (one normalised vector): (row, cosine), best first."""
    import numpy as np

    if matrix.shape[0] == 0 or k <= 0:
        return []
    sims = matrix @ np.asarray(query, dtype=np.float32).reshape(-1)
    k = min(k, sims.shape[0])
    best = np.argpartition(-sims, k - 1)[:k]
    best = best[np.argsort(-sims[best], kind="stable")]
    return [(int(r), float(sims[r])) for r in best]
