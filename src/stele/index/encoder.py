"""Text to vectors: which model `embedding.model` names, and the two encoders that run it.

Shaped by the hook's cold-start budget (DESIGN.md section 9). `import model2vec` costs ~170 ms and its
loader ~200 ms more, while a hook has to answer in well under a second. So there are two encoders over
one model: `index_encoder` goes through model2vec itself and embeds in bulk when the index is built;
`query_encoder` returns `QueryEncoder`, which re-implements model2vec 0.10's `StaticModel.encode` for
the one query a hook embeds: in pure Python over the query's few rows of the model file, and with the
pure WordPiece tokenizer of `stele.index.wordpiece` where the model's tokenizer allows (its numpy
sibling `LeanEncoder` takes texts too long for that). Tests prove their vectors equal. This module is
the one home of those four libraries for embeddings, and imports each inside the function that needs it,
so importing it is free.

Any model that cannot be used raises `EncoderUnavailable` (one line, what to do next); callers catch it
and degrade to full-text search. A Hugging Face hub id is downloaded once by model2vec, into the usual
Hugging Face cache, when the index is first built (that needs the network; with HF_HUB_OFFLINE=1 a
missing model fails at once instead of waiting on a timeout). The query side only reads that cache and
never downloads, so a hook cannot hang on the network.
"""
from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from functools import cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import SteleError
from ..plain import dataclass
from ..textcut import error_line

if TYPE_CHECKING:
    import numpy as np

BUNDLED = "bundled"
BUNDLED_DIR = Path(__file__).parent.parent / "bundled_model"
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")
SUMS_FILE = "SHA256SUMS"
DEFAULT_MAX_LENGTH = 512  # model2vec's default when config.json has no max_length
_SLICE_ROWS = 256  # above this many tokens one read of the whole matrix beats reading rows
# safetensors dtype -> the dtype model2vec's encode returns for it (int8 means are float32).
_OUT_DTYPES = {"I8": "float32", "F16": "float16", "F32": "float32", "F64": "float64"}
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_FIX = "set embedding.model in .stele/config.yaml to 'bundled' or a model2vec folder"


class EncoderUnavailable(SteleError):
    """The embedding model cannot be loaded; search degrades to full text."""


class LeanUnsupported(EncoderUnavailable):
    """A valid model the lean encoder does not implement; model2vec can still run it."""


