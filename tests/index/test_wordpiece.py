"""The pure WordPiece tokenizer gives `tokenizers`' ids for the bundled model, on every code point it
claims (PROVEN) and on a large varied text set, and its compiled table lives in the index folder."""
# ruff: noqa: RUF001 (look-alike characters are what these texts are made of)
from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path

import pytest

from stele.index import wordpiece
from stele.index.encoder import BUNDLED_DIR

TOKENIZER = BUNDLED_DIR / "tokenizer.json"
FRAGMENTS = [
    "payment", "Retry", "BACKOFF", "jitter", "idempotency", "webhook", "RateLimiter.check", "snake_case_name",
    "camelCaseName", "src/auth/middleware.py::check", "https://example.com/a?b=1&c=2#d", "TS2769:", "3.14159",
    "1e-32", "v2.0.1-rc1", "DEC-4F7K", "don't", "it's", "café", "naïve", "résumé", "Ångström", "Ünïcödé",
    "façade", "jalapeño", "Straße", "İstanbul", "ıi", "ΣΊΣΥΦΟΣ", "Ελληνικά", "ς", "Привет", "мир", "Ёжик",
    "مرحبا", "بالعالم", "שלום", "東京", "中文分词测试", "会議があります", "ひらがな", "カタカナ", "한국어", "ｶﾀｶﾅ",
    "ＡＢＣ１２３", "！？", "「引用」", "e\u0301", "a\u0308\u0323", "\u1e9b\u0323", "ﬁne", "Ⅻ", "①", "½", "²",
    "€100", "£5", "¥", "∑∫≤≥", "→", "…", "—", "–", "«quoted»", "“curly”", "‘single’", "¿qué?", "¡sí!",
    "\u200b", "\u200d", "\u2060", "\ufeff", "\x00", "\x07", "\x1b[31m", "\x7f", "\x85", "\x1c", "\ufffd",
    "\u00a0", "\u2003", "\u3000", "\u2028", "\t", "\n", "\r\n", "\v", "\f", "[UNK]", "[PAD]", "[pad]",
    "x[PAD]y", "[UNK][UNK]", "##ing", "##", "#", "@#$%^&*", "()[]{}<>", "...???;;;", "---", "'", '"', "`",
    "a" * 99, "a" * 100, "a" * 101, "b" * 150, "supercalifragilisticexpialidocious", "x" * 40 + "é" * 61,
    "internationalization", "électricité", "ĳ", "ǅ", "ŉ", "ǰ", "ﬀ", "Å", "Ω", "K",
]
# The proof (PROVEN) compares Python's Unicode tables of one version with `tokenizers`': on a Python
# with other tables (3.12 and later) nothing but ASCII is taken as proven, and the rest goes to
# `tokenizers` (`test_another_pythons_tables_prove_nothing_but_ascii`).
SAME_TABLES = pytest.mark.skipif(unicodedata.unidata_version != wordpiece.PROVEN_UNICODE,
                                 reason=f"the proof is for Unicode {wordpiece.PROVEN_UNICODE}'s tables")
SEPARATORS = ["", " ", " ", "  ", "\n", "-", "/", ".", "\t"]


@pytest.fixture(scope="module")
def pure() -> wordpiece.WordPiece:
    return wordpiece.WordPiece(wordpiece.compile_table(json.loads(TOKENIZER.read_text(encoding="utf-8"))))


@pytest.fixture(scope="module")
def reference():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda texts: [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


def varied_texts(n: int, seed: int = 19) -> list[str]:
    rng = random.Random(seed)
    texts = list(FRAGMENTS)
    for _ in range(n):
        parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 12))]
        texts.append("".join(p + rng.choice(SEPARATORS) for p in parts))
    return texts


def test_the_bundled_tokenizer_is_the_supported_configuration() -> None:
    config = json.loads(TOKENIZER.read_text(encoding="utf-8"))
    assert wordpiece.unsupported(config) is None
    for path, value, why in ((("normalizer", "lowercase"), False, "normalizer.lowercase"),
                             (("normalizer", "strip_accents"), False, "strip_accents is false"),
                             (("normalizer", "type"), "NFKC", "normalizer.type"),
                             (("pre_tokenizer", "type"), "Whitespace", "pre_tokenizer.type"),
                             (("model", "type"), "BPE", "model is 'BPE'"),
                             (("model", "continuing_subword_prefix"), "@@", "model is")):
        changed = json.loads(json.dumps(config))
        changed[path[0]][path[1]] = value
        assert why in (wordpiece.unsupported(changed) or ""), path
    changed = json.loads(json.dumps(config))
    changed["added_tokens"][0]["normalized"] = True
    assert "not matched verbatim" in (wordpiece.unsupported(changed) or "")


