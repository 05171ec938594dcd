"""Text to vectors: which model `embedding.model` names, and the two encoders that run it.

Shaped by the hook's cold-start budget (DESIGN.md section 9). `import model2vec` costs ~170 ms and its
loader ~200 ms more, while a hook has to answer in well under a second. So there are two encoders over
one model: `index_encoder` goes through model2vec itself and embeds in bulk when the index is built;
`stele.index.query.query_encoder` returns `QueryEncoder`, which re-implements model2vec 0.10's
`StaticModel.encode` for the one query a hook embeds: in pure Python over the query's few rows of the
model file, and with the pure WordPiece tokenizer of `stele.index.wordpiece` where the model's tokenizer
allows (its numpy sibling `LeanEncoder` takes texts too long for that). Tests prove their vectors equal.
This module is the one home of those four libraries for embeddings, and imports each inside the function
that needs it, so importing it is free.

Any model that cannot be used raises `EncoderUnavailable` (one line, what to do next); callers catch it
and degrade to full-text search. A Hugging Face hub id is downloaded once by model2vec, into the usual
Hugging Face cache, when the index is first built (that needs the network; with HF_HUB_OFFLINE=1 a
missing model fails at once instead of waiting on a timeout). The query side only reads that cache and
never downloads, so a hook cannot hang on the network.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Sequence
from functools import cache
from itertools import chain
from pathlib import Path

from ..errors import SteleError
from ..lazyre import lazy
from ..plain import dataclass
from ..textcut import error_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    import numpy as np

BUNDLED = "bundled"
BUNDLED_DIR = Path(__file__).parent.parent / "bundled_model"
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")
SUMS_FILE = "SHA256SUMS"
DEFAULT_MAX_LENGTH = 512  # model2vec's default when config.json has no max_length
_SLICE_ROWS = 256  # above this many tokens one read of the whole matrix beats reading rows
# safetensors dtype -> the dtype model2vec's encode returns for it (int8 means are float32).
_OUT_DTYPES = {"I8": "float32", "F16": "float16", "F32": "float32", "F64": "float64"}
_HUB_ID = lazy(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
_FIX = "set embedding.model in .stele/config.yaml to 'bundled' or a model2vec folder"
_FIX_BUNDLED = ("the model shipped with stele is damaged: reinstall stele, or set embedding.model in "
                ".stele/config.yaml to a model2vec folder")


def _fix(folder: Path | None) -> str:
    """What to do about an unusable model: the bundled one is part of the installation."""
    return _FIX_BUNDLED if folder is not None and folder.resolve() == BUNDLED_DIR.resolve() else _FIX


class EncoderUnavailable(SteleError):
    """The embedding model cannot be loaded; search degrades to full text."""


class LeanUnsupported(EncoderUnavailable):
    """A valid model the lean encoder does not implement; model2vec can still run it."""


if TYPE_CHECKING:
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
        raise EncoderUnavailable(f"embedding model {source} cannot be loaded ({_one_line(e)}): "
                                 f"{_fix(ref.path)}") from e
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
            raise EncoderUnavailable(f"embedding model {self.folder} is corrupt ({problem}): "
                                     f"{_fix(self.folder)}") from e

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
    ends = [int(t["data_offsets"][1]) for k, t in header.items()
            if k != "__metadata__" and isinstance(t, dict) and "data_offsets" in t]
    have = path.stat().st_size
    if ends and 8 + size + max(ends) > have:  # a cut download or copy: reading rows past the end
        raise ValueError(f"{path.name} is truncated ({have} of {8 + size + max(ends)} bytes)")
    return header, 8 + size


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
