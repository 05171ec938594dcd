"""The hook's query encoder: `LeanEncoder`'s arithmetic for the one query a hook embeds, in pure Python.

Split from `stele.index.encoder` (which resolves models and holds the two encoders that use
numpy) because it answers to a different budget: a hook that needs the embeddings must not pay
numpy's import (65-170 ms here) or `tokenizers`' (~50 ms, and ~30 ms to load tokenizer.json), so
everything here runs on the standard library and the model file: the pure WordPiece tokenizer of
`stele.index.wordpiece`, the query's few rows read from model.safetensors, and numpy's float32 steps
redone one by one so that the vectors are the same to the bit (`_mean`, `_norm32`).
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from pathlib import Path

from .encoder import (
    _FIX,
    _SLICE_ROWS,
    EncoderUnavailable,
    LeanEncoder,
    LeanUnsupported,
    Model2VecEncoder,
    ModelRef,
    _text_list,
    hub_cache_folder,
    index_encoder,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def query_encoder(ref: ModelRef, table: Path | None = None) -> QueryEncoder | Model2VecEncoder:
    """The encoder for a hook's query: lean when the model allows, model2vec otherwise; `table` is
    where the pure tokenizer's compiled vocabulary is kept (see `QueryEncoder`)."""
    folder = ref.path if ref.path is not None else hub_cache_folder(ref.ref)
    if folder is None:
        raise EncoderUnavailable(f"embedding model {ref.ref!r} is not downloaded yet: build the index once "
                                 f"with network access, or {_FIX}")
    try:
        return QueryEncoder(folder, table)
    except LeanUnsupported:
        return index_encoder(ModelRef(ref.ref, folder, ref.model_id))


_TINY32 = 1.000000023742228e-32  # float32(1e-32), which numpy adds to a float32 norm
# safetensors dtype -> (struct/array code, bytes) for the rows read here
_ROW_CODES = {"I8": ("b", 1), "F32": ("f", 4), "F64": ("d", 8)}


class QueryEncoder(LeanEncoder):
    """The lean encoder's arithmetic for the one query a hook embeds, without numpy (65-170 ms to
    import on these machines, more than the rest of a hook): the query's few rows are read from the
    memory-mapped model file and averaged in Python (a query has tens of tokens, so this is ~0.2 ms).
    Every float32 step numpy takes (the mean, the squares, numpy's pairwise sum of them, the root, the
    division) is taken in the same order and rounded to float32 the same way (`_mean`, `_norm32`), so
    the vectors equal the lean encoder's, and so model2vec's, to the bit (tests/index/test_encoder.py).
    Texts that need the whole matrix (hundreds of distinct tokens) go to the numpy lean encoder.

    Nor `tokenizers` (~80 ms to import and load) when the model's tokenizer is BERT's uncased
    WordPiece, as the bundled model's is: `stele.index.wordpiece` gives the same ids from a table
    compiled once into `table` (in the index folder; None compiles it in memory). A text with a
    character outside what that module proves equal loads `tokenizers` after all."""

    def __init__(self, folder: Path, table: Path | None = None) -> None:
        self._table = table
        self._wordpiece: Any = None
        super().__init__(folder)

    def _load_tokenizer(self) -> None:
        from . import wordpiece

        self._wordpiece = wordpiece.load(self.folder / "tokenizer.json", self._table)
        if self._wordpiece is None:
            LeanEncoder._load_tokenizer(self)
            return
        self.tokenizer: Any = None  # loaded only for a text the pure tokenizer leaves to it
        self.vocab_size = self._wordpiece.vocab_size
        self.unk_token_id = self._wordpiece.unk_id

    def median_token_length(self) -> int:
        if self._wordpiece is not None:
            return int(self._wordpiece.median_token_length)
        return LeanEncoder.median_token_length(self)

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        if self._wordpiece is not None:
            found = [self._wordpiece.encode(t) for t in texts]
            if all(ids is not None for ids in found):
                cut = [ids if self.max_length is None else ids[:self.max_length] for ids in found]
                return [[t for t in ids if t != self.unk_token_id] for ids in cut]
            if self.tokenizer is None:
                wordpiece, self._wordpiece = self._wordpiece, None
                LeanEncoder._load_tokenizer(self)
                self._wordpiece = wordpiece
        return LeanEncoder._tokenize(self, texts)

    def encode(self, texts: Sequence[str]) -> Any:
        texts = self._cut(_text_list(texts))
        ids = self._tokenize(texts)
        if self._dtype not in _ROW_CODES or sum(map(len, ids)) > _SLICE_ROWS:
            return LeanEncoder.encode(self, texts)
        from array import array

        code, width = _ROW_CODES[self._dtype]
        rows = self._rows(sorted(set(chain.from_iterable(ids))), code, width)
        out = []
        for id_list in ids:
            if not id_list:
                out.append([0.0] * self.dim)
                continue
            mean = _mean(self._dtype, [rows[token] for token in id_list])
            if self.normalize:
                norm = array("f", [_norm32(mean) + _TINY32])[0]  # numpy adds 1e-32 as a float32
                mean = array("f", [x / norm for x in mean])
            out.append(list(mean))
        return out

    def _rows(self, tokens: list[int], code: str, width: int) -> dict[int, Any]:
        from array import array

        row_bytes = self.dim * width
        out = {}
        with open(self.folder / "model.safetensors", "rb") as f:
            for token in tokens:
                f.seek(self._data_start + token * row_bytes)
                out[token] = array(code, f.read(row_bytes))
        return out


def _mean(dtype: str, rows: list[Any]) -> Any:
    """numpy's `matrix[ids].mean(axis=0)` for one text's rows, as float32 (what the lean encoder keeps):
    integer rows sum exactly in float64; float32 rows sum in float32, one row after the other, as numpy
    adds along a non-contiguous axis; float64 rows in float64. Each step is done in Python's float64
    and rounded to float32 by `array("f")`, which for one addition or division is float32's own result."""
    from array import array

    n = len(rows)
    sums = list(rows[0])
    for row in rows[1:]:
        sums = [a + b for a, b in zip(sums, row, strict=True)]
        if dtype == "F32":
            sums = list(array("f", sums))
    return array("f", [x / n for x in sums])


def _norm32(v: Any) -> float:
    """`np.linalg.norm` of a float32 vector to the bit: float32 squares, numpy's pairwise sum of them in
    float32 (blocks of at most 128 summed in 8 interleaved lanes, halved above that), a float32 root."""
    from array import array

    squares = array("f", [x * x for x in v])

    def pairwise(lo: int, n: int) -> float:
        if n < 8:
            total = 0.0
            for x in squares[lo:lo + n]:
                total = array("f", [total + x])[0]
            return total
        if n <= 128:
            lanes = squares[lo:lo + 8]
            end = lo + n - n % 8
            for i in range(lo + 8, end, 8):
                lanes = array("f", [a + b for a, b in zip(lanes, squares[i:i + 8], strict=True)])
            r = lanes
            pairs = array("f", [r[0] + r[1], r[2] + r[3], r[4] + r[5], r[6] + r[7]])
            quads = array("f", [pairs[0] + pairs[1], pairs[2] + pairs[3]])
            total = array("f", [quads[0] + quads[1]])[0]
            for x in squares[end:lo + n]:
                total = array("f", [total + x])[0]
            return total
        half = n // 2
        half -= half % 8
        return array("f", [pairwise(lo, half) + pairwise(lo + half, n - half)])[0]

    return array("f", [pairwise(0, len(squares)) ** 0.5])[0]