@SAME_TABLES
def test_ids_equal_tokenizers_on_a_large_varied_text_set(pure, reference) -> None:
    texts = varied_texts(1500)
    proven = [t for t in texts if wordpiece.proven(t)]
    assert len(proven) == len(texts), [t for t in texts if not wordpiece.proven(t)][:3]
    for text, want in zip(texts, reference(texts), strict=True):
        assert pure.encode(text) == want, repr(text)


def test_texts_outside_the_proven_ranges_are_left_to_tokenizers(pure) -> None:
    for text in ("\u061d end of text mark", "\U0001d518 fraktur", "masaram \U00011d31", "\ud800", "\U000e0001"):
        assert not wordpiece.proven(text) and pure.encode(text) is None, repr(text)
    assert pure.encode("plain ascii and more") is not None


def test_another_pythons_tables_prove_nothing_but_ascii(pure) -> None:
    """Non-ASCII text is proven only under the tables the proof compared; ASCII always is."""
    same = unicodedata.unidata_version == wordpiece.PROVEN_UNICODE
    assert wordpiece.proven("plain ascii, ok") and pure.encode("plain ascii, ok") is not None
    assert wordpiece.proven("café, 東京 and 🎉") is same
    assert (pure.encode("café, 東京 and 🎉") is not None) is same


def _code_points(step: int) -> list[int]:
    unproven = {c for lo, hi in wordpiece.UNPROVEN for c in range(lo, hi + 1)}
    return [c for lo, hi in wordpiece.PROVEN for c in range(lo, hi + 1, step) if c not in unproven]


def _check_code_points(pure, reference, points: list[int]) -> None:
    assert all(wordpiece.proven(chr(c)) for c in points)
    texts = [" ".join(f"a{chr(c)}b {chr(c)}" for c in points[i:i + 64]) for i in range(0, len(points), 64)]
    for i, (text, want) in enumerate(zip(texts, reference(texts), strict=True)):
        if pure.tokenize(text) != want:
            bad = [c for c in points[i * 64:(i + 1) * 64]
                   if pure.tokenize(f"a{chr(c)}b {chr(c)}") != reference([f"a{chr(c)}b {chr(c)}"])[0]]
            pytest.fail(f"code points {[hex(c) for c in bad]} tokenize differently from tokenizers")


@SAME_TABLES
def test_every_proven_code_point_tokenizes_as_tokenizers_does(pure, reference) -> None:
    _check_code_points(pure, reference, _code_points(step=37))  # a sample; all of them below


@pytest.mark.slow
@SAME_TABLES
def test_every_proven_code_point_tokenizes_as_tokenizers_does_all_of_them(pure, reference) -> None:
    _check_code_points(pure, reference, _code_points(step=1))  # ~130,000 code points


def test_each_unproven_code_point_tokenizes_differently(pure, reference) -> None:
    """UNPROVEN is no wider than it must be: each of its code points is one the tables disagree on."""
    points = [c for lo, hi in wordpiece.UNPROVEN for c in range(lo, hi + 1)]
    texts = [f"a{chr(c)}b {chr(c)}" for c in points]
    for c, text, want in zip(points, texts, reference(texts), strict=True):
        assert pure.tokenize(text) != want, hex(c)


def test_the_table_is_compiled_once_into_the_index_folder_and_renewed(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "tokenizer.json").write_bytes(TOKENIZER.read_bytes())
    table = tmp_path / "index" / "vectors" / "m" / "tokenizer.wp"
    first = wordpiece.load(model / "tokenizer.json", table)
    assert first is not None and table.is_file()
    written = table.stat().st_mtime_ns
    again = wordpiece.load(model / "tokenizer.json", table)
    assert again is not None and table.stat().st_mtime_ns == written  # read back, not compiled again
    assert again.encode("Payment retries back off") == first.encode("Payment retries back off")

    table.write_bytes(table.read_bytes()[:1000])  # torn: compiled again
    assert wordpiece.load(model / "tokenizer.json", table) is not None and table.stat().st_size > 100_000

    config = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))
    config["model"]["vocab"]["zzzzword"] = len(config["model"]["vocab"])  # a changed tokenizer.json
    (model / "tokenizer.json").write_text(json.dumps(config), encoding="utf-8")
    renewed = wordpiece.load(model / "tokenizer.json", table)
    assert renewed is not None and renewed.token_id("zzzzword") == len(config["model"]["vocab"]) - 1

    config["normalizer"]["lowercase"] = False  # unsupported: recorded, so the next query skips the parse
    (model / "tokenizer.json").write_text(json.dumps(config), encoding="utf-8")
    assert wordpiece.load(model / "tokenizer.json", table) is None
    assert b"unsupported" in table.read_bytes() and table.stat().st_size < 1000
    assert wordpiece.load(model / "tokenizer.json", table) is None
