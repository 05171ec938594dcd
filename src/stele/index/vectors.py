"""The vector half of the index: one store of int8 rows per embedding model, and the cosine scan.

On disk, `.stele/index/vectors/<model key>/` (one folder per model id, the newest KEEP_MODELS kept):
- `rows.i8`: int8, row-major, `dim` bytes a row, only ever appended to (or compacted, below). A row
  is an embedding scaled so that its largest component is +-127: the cosine of two such rows is the
  cosine of the float vectors to within a few thousandths, and 10,000 rows are 2.5 MB.
- `rows.f32`: the same rows as float32, L2-normalised, read only for the few candidates a scan keeps.
- `hashes`: the 20-byte SHA-1 of the text each row embeds (`Item.content_hash`), one per row.
- `model.json`: the model id and `dim`.
- `tokenizer.wp`: the model's vocabulary compiled for the query encoder's pure-Python tokenizer
  (`stele.index.wordpiece`), written by the first query that needs it.
Which row an item uses is in the catalog (`items.vec_row`, `vec_hash`, and `model_id`, `rows`, `dim` in
its meta) for the model in use. The store is addressed by content, so an edit that leaves the embedded
text alone embeds nothing, and switching the model and back finds every text already embedded. Rows
are appended before the catalog that names them commits: a crash leaves rows no item names yet, which
the next refresh finds by their hashes. A store whose two files disagree, or that is not what the
catalog says, is rebuilt from the hashes the rows still match (`Store.count`).

The scan is `simsimd` (SIMD kernels in C; ~1 ms to import and no numpy) over the memory-mapped int8
rows, with the query scaled the same way. int8 cannot tell apart cosines closer than a few thousandths
(measured on the bundled model: at most 0.0066 off the float cosine, over 218 queries x 10,300 rows), so
the scan keeps a margin of candidates (every row within MARGIN of the k-th, and at least 2k: MARGIN must
exceed twice that error, and 0.03 leaves room for models whose components are spikier) and ranks those
by their float32 rows, read from `rows.f32`: simsimd's float32 dot over all of them, then float64 for the
few within reach of the k-th (float32 sums can swap two cosines a millionth apart). The ranking is the
exact float ranking (tests/index/test_vectors.py checks it on the real model) at int8's memory cost, in
~7 ms at 10k rows where the pure-Python re-rank it replaced took 20-70 ms. Embedding goes through
`stele.index.encoder` (model2vec for bulk indexing, the lean encoder for a few texts and queries); any
problem with the model raises `EncoderUnavailable`, which callers turn into full-text mode.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import atomic
from ..errors import SteleError
from .encoder import EncoderUnavailable, ModelRef

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    import numpy as np

    from ..project import Project
    from .encoder import Encoder

DIR = "vectors"
ROWS, FLOATS, HASHES, META = "rows.i8", "rows.f32", "hashes", "model.json"
TOKENIZER = "tokenizer.wp"  # the query encoder's compiled vocabulary (stele.index.wordpiece)
MARGIN = 0.03  # of cosine: far beyond int8's error on these rows (measured: under 0.005)
# simsimd's float32 dot sums in float32: for unit vectors of 256 components its error is bounded by
# about 256 float32 roundings (1.5e-5); anything this close to the k-th is settled in float64.
F32_SLACK = 1e-4
DIGEST = 20  # bytes of one SHA-1
KEEP_MODELS = 3
FEW_WANTED = 256  # up to this many digests are looked up one by one rather than mapping every row
BATCH = 512
# Below this many texts the lean encoder is cheaper than importing model2vec (~400 ms).
LEAN_MAX = 64


def model_ref(project: Project) -> ModelRef:
    """The resolved `embedding.model` (cheap: no model file is read). Any problem with it, a bad
    config value included, is `EncoderUnavailable`: search goes on in full text."""
    from .encoder import resolve

    try:
        return resolve(str(project.config["embedding.model"]), project.root)
    except EncoderUnavailable:
        raise
    except SteleError as e:
        raise EncoderUnavailable(str(e)) from None


def wanted_model_id(project: Project) -> str:
    """The model id the vectors should have: "" when no model can be used."""
    try:
        return model_ref(project).model_id
    except EncoderUnavailable:
        return ""


def load_encoder(ref: ModelRef, bulk: bool, index_dir: Path | None = None) -> Encoder:
    """An object with `.encode(list[str]) -> float32 rows, L2-normalised`: model2vec for bulk work,
    the lean encoder otherwise (which keeps its compiled tokenizer in the model's store under
    `index_dir`). Whatever goes wrong loading it is `EncoderUnavailable`."""
    from . import encoder, query

    try:
        if bulk:
            return encoder.index_encoder(ref)
        table = store_dir(index_dir, ref.model_id) / TOKENIZER if index_dir is not None else None
        return query.query_encoder(ref, table)
    except EncoderUnavailable:
        raise
    except SteleError as e:
        raise EncoderUnavailable(str(e)) from None
    except Exception as e:  # a broken model (or a missing numpy) degrades to full text, never crashes a read
        raise EncoderUnavailable(f"embedding model {ref.ref!r} cannot be loaded "
                                 f"({type(e).__name__}: {e})") from None


def embed(enc: Encoder, texts: Sequence[str], advance: Callable[[int], None] | None = None) -> np.ndarray:
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


def normalize(m: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms == 0, 1, norms)).astype(np.float32, copy=False)


def quantize(m: np.ndarray) -> bytes:
    """Rows as int8, each scaled so its largest component is +-127 (a zero row stays zero)."""
    import numpy as np

    m = np.asarray(m, dtype=np.float32)
    peak = np.abs(m).max(axis=1, keepdims=True) if m.size else np.zeros((len(m), 1), dtype=np.float32)
    return np.rint(m * (127.0 / np.where(peak == 0, 1, peak))).astype(np.int8).tobytes()


def floats(m: np.ndarray) -> bytes:
    import numpy as np

    return np.ascontiguousarray(m, dtype=np.float32).tobytes()


def encode_rows(rows: Any) -> tuple[bytes, bytes, int]:
    """(int8 rows, float32 rows, width) of vectors, each L2-normalised: a numpy matrix from bulk
    embedding, or a list of vectors from the query encoder (then without numpy: a refresh that embeds
    a new session line or an edited fact stays off numpy's import)."""
    if hasattr(rows, "dtype"):
        m = normalize(rows)
        return quantize(m), floats(m), int(m.shape[1]) if m.ndim == 2 else 0
    from array import array

    int8, f32 = bytearray(), array("f")
    for vector in rows:
        values = [float(x) for x in vector]
        norm = sum(x * x for x in values) ** 0.5 or 1.0
        values = [x / norm for x in values]
        int8 += quantize_one(values)
        f32.extend(values)
    return bytes(int8), f32.tobytes(), len(rows[0]) if len(rows) else 0


def quantize_one(vector: Sequence[float]) -> bytes:
    """One query vector as `quantize` scales a row, without numpy (the query side)."""
    values = [float(x) for x in vector]
    peak = max((abs(x) for x in values), default=0.0) or 1.0
    return bytes(round(x * 127.0 / peak) & 0xFF for x in values)


def store_dir(index_dir: Path, model_id: str) -> Path:
    """The folder of one model's store (model ids hold ':', '/' and '@')."""
    return index_dir / DIR / (re.sub(r"[^A-Za-z0-9._-]", "_", model_id)[:120] or "_")


class Store:
    """One model's rows and their hashes. Writes happen under the index's exclusive lock."""

    def __init__(self, index_dir: Path, model_id: str, dim: int | None = None) -> None:
        self.folder = store_dir(index_dir, model_id)
        self.model_id = model_id
        self.dim = dim or self._meta_dim()

    def _meta_dim(self) -> int:
        try:
            data = json.loads((self.folder / META).read_text(encoding="utf-8"))
            return int(data["dim"]) if data.get("model_id") == self.model_id else 0
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    @property
    def count(self) -> int:
        """Whole rows that have their hash (a torn append is not a row)."""
        if not self.dim:
            return 0
        try:
            rows = (self.folder / ROWS).stat().st_size // self.dim
            floats = (self.folder / FLOATS).stat().st_size // (4 * self.dim)
            hashes = (self.folder / HASHES).stat().st_size // DIGEST
        except OSError:
            return 0
        return min(rows, floats, hashes)

    def hash_rows(self, wanted: Sequence[bytes] | None = None) -> dict[bytes, int]:
        """SHA-1 digest -> its first row: of every row, or only of the `wanted` digests. A refresh
        after one new session line wants one: it is searched for in the digests' bytes (C speed)
        instead of building a map of every row (100k rows: ~2 s in Python)."""
        n = self.count
        try:
            raw = (self.folder / HASHES).read_bytes()[:n * DIGEST]
        except OSError:
            return {}
        out: dict[bytes, int] = {}
        if wanted is not None and len(wanted) <= FEW_WANTED:
            for digest in dict.fromkeys(wanted):
                at = raw.find(digest)
                while at != -1 and at % DIGEST:  # a match straddling two digests is not this one
                    at = raw.find(digest, at + 1)
                if at != -1:
                    out[digest] = at // DIGEST
            return out
        for row in range(n):
            out.setdefault(raw[row * DIGEST:(row + 1) * DIGEST], row)
        return out

    def append(self, rows: bytes, floats: bytes, digests: list[bytes]) -> int:
        """Append rows (int8 and float32, `dim` each) and their digests; returns the first new row's
        number."""
        if len(rows) != len(digests) * self.dim or len(floats) != 4 * len(rows):
            raise ValueError("rows and digests disagree")
        self.folder.mkdir(parents=True, exist_ok=True)
        first = self.count
        if not (self.folder / META).is_file():
            atomic.write(self.folder / META, json.dumps({"model_id": self.model_id, "dim": self.dim}),
                         durable=False)
        for name, data, size in ((ROWS, rows, self.dim), (FLOATS, floats, 4 * self.dim),
                                 (HASHES, b"".join(digests), DIGEST)):
            with open(self.folder / name, "r+b" if (self.folder / name).exists() else "wb") as f:
                f.truncate(first * size)  # drop a torn tail, so the new rows start where `count` says
                f.seek(first * size)
                f.write(data)
        return first

    def compact(self, keep: list[int]) -> None:
        """Keep only rows `keep`, in that order (row `keep[i]` becomes row i)."""
        # hashes first: a crash between the renames leaves files of different lengths (or rows that
        # disagree with their hashes), `count` trusts only the shortest, and the refresh that follows
        # matches every item again by its hash (a wrong match costs a wrong neighbour, never a crash)
        for name, size in ((HASHES, DIGEST), (ROWS, self.dim), (FLOATS, 4 * self.dim)):
            data = (self.folder / name).read_bytes()
            atomic.write(self.folder / name, b"".join(data[r * size:(r + 1) * size] for r in keep),
                         durable=False)

    def digest_at(self, row: int) -> bytes:
        with open(self.folder / HASHES, "rb") as f:
            f.seek(row * DIGEST)
            return f.read(DIGEST)

    def touch(self) -> None:
        """Mark the store as the one in use (pruning keeps the most recently used)."""
        try:
            os.utime(self.folder / META)
        except OSError:
            pass


def prune(index_dir: Path, keep: str) -> None:
    """Delete the stores of all but the KEEP_MODELS most recently used models (never `keep`)."""
    import shutil

    root = index_dir / DIR
    try:
        stores = [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        return
    stores.sort(key=lambda p: (p / META).stat().st_mtime if (p / META).exists() else 0, reverse=True)
    for old in stores[KEEP_MODELS:]:
        if old != store_dir(index_dir, keep):
            shutil.rmtree(old, ignore_errors=True)


class Matrix:
    """The rows of the model in use, memory-mapped, as simsimd reads them."""

    def __init__(self, rows: Any, count: int, dim: int, keep: Any = None, floats: Any = None) -> None:
        self.rows = rows  # a (count, dim) int8 memoryview, or None when empty
        self.count = count
        self.dim = dim
        self._keep = keep  # the mmap the view points into
        self.floats = floats  # the float32 rows, memory-mapped

    @property
    def shape(self) -> tuple[int, int]:
        return (self.count, self.dim)

    def row(self, n: int) -> bytes:
        """Row `n` as int8 bytes."""
        return bytes(self._keep[n * self.dim:(n + 1) * self.dim]) if 0 <= n < self.count else b""

    def float_row(self, n: int) -> bytes:
        """Row `n` as little-endian float32 bytes (what a vector pack holds)."""
        size = 4 * self.dim
        return bytes(self.floats[n * size:(n + 1) * size]) if 0 <= n < self.count else b""


def load(index_dir: Path, model_id: str, rows: int, dim: int) -> Matrix:
    """The first `rows` rows of the model's store, memory-mapped; ValueError when the store holds fewer
    whole rows than the catalog says (damaged, or compaction interrupted)."""
    if rows == 0:
        return Matrix(None, 0, dim)
    store = Store(index_dir, model_id, dim)
    if store.count < rows:
        raise ValueError(f"{store.folder} holds {store.count} vectors, the catalog names {rows}")
    import mmap

    with open(store.folder / ROWS, "rb") as f:
        mm = mmap.mmap(f.fileno(), rows * dim, access=mmap.ACCESS_READ)
    with open(store.folder / FLOATS, "rb") as f:
        floats = mmap.mmap(f.fileno(), rows * dim * 4, access=mmap.ACCESS_READ)
    return Matrix(memoryview(mm).cast("b", (rows, dim)), rows, dim, mm, floats)


def top_k(matrix: Matrix, query: Sequence[float], k: int) -> list[tuple[int, float]]:
    """The `k` rows most similar to `query` (one normalised vector): (row, cosine), best first, ties
    by row, and more than `k` when rows tie with the k-th (the caller orders ties by id). Three passes, each over fewer rows and more exact than the one before: the int8 cosine over
    every row picks the candidates (all within MARGIN of the k-th), simsimd's float32 dot over their
    float32 rows keeps those within F32_SLACK of its k-th, and a float64 dot over those few decides the
    order and the cosines (float64 sums of float32 products, as the pure-Python scan this replaced
    computed them)."""
    if matrix.count == 0 or k <= 0:
        return []
    import heapq
    from array import array

    import simsimd

    dim = matrix.dim
    q8 = memoryview(quantize_one(query)).cast("b", (1, dim))
    found: Any = simsimd.cdist(q8, matrix.rows, metric="cosine", dtype="int8")
    values = memoryview(found).cast("B").cast("d").tolist()
    nearest = heapq.nsmallest(min(len(values), max(2 * k, k + 20)), values)
    limit = max(nearest[-1], nearest[min(k, len(nearest)) - 1] + MARGIN)
    candidates = [r for r, v in enumerate(values) if v <= limit]

    size = 4 * dim
    floats, f32_query = matrix.floats, array("f", [float(x) for x in query])
    gathered = b"".join([floats[r * size:(r + 1) * size] for r in candidates])
    approx = _dots(simsimd, gathered, f32_query, dim, "f", "float32")
    kth = heapq.nlargest(min(k, len(approx)), approx)[-1]
    close = [(r, i) for i, (r, v) in enumerate(zip(candidates, approx, strict=True)) if v >= kth - F32_SLACK]

    exact = cosines(b"".join([gathered[i * size:(i + 1) * size] for _, i in close]), query)
    scored = sorted(zip(exact, (r for r, _ in close), strict=True), key=lambda x: (-x[0], x[1]))
    while len(scored) > k and scored[k][0] == scored[k - 1][0]:
        k += 1  # rows tied with the k-th all come: rows follow the index's history, so no tie is cut by row
    return [(r, cos) for cos, r in scored[:k]]


def cosines(float_rows: bytes, query: Sequence[float]) -> list[float]:
    """The cosine of `query` with each of `float_rows` (normalised float32 rows, packed): float64 sums
    of float32 products, the figures `top_k` ranks by (any vector compared with its results must be
    compared this way, or an exact tie could part on the last bit)."""
    from array import array

    import simsimd

    dim = len(query)
    rows = array("d", array("f", float_rows))
    return _dots(simsimd, rows.tobytes(), array("d", [float(x) for x in query]), dim, "d", "float64")


def _dots(simsimd: Any, rows: bytes, query: Any, dim: int, code: Literal["f", "d"], dtype: str) -> list[float]:
    """The dot product of `query` with each row of `rows` (packed `code` values, `dim` a row)."""
    n = len(rows) // (dim * query.itemsize)
    if n == 0:
        return []
    matrix = memoryview(rows).cast("B").cast(code, (n, dim))
    q = memoryview(query).cast("B").cast(code, (1, dim))
    found: Any = simsimd.cdist(q, matrix, metric="dot", dtype=dtype)
    view: Any = memoryview(found).cast("B")
    dots: list[float] = view.cast("d").tolist()
    return dots


# -- the background: how close each fact sits to text it is not about ----------------------------------
#
# A static model puts some facts near almost everything: a long fact's mean embedding is close to every
# text of its domain, a generic one to every question. A cosine is evidence only by how far it stands
# above what the same fact scores against unrelated text. `background.txt` beside this module holds a
# fixed set of unrelated prompts (general programming and everyday requests, written once and never
# tuned to a record); their embeddings are kept in the model's store, and a fact's background is the
# mean and spread of its cosines to them (`background_of`).

BACKGROUND_TEXT = Path(__file__).with_name("background.txt")
BACKGROUND_DIGEST = "1a978803c50b"  # sha1 of the texts joined by newlines, first 12 hex digits


def background_texts() -> list[str]:
    lines = BACKGROUND_TEXT.read_text(encoding="utf-8").splitlines()
    return [x.strip() for x in lines if x.strip() and not x.startswith("#")]


def background_file(index_dir: Path, model_id: str) -> Path:
    """Where the background's float32 rows are kept: named by a digest of the texts, so a new set of
    background prompts is a new file. The digest is kept here (tests/index/test_vectors.py checks it
    against the file): hashing the texts on every read cost the prompt hook hashlib's import (OpenSSL's
    libcrypto, ~4 ms)."""
    return store_dir(index_dir, model_id) / f"background-{BACKGROUND_DIGEST}.f32"


def embed_background(enc: Encoder) -> bytes:
    """The background prompts' rows as float32 bytes, L2-normalised, embedded by the query encoder
    (the one a read uses, so a background computed by a read and one kept by a build are the same)."""
    return encode_rows(enc.encode(background_texts()))[1]


def keep_background(index_dir: Path, model_id: str, enc: Encoder) -> None:
    """Write the background of `model_id`'s store once (under the index lock)."""
    path = background_file(index_dir, model_id)
    if not path.is_file() and path.parent.is_dir():
        atomic.write(path, embed_background(enc), durable=False)


def read_background(index_dir: Path, model_id: str, dim: int) -> bytes | None:
    """The kept background, or None (none yet, or not whole)."""
    try:
        data = background_file(index_dir, model_id).read_bytes()
    except OSError:
        return None
    return data if dim and data and len(data) % (4 * dim) == 0 else None


def background_of(float_rows: Sequence[bytes], background: bytes) -> list[tuple[float, float]]:
    """(mean, standard deviation) of each float32 row's cosines to the background prompts ([] without
    a background)."""
    import simsimd

    if not float_rows or not background:
        return []
    size = len(float_rows[0])
    dim = size // 4
    a: Any = memoryview(b"".join(float_rows)).cast("B").cast("f", (len(float_rows), dim))
    nb = len(background) // size
    b: Any = memoryview(background).cast("B").cast("f", (nb, dim))
    found: Any = simsimd.cdist(a, b, metric="dot", dtype="float32")
    dots: list[float] = [float(x) for x in memoryview(found).cast("B").cast("d").tolist()]
    out = []
    for n in range(len(float_rows)):
        values = dots[n * nb:(n + 1) * nb]
        mean = sum(values) / nb
        var = sum((v - mean) ** 2 for v in values) / nb
        out.append((mean, var ** 0.5))
    return out
