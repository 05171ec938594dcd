"""BERT's uncased WordPiece tokenizer in pure Python, for the one query a hook embeds.

Why it exists: `tokenizers` costs a hook ~50 ms to import and ~30 ms more to parse a 445 KB
tokenizer.json into its vocabulary, for a query of a dozen words. Here the vocabulary is compiled once
into a compact table (`compile_table`: the tokens as UTF-8 bytes in byte order, with their offsets and
ids as two uint32 arrays) that a query reads in a fraction of a millisecond and looks words up in by
binary search, with no dict of 30,000 strings to build.

It does what `tokenizers` 0.2x does for one exact configuration (`unsupported` checks it and names
what differs; the caller then uses `tokenizers` itself): added tokens matched first in the raw text
(leftmost-longest), then `BertNormalizer(clean_text, handle_chinese_chars, strip_accents, lowercase)`,
`BertPreTokenizer` and the WordPiece model (greedy longest match, `##` continuations, a word of more
than `max_input_chars_per_word` characters or with a piece missing from the vocabulary is `[UNK]`).
The bundled model's tokenizer is that configuration, as are the many model2vec models distilled from
bert-base-uncased.

The character classes come from Python's `unicodedata`, whose Unicode version is not the Rust crates'
(`tokenizers` classifies with older tables). So the pure path takes only texts whose every character is
in PROVEN, code points checked one by one against `tokenizers` (tests/index/test_wordpiece.py), and
only under the Unicode version they were checked with; a text with any other character (a character
new in recent Unicode versions, a rare historic script) is tokenized by `tokenizers` as before.
"""
from __future__ import annotations