class Encoder(Protocol):
    """What indexing and search need of an encoder (both below, and the tests' fake, are one)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class ModelRef:
    """A resolved `embedding.model`: `path` is the model folder (None for a hub id) and `model_id`
    changes whenever the model does, so the index knows when to re-embed."""

    ref: str
    path: Path | None
    model_id: str


def resolve(ref: str, root: Path) -> ModelRef:
    """Name the model `ref` points at, cheaply: no model file is read (a hook resolves on every call)."""
    ref = ref.strip()
    if not ref:
        raise EncoderUnavailable(f"embedding.model is empty: {_FIX}")
    if ref == BUNDLED:
        return ModelRef(ref, BUNDLED_DIR, f"{BUNDLED}@{_bundled_digest()}")
    path = Path(ref).expanduser()
    if not path.is_absolute():
        path = root / path
    # Like model2vec, an existing folder wins over a hub id of the same spelling.
    if path.is_dir() or not _HUB_ID.match(ref):
        return ModelRef(ref, path, f"{path.name}@{_stat_digest(path)}")
    return ModelRef(ref, None, f"hub:{ref}")


def model_problem(ref: str, root: Path) -> str | None:
    """Why the configured model cannot embed, found cheaply (no model file is read), naming its path;
    None when it looks loadable. What `stele doctor` and a full-text-only recall say."""
    try:
        resolved = resolve(ref, root)
    except EncoderUnavailable as e:
        return str(e)
    folder = resolved.path if resolved.path is not None else hub_cache_folder(resolved.ref)
    if folder is None:
        return f"embedding model {resolved.ref!r} is not downloaded (no copy in the Hugging Face cache): build " \
               f"the index once with network access, or {_FIX}"
    if not folder.is_dir():
        return f"embedding model folder {folder} does not exist: {_FIX}"
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if missing and not (folder / "config_sentence_transformers.json").is_file():
        return f"embedding model folder {folder} lacks {', '.join(missing)}: {_FIX}"
    return None


@cache  # files shipped inside the package: read once per process (a recall resolves the model twice)
def _bundled_digest() -> str:
    # The release script records content sums; reading them costs far less than hashing 8 MB per hook.
    try:
        sums: dict[str, str] = {}  # file name -> sha256, from `sha256sum` lines
        for line in (BUNDLED_DIR / SUMS_FILE).read_text(encoding="utf-8").splitlines():
            if line.strip():
                digest, name = line.split(None, 1)
                sums[name] = digest
        # the sums are SHA-256s already: their heads name the content (hashing them again would cost
        # every read hashlib's import)
        return "".join(sums[name].strip()[:4] for name in MODEL_FILES)
    except (OSError, ValueError, KeyError):
        return _stat_digest(BUNDLED_DIR)


def _stat_digest(folder: Path) -> str:
    # Size and mtime stand in for content: any copy or rewrite of a model changes them, and a
    # spurious change only costs one re-embedding.
    parts = []
    for name in MODEL_FILES:
        try:
            st = (folder / name).stat()
            parts.append(f"{name} {st.st_size} {st.st_mtime_ns}\n")
        except OSError:
            parts.append(f"{name} missing\n")
    import hashlib

    return hashlib.sha256("".join(parts).encode()).hexdigest()[:12]


def hub_cache_folder(name: str) -> Path | None:
    """The cached snapshot model2vec would load for hub id `name` without downloading, or None.

    Mirrors `model2vec.persistence.hf.maybe_get_cached_model_path` and huggingface_hub's cache
    location, so the query side can find the model without importing either."""
    if name.count("/") != 1:
        return None
    home = os.getenv("HF_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "huggingface"))
    cache = os.getenv("HF_HUB_CACHE", os.getenv("HUGGINGFACE_HUB_CACHE", os.path.join(home, "hub")))
    cache_dir = Path(os.path.expandvars(os.path.expanduser(cache)))
    snapshots = cache_dir / f"models--{name.replace('/', '--')}" / "snapshots"
    try:
        found = [p for p in snapshots.iterdir() if p.is_dir()]
    except OSError:
        return None
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


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


def index_encoder(ref: ModelRef) -> Model2VecEncoder:
    """The encoder for building the index: model2vec itself (downloads a hub id once)."""
    if ref.path is not None and not ref.path.is_dir():
        raise EncoderUnavailable(f"embedding model folder {ref.path} does not exist: {_FIX}")
    try:
        from model2vec import StaticModel
    except ImportError as e:
        raise EncoderUnavailable(f"model2vec cannot be imported ({_one_line(e)}): reinstall stele") from e
    source = str(ref.path) if ref.path is not None else ref.ref
    try:
        # force_download=False: a cached hub model loads with no network call (model2vec's default
        # re-checks the hub on every load).
        model = StaticModel.from_pretrained(source, force_download=False)
    except Exception as e:  # any failure here means "no vectors", which the caller can live with
        raise EncoderUnavailable(f"embedding model {source} cannot be loaded ({_one_line(e)}): {_FIX}") from e
    return Model2VecEncoder(model)


def _one_line(e: BaseException) -> str:
    return error_line(e)


def _text_list(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("encode() takes a list of texts, not one string")
    return list(texts)


class Model2VecEncoder:
    """model2vec's `StaticModel.encode`, returning float32 like the lean encoder."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.dim = int(model.dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        texts = _text_list(texts)
        if not texts:  # model2vec cannot concatenate zero batches
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self.model.encode(texts), dtype=np.float32)


