"""The encoder: the lean query path must give model2vec's vectors, and never cost model2vec's import.

Most tests run the real bundled model (it is small and offline); tiny hand-made model folders cover
the cases the bundled model does not have (float32, no normalisation, vocabulary quantization).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from stele.errors import SteleError
from stele.index import encoder
from stele.index.encoder import (
    BUNDLED,
    BUNDLED_DIR,
    EncoderUnavailable,
    LeanEncoder,
    LeanUnsupported,
    Model2VecEncoder,
    ModelRef,
    index_encoder,
    resolve,
)
from stele.index.query import QueryEncoder, query_encoder
from stele.index.wordpiece import PROVEN_UNICODE

LONG_WORDS = " ".join(f"word{i} retry backoff jitter" for i in range(400))  # > 512 tokens
TEXTS = [
    "",
    " ",
    "\n\t",
    "hello world",
    "a buyer was billed two times for one purchase",
    "customer charged twice for the same order",
    "TS2769: No overload matches this call.",
    "TS2769",
    "error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'",
    "RateLimiter.check",
    "src/auth/middleware.py::RateLimiter.check",
    "snake_case_identifier and camelCaseIdentifier and SCREAMING_CASE",
    "DEC-4F7K supersedes RISK-2M9Q",
    "https://example.com/path?query=1&b=2#frag",
    "git rebase --onto main feature~3",
    "!!!",
    "...???;;;",
    "---",
    "()[]{}<>",
    "@#$%^&*",
    "0",
    "3.14159 2.71828 1e-32",
    "Ünïcödé çåfé naïve résumé",
    "東京で会議があります",
    "中文分词测试",
    "Привет, мир",
    "مرحبا بالعالم",
    "emoji 🎉🚀 test 👍",
    "\u200b\u200bzero width",
    "tabs\tand\nnewlines\r\nmixed",
    "UPPERCASE SENTENCE ABOUT DATABASES",
    "def foo(bar: int) -> str: return str(bar)",
    "SELECT * FROM users WHERE id = 42;",
    "rate limiting sits in front of auth, not behind",
    "the cache is invalidated on every deploy",
    "flaky test in CI due to timezone",
    "use parse_query_lenient for raw user text",
    "PyYAML CSafeLoader is 7.5x faster",
    "[UNK] [PAD] [CLS] [SEP] [MASK]",
    "##ing ##ed",
    "a" * 600,
    "b" * 5000,
    "supercalifragilisticexpialidocious " * 40,
    LONG_WORDS,
    "x " * 1500,
    "internationalization " * 200,  # cut at 512 * 6 characters while still under 512 tokens
    "The quick brown fox jumps over the lazy dog. " * 100,
    "ぁ" * 3100,
    "mixed 日本語 and English and Ελληνικά",
    "    leading and trailing spaces    ",
    "a",
]


@pytest.fixture(scope="module")
def bundled() -> ModelRef:
    return resolve(BUNDLED, Path("."))


@pytest.fixture(scope="module")
def reference(bundled: ModelRef) -> Model2VecEncoder:
    return index_encoder(bundled)


def test_lean_vectors_equal_model2vec_vectors(bundled: ModelRef, reference: Model2VecEncoder) -> None:
    lean = LeanEncoder(bundled.path)
    got = lean.encode(TEXTS)
    want = reference.encode(TEXTS)
    assert got.shape == want.shape == (len(TEXTS), 256)
    assert got.dtype == np.float32
    assert np.allclose(got, want, atol=1e-6)
    assert not got[0].any(), "a text with no tokens is a zero vector"
    assert lean._matrix is not None, "300+ distinct tokens: the whole matrix was read"


def test_lean_one_text_at_a_time_equals_the_batch(bundled: ModelRef, reference: Model2VecEncoder) -> None:
    # A short text reads only its own rows; a long one reads the whole matrix, as the batch did.
    lean = LeanEncoder(bundled.path)
    want = reference.encode(TEXTS)
    read_all = False
    for i in sorted(range(len(TEXTS)), key=lambda i: len(TEXTS[i])):
        assert (lean._matrix is not None) == read_all
        assert np.allclose(lean.encode([TEXTS[i]])[0], want[i], atol=1e-6), TEXTS[i][:40]
        read_all = read_all or len(lean._tokenize(lean._cut([TEXTS[i]]))[0]) > encoder._SLICE_ROWS
    assert read_all


def test_long_texts_are_cut_like_model2vec(bundled: ModelRef) -> None:
    lean = LeanEncoder(bundled.path)
    long = lean.encode([LONG_WORDS])
    cut = lean.encode([LONG_WORDS[: len(LONG_WORDS) // 2]])
    # 512 tokens are reached well before half the text, so the tail is never seen.
    assert np.array_equal(long, cut)
    assert lean.median_token_length() == 6


def test_empty_input_and_single_string(bundled: ModelRef, reference: Model2VecEncoder) -> None:
    lean = query_encoder(bundled)
    assert lean.encode([]) == []
    assert LeanEncoder(bundled.path).encode([]).shape == reference.encode([]).shape == (0, 256)
    with pytest.raises(TypeError):
        lean.encode("not a list")


def test_paraphrases_score_higher_than_unrelated(bundled: ModelRef) -> None:
    lean = query_encoder(bundled)
    pairs = [
        ("a buyer was billed two times for one purchase", "customer charged twice for the same order"),
        ("the login page times out", "users cannot sign in because the auth request hangs"),
        ("tests fail only on the CI server", "the build is red in continuous integration but green locally"),
    ]
    unrelated = "the garden needs watering before the summer heat"
    for a, b in pairs:
        va, vb, vu = np.array(lean.encode([a, b, unrelated]), dtype=np.float32)
        assert float(va @ vb) > float(va @ vu) + 0.1, (a, b)
        assert abs(float(va @ va) - 1.0) < 1e-5


# --- resolve -----------------------------------------------------------------------------------------

def test_resolve_bundled_names_the_recorded_sums(bundled: ModelRef) -> None:
    assert bundled.path == BUNDLED_DIR
    assert bundled.model_id.startswith("bundled@") and len(bundled.model_id) == len("bundled@") + 12
    assert resolve(" bundled ", Path("/elsewhere")) == bundled
    with pytest.raises(EncoderUnavailable, match="empty"):
        resolve("  ", Path("."))


def test_bundled_files_match_their_recorded_sums() -> None:
    # The runtime names the model from SHA256SUMS without hashing: a model change without new sums
    # would leave stale vectors in every index.
    lines = (BUNDLED_DIR / "SHA256SUMS").read_text().splitlines()
    sums = dict(reversed(line.split(None, 1)) for line in lines)
    assert set(encoder.MODEL_FILES) <= set(sums)
    for name, digest in sums.items():
        assert hashlib.sha256((BUNDLED_DIR / name).read_bytes()).hexdigest() == digest, name
    assert (BUNDLED_DIR / "NOTICE").is_file()


def test_resolve_folder_relative_to_root_and_absolute(tmp_path: Path) -> None:
    folder = tmp_path / "models" / "mine"
    shutil.copytree(BUNDLED_DIR, folder)
    rel = resolve("models/mine", tmp_path)
    assert rel.path == folder and rel.model_id.startswith("mine@")
    assert resolve(str(folder), Path("/nowhere")).model_id == rel.model_id
    config = folder / "config.json"
    config.write_text(config.read_text() + "\n")
    assert resolve("models/mine", tmp_path).model_id != rel.model_id, "a changed model is a new model id"


def test_resolve_hub_id_and_missing_paths(tmp_path: Path) -> None:
    hub = resolve("minishlab/potion-base-8M", tmp_path)
    assert hub == ModelRef("minishlab/potion-base-8M", None, "hub:minishlab/potion-base-8M")
    for ref in ("./missing", "../models/x", "/abs/missing", "a/b/c"):
        missing = resolve(ref, tmp_path)
        assert missing.path is not None
        assert missing.model_id.endswith("@" + encoder._stat_digest(missing.path))


# --- unavailable models ------------------------------------------------------------------------------

def _corrupt(tmp_path: Path, name: str, content: bytes | None) -> ModelRef:
    folder = tmp_path / "m"
    shutil.copytree(BUNDLED_DIR, folder)
    if content is None:
        (folder / name).unlink()
    else:
        (folder / name).write_bytes(content)
    return resolve(str(folder), tmp_path)


@pytest.mark.parametrize("make", [
    lambda tmp: resolve("no/such/folder", tmp),
    lambda tmp: _corrupt(tmp, "tokenizer.json", None),
    lambda tmp: _corrupt(tmp, "tokenizer.json", b'{"not": "a tokenizer"}'),
    lambda tmp: _corrupt(tmp, "model.safetensors", b"\x00" * 64),
    lambda tmp: _corrupt(tmp, "config.json", b"{truncated"),
    # a cut download: the header is whole, the rows are not (rebuild crashed reading past the end)
    lambda tmp: _corrupt(tmp, "model.safetensors", (BUNDLED_DIR / "model.safetensors").read_bytes()[:3_000_000]),
], ids=["missing-folder", "no-tokenizer", "bad-tokenizer", "bad-safetensors", "bad-config", "truncated"])
@pytest.mark.parametrize("factory", [query_encoder, index_encoder], ids=["query", "index"])
def test_unusable_model_raises_one_line(tmp_path: Path, make, factory) -> None:
    with pytest.raises(EncoderUnavailable) as info:
        factory(make(tmp_path))
    assert isinstance(info.value, SteleError)
    assert "\n" not in str(info.value) and "embedding" in str(info.value)


def test_hub_model_is_read_from_the_cache_never_downloaded_at_query_time(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    ref = resolve("someone/static-model", tmp_path)
    with pytest.raises(EncoderUnavailable, match="not downloaded yet"):
        query_encoder(ref)
    shutil.copytree(BUNDLED_DIR, tmp_path / "hub" / "models--someone--static-model" / "snapshots" / "abc123")
    assert isinstance(query_encoder(ref), LeanEncoder)


def test_index_encoder_on_a_hub_id_fails_fast_offline(tmp_path: Path) -> None:
    code = textwrap.dedent("""
        from pathlib import Path
        from stele.index.encoder import EncoderUnavailable, index_encoder, resolve
        try:
            index_encoder(resolve("someone/not-cached", Path(".")))
        except EncoderUnavailable as e:
            print("unavailable:", e)
    """)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.stdout.startswith("unavailable: embedding model someone/not-cached"), out.stderr


# --- hand-made models --------------------------------------------------------------------------------

def _tiny_model(folder: Path, *, dtype: str = "float32", normalize: bool = False, max_length: int | None = 8,
                weights: bool = False) -> Path:
    """The bundled tokenizer over a random matrix: exercises the paths the bundled model does not."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True)
    tokenizer = json.loads((BUNDLED_DIR / "tokenizer.json").read_text())
    # Many model2vec models keep a post-processor that adds special tokens; encode must not use it.
    tokenizer["post_processor"] = {"type": "BertProcessing", "sep": ["!", 2], "cls": ["#", 4]}
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    vocab = tokenizer["model"]["vocab"]
    rng = np.random.default_rng(7)
    tensors = {"embeddings": rng.standard_normal((len(vocab), 16)).astype(dtype)}
    if weights:
        tensors["weights"] = rng.random(len(vocab)).astype("float32")
    save_file(tensors, str(folder / "model.safetensors"))
    config = {"model_type": "model2vec", "normalize": normalize, "max_length": max_length}
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize("kwargs", [
    {}, {"normalize": True}, {"max_length": None},
    {"dtype": "float16", "normalize": True}, {"dtype": "float64"},
], ids=["f32", "f32-normalized", "no-max-length", "f16-normalized", "f64"])
def test_lean_matches_model2vec_on_other_model_shapes(tmp_path: Path, kwargs) -> None:
    ref = resolve(str(_tiny_model(tmp_path / "tiny", **kwargs)), tmp_path)
    got = query_encoder(ref).encode(TEXTS)
    want = index_encoder(ref).encode(TEXTS)
    assert isinstance(query_encoder(ref), LeanEncoder)
    assert np.allclose(got, want, atol=1e-6)