import json
import re
import unicodedata
from array import array
from bisect import bisect_right
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAGIC = b"STELE-WP1\n"
# The code points this module tokenizes as `tokenizers` 0.23 does under Python 3.11's Unicode 14.0
# tables (tests/index/test_wordpiece.py checks every one of them, marked slow, and a sample always):
# the Basic Multilingual Plane, the emoji and the CJK ideograph planes, less the surrogates and less
# UNPROVEN, characters new in Unicode 10-14 that Python's tables call combining marks, punctuation
# or format characters and `tokenizers`' older tables call unassigned.
PROVEN = ((0x0000, 0xD7FF), (0xE000, 0xFFFF), (0x1F000, 0x1FAFF), (0x20000, 0x2FA1F))
PROVEN_UNICODE = "14.0.0"
UNPROVEN = (
    (0x061D, 0x061D), (0x07FD, 0x07FD), (0x0890, 0x0891), (0x0898, 0x089F), (0x08CA, 0x08E2),
    (0x09FD, 0x09FE), (0x0A76, 0x0A76), (0x0AFA, 0x0AFF), (0x0B55, 0x0B55), (0x0C04, 0x0C04),
    (0x0C3C, 0x0C3C), (0x0C77, 0x0C77), (0x0C84, 0x0C84), (0x0D00, 0x0D00), (0x0D3B, 0x0D3C),
    (0x0D81, 0x0D81), (0x0EBA, 0x0EBA), (0x166D, 0x166D), (0x1734, 0x1734), (0x180F, 0x180F),
    (0x1885, 0x1886), (0x1ABF, 0x1ACE), (0x1B7D, 0x1B7E), (0x1DF6, 0x1DFB), (0x2E43, 0x2E4F),
    (0x2E52, 0x2E5D), (0xA82C, 0xA82C), (0xA8C5, 0xA8C5), (0xA8FF, 0xA8FF), (0xA9BD, 0xA9BD),
)
_UNPROVEN_STARTS = [lo for lo, _ in UNPROVEN]
# Rust's char::is_whitespace (Unicode White_Space), which differs from str.isspace (U+001C-001F)
_WHITESPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                        "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
# BERT drops control, format, private-use characters; unassigned ones (Cn) stay, and make their word [UNK]
_CONTROL = frozenset(("Cc", "Cf", "Co", "Cs"))
_ASCII_CLEAN = {**dict.fromkeys([*range(32), 127]), **{ord(c): " " for c in "\t\n\r"}}
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_CHINESE = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
            (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_WANT: dict[str, dict[str, object]] = {
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
}


def unsupported(config: dict) -> str | None:
    """Why a parsed tokenizer.json is not the configuration this module implements, or None."""
    for part, want in _WANT.items():
        got = config.get(part) or {}
        for key, value in want.items():
            if got.get(key) != value:
                return f"{part}.{key} is {got.get(key)!r}"
    if config["normalizer"].get("strip_accents") is False:  # None follows lowercase: stripped
        return "normalizer.strip_accents is false"
    model = config.get("model") or {}
    if model.get("type") != "WordPiece" or model.get("continuing_subword_prefix", "##") != "##":
        return f"model is {model.get('type')!r}"
    if not isinstance(model.get("vocab"), dict) or model.get("unk_token") not in model["vocab"]:
        return "model.vocab lacks its unk_token"
    for token in config.get("added_tokens") or []:
        if token.get("normalized") or token.get("single_word") or token.get("lstrip") or token.get("rstrip"):
            return f"added token {token.get('content')!r} is not matched verbatim"
    return None


def compile_table(config: dict, source: list[int] | None = None) -> bytes:
    """The compact table of a supported tokenizer.json: MAGIC, a JSON header line (`source` is the
    file's size and mtime, to notice a changed file), then the offsets (n + 1) and ids (n) as native
    uint32 and the tokens' UTF-8 bytes, sorted by those bytes."""
    model = config["model"]
    vocab: dict[str, int] = model["vocab"]
    added = {t["content"]: int(t["id"]) for t in config.get("added_tokens") or []}
    tokens = sorted(vocab, key=lambda t: t.encode("utf-8"))
    blob = [t.encode("utf-8") for t in tokens]
    offsets, at = array("I", [0]), 0
    for b in blob:
        at += len(b)
        offsets.append(at)
    ids = array("I", [vocab[t] for t in tokens])
    every = set(vocab) | set(added)
    lengths = sorted(len(t) for t in every)
    mid = len(lengths) // 2
    median = lengths[mid] if len(lengths) % 2 else (lengths[mid - 1] + lengths[mid]) / 2
    header = {"n": len(tokens), "unk": vocab[model["unk_token"]], "max_chars": int(model.get(
              "max_input_chars_per_word", 100)), "added": added, "vocab_size": len(set(vocab.values()) | set(
              added.values())), "median_token_length": int(median), "source": source,
              "longest": max(map(len, vocab), default=0)}
    for a in (offsets, ids):
        if a.itemsize != 4:
            raise ValueError("uint32 arrays are not 4 bytes wide here")
    return MAGIC + json.dumps(header).encode() + b"\n" + offsets.tobytes() + ids.tobytes() + b"".join(blob)


class WordPiece:
    """A compiled table, read back: `encode(text)` gives the ids `tokenizers` gives (without special
    tokens, untruncated), or None when the text has a character outside PROVEN."""

    def __init__(self, table: bytes) -> None:
        header, end = _header(table)
        n = int(header["n"])
        at = end + 1
        self._offsets = array("I", table[at:at + 4 * (n + 1)])
        self._ids = array("I", table[at + 4 * (n + 1):at + 8 * n + 4])
        self._blob = table[at + 8 * n + 4:]
        if len(self._offsets) != n + 1 or len(self._ids) != n or self._offsets[-1] != len(self._blob):
            raise ValueError("the compiled WordPiece table is truncated")
        self._n = n
        self.unk_id: int = int(header["unk"])
        self.vocab_size: int = int(header["vocab_size"])
        self.median_token_length: int = int(header["median_token_length"])
        self._max_chars = int(header["max_chars"])
        self._longest = int(header["longest"])  # no piece is longer: the greedy match starts there
        self.source: list[int] | None = header.get("source")
        self._added: dict[str, int] = header["added"]
        self._split_added = re.compile("(" + "|".join(
            re.escape(t) for t in sorted(self._added, key=len, reverse=True)) + ")") if self._added else None

    def token_id(self, token: str) -> int | None:
        key = token.encode("utf-8")
        offsets, blob = self._offsets, self._blob
        lo, hi = 0, self._n
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[offsets[mid]:offsets[mid + 1]] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < self._n and blob[offsets[lo]:offsets[lo + 1]] == key:
            return self._ids[lo]
        return None

    def encode(self, text: str) -> list[int] | None:
        return self.tokenize(text) if proven(text) else None

    def tokenize(self, text: str) -> list[int]:
        """The ids of any text, PROVEN or not (the tests probe the Unicode tables' edges with it)."""
        parts = self._split_added.split(text) if self._split_added else [text]
        ids: list[int] = []
        for i, part in enumerate(parts):
            if i % 2:  # a captured added token
                ids.append(self._added[part])
                continue
            for word in pre_tokenize(normalize(part)):
                ids.extend(self._word(word))
        return ids

    def _word(self, word: str) -> list[int]:
        if len(word) > self._max_chars:
            return [self.unk_id]
        whole = self.token_id(word)
        if whole is not None:
            return [whole]
        out, start = [], 0
        while start < len(word):
            end = min(len(word), start + self._longest - (2 if start else 0))
            while end > start:
                found = self.token_id(word[start:end] if start == 0 else "##" + word[start:end])
                if found is not None:
                    break
                end -= 1
            else:
                return [self.unk_id]
            out.append(found)
            start = end
        return out


def _header(table: bytes) -> tuple[dict, int]:
    if not table.startswith(MAGIC):
        raise ValueError("not a compiled WordPiece table")
    end = table.index(b"\n", len(MAGIC))
    header = json.loads(table[len(MAGIC):end])
    if not isinstance(header, dict):
        raise ValueError("not a compiled WordPiece table")
    return header, end


def proven(text: str) -> bool:
    """Whether every character of `text` is PROVEN (any text, when it is ASCII)."""
    if text.isascii():
        return True
    if unicodedata.unidata_version != PROVEN_UNICODE:  # another Python: its tables were never compared
        return False
    return all(_proven(ord(c)) for c in set(text))


def _proven(cp: int) -> bool:
    if not any(lo <= cp <= hi for lo, hi in PROVEN):
        return False
    i = bisect_right(_UNPROVEN_STARTS, cp) - 1
    return i < 0 or cp > UNPROVEN[i][1]


def normalize(text: str) -> str:
    """BertNormalizer: drop NUL, U+FFFD and control/format/unassigned characters, whitespace to a
    space, spaces around CJK ideographs, strip accents (NFD, then no nonspacing marks), lowercase."""
    if text.isascii():
        return text.translate(_ASCII_CLEAN).lower()
    out = []
    for c in text:
        if c in "\t\n\r":  # control characters, but counted as whitespace
            out.append(" ")
        elif c == "\x00" or c == "\ufffd" or unicodedata.category(c) in _CONTROL:
            continue
        elif c in _WHITESPACE:
            out.append(" ")
        elif _is_chinese(ord(c)):
            out.append(f" {c} ")
        else:
            out.append(c)
    stripped = "".join(c for c in unicodedata.normalize("NFD", "".join(out))
                       if unicodedata.category(c) != "Mn")
    return "".join(c.lower() for c in stripped) if not stripped.isascii() else stripped.lower()


def pre_tokenize(text: str) -> list[str]:
    """BertPreTokenizer: split on whitespace (dropped), then every punctuation character alone."""
    words = []
    for chunk in text.split(" "):  # after `normalize` every whitespace character is a space
        start = 0
        for i, c in enumerate(chunk):
            if c in _ASCII_PUNCT or (c >= "\x80" and unicodedata.category(c)[0] == "P"):
                if start < i:
                    words.append(chunk[start:i])
                words.append(c)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


def _is_chinese(cp: int) -> bool:
    return cp >= 0x3400 and any(lo <= cp <= hi for lo, hi in _CHINESE)


def load(tokenizer_json: Path, table: Path | None) -> WordPiece | None:
    """The pure tokenizer of a model, from its compiled `table` (compiled and written there first when
    missing, unreadable or older than tokenizer.json; None keeps it in memory only), or None when the
    tokenizer is not the supported configuration (the table then records that, so the next query does
    not parse tokenizer.json again only to find it out)."""
    st = tokenizer_json.stat()
    source = [st.st_size, st.st_mtime_ns]
    if table is not None:
        try:
            data = table.read_bytes()
            header, _ = _header(data)
            if header.get("source") == source:
                return None if header.get("unsupported") else WordPiece(data)
        except (OSError, ValueError, KeyError):
            pass
    config: Any = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    why = unsupported(config) if isinstance(config, dict) else "tokenizer.json is not an object"
    if why:
        data = MAGIC + json.dumps({"unsupported": why, "source": source}).encode() + b"\n"
    else:
        data = compile_table(config, source)
    if table is not None:
        from .. import atomic

        try:
            table.parent.mkdir(parents=True, exist_ok=True)
            atomic.write(table, data, durable=False)
        except OSError:
            pass  # a read-only index: the table is compiled again next time
    return None if why else WordPiece(data)
