"""The items nearest a query vector, the same whatever the index's history.

The vector store's rows follow the order texts were embedded in; rows no item uses any more stay until
a compaction; items with one text share one row; and a hook's refresh leaves the vectors of the few
items it added or edited to the background builder. So `nearest`:
- asks `vectors.top_k` for more rows until `k` items are found (rows no item uses take no place);
- gives every item of a row, ties by id;
- embeds here the items still waiting for the builder (at most `vectors.LEAN_MAX` are left to it one
  by one; more are a build under way, which `Index.behind` reports), with the query's encoder, the one
  the builder embeds a few texts with, so that a read while the builder runs ranks as one after it.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..plain import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .encoder import Encoder
    from .handle import Index


@dataclass
class Near:
    id: str
    cosine: float
    row: bytes  # its float32 vector (what its background figures are computed from)


def nearest(index: Index, enc: Encoder, query: Sequence[float], k: int) -> list[Near]:
    """The `k` items whose vectors are nearest `query` (one normalised vector), best first, ties by id
    (all of those tied with the k-th). Raises what the encoder raises."""
    from . import vectors

    if k <= 0:
        return []
    waiting = index.unembedded()
    found: list[Near] = []
    if waiting:
        rows = vectors.encode_rows(enc.encode(index.catalog.embed_texts(waiting)))[1]
        size = len(rows) // len(waiting)
        found += [Near(i, c, rows[n * size:(n + 1) * size])
                  for n, (i, c) in enumerate(zip(waiting, vectors.cosines(rows, query), strict=True))]
    matrix = index.matrix()
    skip = set(waiting)  # their rows, if any, hold an older text
    want = k
    while True:
        top = vectors.top_k(matrix, query, want)
        at = index.catalog.items_at_rows([r for r, _ in top])
        stored = [Near(i, c, matrix.float_row(r)) for r, c in top for i in at.get(r, ()) if i not in skip]
        if len(stored) >= k or len(top) < want:
            break
        want += k - len(stored)  # rows no item uses took places
    found = sorted(found + stored, key=lambda n: (-n.cosine, n.id))
    cut = min(k, len(found))
    while cut < len(found) and found[cut].cosine == found[cut - 1].cosine:
        cut += 1
    return found[:cut]