def test_vocabulary_quantized_model_falls_back_to_model2vec(tmp_path: Path) -> None:
    ref = resolve(str(_tiny_model(tmp_path / "weighted", weights=True)), tmp_path)
    with pytest.raises(LeanUnsupported):
        LeanEncoder(ref.path)
    fallback = query_encoder(ref)
    assert isinstance(fallback, Model2VecEncoder)
    assert fallback.encode(["hello world"]).shape == (1, 16)


# --- the hook path -----------------------------------------------------------------------------------

def test_query_path_imports_neither_model2vec_nor_the_cli_stack() -> None:
    code = textwrap.dedent("""
        import sys
        from pathlib import Path
        from stele.index.encoder import resolve
        from stele.index.query import query_encoder
        encoder = query_encoder(resolve("bundled", Path(".")))
        assert len(encoder.encode(["hello world"])[0]) == 256
        print(sorted(m for m in ("model2vec", "typer", "rich", "torch") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_query_encoder_needs_no_numpy_and_gives_the_lean_vectors(bundled: ModelRef,
                                                                    reference: Model2VecEncoder) -> None:
    """The hook's query encoder tokenizes in Python and averages the query's rows in Python: the same
    vectors as the numpy lean encoder to the bit, for short texts and for long ones it cuts (a pasted
    stack trace), and it imports neither numpy nor tokenizers."""
    query = query_encoder(bundled)
    assert isinstance(query, QueryEncoder) and query._wordpiece is not None
    lean = LeanEncoder(bundled.path)
    short = [t for t in TEXTS if len(lean._tokenize(lean._cut([t]))[0]) <= encoder._SLICE_ROWS]
    if unicodedata.unidata_version != PROVEN_UNICODE:  # another Python's tables: ASCII only is pure
        short = [t for t in short if t.isascii()]
    assert len(short) > 30
    got = np.array(query.encode(short), dtype=np.float32)
    assert np.array_equal(got, lean.encode(short))
    assert np.array_equal(got, reference.encode(short)), "and so model2vec's, to the bit"
    assert query.tokenizer is None, "every text here is one the pure tokenizer takes"
    assert query.median_token_length() == int(np.median([len(t) for t in lean.tokenizer.get_vocab()]))
    code = textwrap.dedent("""
        import sys
        import unicodedata
        from pathlib import Path
        from stele.index.encoder import resolve
        from stele.index.query import query_encoder
        from stele.index.wordpiece import PROVEN_UNICODE
        enc = query_encoder(resolve("bundled", Path(".")))
        texts = ["why do payment retries back off after an outage?", "x" * 5000, "café 東京"]
        if unicodedata.unidata_version != PROVEN_UNICODE:  # another Python: only ASCII is proven pure
            texts = texts[:2]
        rows = enc.encode(texts)
        assert len(rows) == len(texts) and len(rows[0]) == 256
        print(sorted(m for m in ("numpy", "tokenizers", "safetensors") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_text_the_pure_tokenizer_leaves_loads_tokenizers(bundled: ModelRef) -> None:
    """A character the pure tokenizer does not vouch for (new in Unicode 14) sends the text through
    `tokenizers`, with the same vectors as the lean encoder; texts after it still get the same."""
    query = query_encoder(bundled)
    lean = LeanEncoder(bundled.path)
    texts = ["payment retries \u061d after an outage", "Ünïcödé çåfé"]
    assert query.tokenizer is None
    assert np.array_equal(np.array(query.encode(texts), dtype=np.float32), lean.encode(texts))
    assert query.tokenizer is not None
    assert np.array_equal(np.array(query.encode(texts[1:]), dtype=np.float32), lean.encode(texts[1:]))


def test_the_compiled_tokenizer_is_kept_where_it_is_told(bundled: ModelRef, tmp_path: Path) -> None:
    table = tmp_path / "index/vectors/m/tokenizer.wp"
    first = QueryEncoder(bundled.path, table)
    assert table.is_file()
    again = QueryEncoder(bundled.path, table)
    assert again.encode(["customer charged twice"]) == first.encode(["customer charged twice"])
    assert again.vocab_size == LeanEncoder(bundled.path).vocab_size


@pytest.mark.parametrize("factory", [query_encoder, index_encoder], ids=["query", "index"])
def test_a_damaged_bundled_model_says_to_reinstall_never_to_choose_bundled(tmp_path: Path, monkeypatch,
                                                                            factory) -> None:
    """A cut download of the package's own model: choosing 'bundled' again fixes nothing."""
    import stele.index.encoder as encoder

    damaged = _corrupt(tmp_path, "model.safetensors", (BUNDLED_DIR / "model.safetensors").read_bytes()[:3_000_000])
    monkeypatch.setattr(encoder, "BUNDLED_DIR", damaged.path)
    with pytest.raises(EncoderUnavailable) as info:
        factory(resolve("bundled", tmp_path))
    assert "reinstall stele" in str(info.value) and "'bundled'" not in str(info.value)
    (tmp_path / "mine").mkdir()
    chosen = _corrupt(tmp_path / "mine", "model.safetensors", damaged.path.joinpath("model.safetensors").read_bytes())
    with pytest.raises(EncoderUnavailable) as other:
        factory(chosen)  # the same damage in a folder the user chose: choose another
    assert "reinstall" not in str(other.value)