class LeanEncoder:
    """model2vec 0.10's `StaticModel.encode` for plain model2vec folders, without model2vec.

    Every step mirrors `model2vec/model.py` (tokenizer setup, character cut, tokenize, drop unk,
    bucketed mean, normalize), with the same numpy calls so the floats come out bit for bit the same.
    Only the rows a call needs are read from model.safetensors."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        try:
            self._load()
        except EncoderUnavailable:
            raise
        except Exception as e:  # tokenizers and safetensors raise bare Exception subclasses
            problem = _one_line(e)
            raise EncoderUnavailable(f"embedding model {self.folder} is corrupt ({problem}): {_FIX}") from e

    def _load(self) -> None:
        if not self.folder.is_dir():
            raise EncoderUnavailable(f"embedding model folder {self.folder} does not exist: {_FIX}")
        missing = [name for name in MODEL_FILES if not (self.folder / name).is_file()]
        if missing and (self.folder / "config_sentence_transformers.json").is_file():
            raise LeanUnsupported(f"{self.folder} is a sentence-transformers layout")
        if missing:
            raise EncoderUnavailable(f"embedding model folder {self.folder} lacks {', '.join(missing)}: "
                                     f"{_FIX}")
        config = json.loads((self.folder / "config.json").read_text(encoding="utf-8"))
        self.normalize = bool(config.get("normalize", False))
        self.max_length: int | None = config.get("max_length", DEFAULT_MAX_LENGTH)

        header, self._data_start = _safetensors_header(self.folder / "model.safetensors")
        names = set(header) - {"__metadata__"}
        if names != {"embeddings"}:
            raise LeanUnsupported(f"{self.folder} has tensors {sorted(names)} (vocabulary quantization)")
        shape, dtype = list(header["embeddings"]["shape"]), header["embeddings"]["dtype"]
        self._data_start += int(header["embeddings"]["data_offsets"][0])
        self._dtype = dtype
        if dtype not in _OUT_DTYPES:
            raise LeanUnsupported(f"{self.folder} stores {dtype} embeddings")

        self._load_tokenizer()
        if len(shape) != 2 or shape[0] != self.vocab_size:
            raise EncoderUnavailable(f"embedding model {self.folder} has {shape[0]} vectors for "
                                     f"{self.vocab_size} tokens: {_FIX}")
        self.dim = int(shape[1])
        self._out_dtype = _OUT_DTYPES[dtype]
        self._matrix: np.ndarray | None = None
        self._median: int | None = None

    def _load_tokenizer(self) -> None:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        _disable_padding(tokenizer)
        if self.max_length is None:
            tokenizer.no_truncation()
        else:
            tokenizer.enable_truncation(self.max_length)
        self.tokenizer = tokenizer
        self.vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
        self.unk_token_id = _get_unk_token_id(tokenizer)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        texts = self._cut(_text_list(texts))
        ids = self._tokenize(texts)
        out = np.zeros((len(ids), self.dim), dtype=self._out_dtype)
        buckets: dict[int, list[int]] = defaultdict(list)
        for i, id_list in enumerate(ids):
            if id_list:
                buckets[len(id_list)].append(i)
        if buckets:
            matrix, ids = self._gather(ids)
            for indices in buckets.values():
                id_matrix = np.array([ids[i] for i in indices], dtype=np.int64)
                out[indices] = matrix[id_matrix].mean(axis=1)
        if self.normalize:
            out32 = out.astype(np.float32)
            norm = np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32
            out = (out32 / norm).astype(out.dtype)
        return out.astype(np.float32, copy=False)

    def _cut(self, texts: list[str]) -> list[str]:
        # model2vec cuts every text to max_length * median token length characters. Token strings are
        # unique, so at most one is empty and with 3+ tokens the median is >= 1: a text no longer than
        # max_length characters is never cut, and the ~12 ms median is only paid for long texts.
        if self.max_length is None:
            return texts
        if self._median is None and self.vocab_size >= 3 and all(len(t) <= self.max_length for t in texts):
            return texts
        limit = self.max_length * self.median_token_length()
        return [t[:limit] for t in texts]

    def median_token_length(self) -> int:
        if self._median is None:
            # numpy's median (the middle two averaged), without numpy: a long query on the hook path
            lengths = sorted(len(token) for token in self.tokenizer.get_vocab())
            mid = len(lengths) // 2
            self._median = int(lengths[mid] if len(lengths) % 2 else (lengths[mid - 1] + lengths[mid]) / 2)
        return self._median

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        # encode_batch_fast (tokenizers >= 0.20) skips offsets; the ids are the same.
        encode = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)
        ids = [encoding.ids for encoding in encode(texts, add_special_tokens=False)]
        if self.unk_token_id is not None:
            ids = [[t for t in id_list if t != self.unk_token_id] for id_list in ids]
        return ids

    def _gather(self, ids: list[list[int]]) -> tuple[np.ndarray, list[list[int]]]:
        """A matrix and the ids to index it with: the whole embedding matrix, or for a query of a few
        tokens just their rows (reading those is ~0.1 ms against ~4 ms for all ~30k rows)."""
        if self._matrix is None and sum(map(len, ids)) > _SLICE_ROWS:
            self._matrix = self._read(lambda matrix: matrix[:])
        if self._matrix is not None:
            return self._matrix, ids
        import numpy as np

        used = sorted(set(chain.from_iterable(ids)))
        position = {token: i for i, token in enumerate(used)}
        rows = self._read(lambda matrix: np.concatenate([matrix[i:i + 1] for i in used]))
        # The same vectors in the same order, so the mean below is the same to the bit.
        return rows, [[position[token] for token in id_list] for id_list in ids]

    def _read(self, take: Any) -> np.ndarray:
        from safetensors import safe_open

        with safe_open(str(self.folder / "model.safetensors"), framework="np") as f:
            return take(f.get_slice("embeddings"))


def _safetensors_header(path: Path) -> tuple[dict, int]:
    """A safetensors file's header (tensor name -> dtype, shape, data offsets) and where its data
    starts: an 8-byte little-endian length, then that much JSON. Read here so that looking inside costs
    neither `safetensors` nor numpy (its numpy backend imports numpy)."""
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        if not 0 < size < 100_000_000:
            raise ValueError(f"{path.name} does not start with a safetensors header")
        header = json.loads(f.read(size))
    if not isinstance(header, dict):
        raise ValueError(f"{path.name} has no safetensors header")
    return header, 8 + size


# safetensors dtype -> (struct/array code, bytes) for the rows the query encoder reads itself
_TINY32 = 1.000000023742228e-32  # float32(1e-32), which numpy adds to a float32 norm
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


def _disable_padding(tokenizer: Any) -> None:
    """Stop the tokenizer from padding, keeping its pad token (as model2vec does)."""
    padding = tokenizer.padding
    if padding is not None:
        tokenizer.enable_padding(pad_id=padding["pad_id"], pad_token=padding["pad_token"],
                                 pad_type_id=padding["pad_type_id"], length=0)


def _get_unk_token_id(tokenizer: Any) -> int | None:
    model = tokenizer.model
    if hasattr(model, "unk_token"):  # WordPiece, BPE, WordLevel
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    return json.loads(tokenizer.to_str())["model"].get("unk_id")  # Unigram
