"""Near-duplicate facts: the one rule `stele remember` warns by and `stele doctor` reports by.

Two measures, because one does not fit both lengths:
- Longer texts: word-bigram Jaccard similarity at a threshold (`doctor.near_duplicate`, 0.92).
  Comparing all pairs is quadratic (50M pairs for 10k facts), so this is a prefix-filtered
  set-similarity join: with tokens ordered rarest first, two sets with Jaccard >= t must share a
  token among the first |x| - ceil(t * |x|) + 1 of each. Exact (no pair is missed), and fast
  because rare bigrams have short posting lists. A token no other set has (most word bigrams of
  real prose) can never bring a candidate, so only the shared ones are sorted and posted, and a set
  whose whole prefix is such tokens is skipped outright: on 10k facts that is most of them.
- Short records (at most `SHORT_WORDS` words): one changed, added or dropped word is already a
  different bigram set ("need two approvals" / "need 2 approvals" share no bigram), so two short
  records are near duplicates when they differ by exactly one word. Found with a deletion
  neighbourhood (each text keyed by itself with one word left out), linear, not pairwise.
The text compared is the body, with the title in front unless the body already starts with it (a
title derived from the body would count every word twice).
"""
from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

SHORT_WORDS = 12
MIN_VARIANT_WORDS = 3  # "use redis" / "use postgres" differ by one word and are not one fact twice

_WORD = re.compile(r"\w+")


Shingle = str | tuple[str, str]


def shingles(text: str, seq: tuple[str, ...] | None = None) -> frozenset[Shingle]:
    """The word bigrams of `text` (pairs of words, built in C: no string per bigram), or its one word;
    `seq` is `words(text)` when the caller has it."""
    seq = words(text) if seq is None else seq
    if len(seq) < 2:
        return frozenset(seq)
    return frozenset(itertools.pairwise(seq))


def similar_pairs(texts: dict[str, str], threshold: float,
                  seqs: dict[str, tuple[str, ...]] | None = None) -> list[tuple[str, str, float]]:
    """(id, id, similarity) for every pair at or above `threshold`, in a stable order; `seqs` holds
    `words` of each text when the caller has them."""
    sets = {k: shingles(v, seqs[k] if seqs else None) for k, v in texts.items()}
    sets = {k: s for k, s in sets.items() if s}
    freq = Counter(itertools.chain.from_iterable(sets.values()))
    once = frozenset(tok for tok, n in freq.items() if n == 1)
    postings: dict[Shingle, list[str]] = {}
    pairs = []
    for key in sorted(sets, key=lambda k: (len(sets[k]), k)):
        mine = sets[key]
        prefix = len(mine) - math.ceil(threshold * len(mine)) + 1
        alone = len(mine & once)  # rarest first: these fill the prefix before any shared token
        if alone >= prefix:
            continue
        shared = sorted(mine - once, key=lambda tok: (freq[tok], tok))
        candidates: set[str] = set()
        for tok in shared[:prefix - alone]:
            candidates.update(postings.get(tok, ()))
            postings.setdefault(tok, []).append(key)
        for other in sorted(candidates):
            theirs = sets[other]
            if len(theirs) < threshold * len(mine):
                continue
            score = len(mine & theirs) / len(mine | theirs)
            if score >= threshold:
                pairs.append((other, key, score))
    return pairs


class _Text(Protocol):
    id: str
    kind: str
    title: str
    body: str
    status: str


def words(text: str) -> tuple[str, ...]:
    """The words (`\\w+`) of `text`, lower case. ASCII text, nearly every fact, is split without the
    regex: in it `\\w` is a letter, a digit or `_`, so every other byte becomes a space (twice as fast)."""
    if text.isascii():
        return tuple(text.lower().encode().translate(_NOT_WORD_TO_SPACE).decode().split())
    return tuple(_WORD.findall(text.lower()))


_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_")
_NOT_WORD_TO_SPACE = bytes(c if c in _WORD_BYTES else 0x20 for c in range(256))


def compared_text(title: str, body: str) -> str:
    """What is compared of a fact: its body, led by its title unless the body starts with it."""
    return compared(title, body)[0]


def compared(title: str, body: str) -> tuple[str, tuple[str, ...]]:
    """`compared_text` and its `words`, from the words of the title and the body: a newline ends every
    word, and lower-casing ends its context there too (a final sigma is final at either)."""
    lead, rest = words(title), words(body)
    if rest[: len(lead)] == lead:
        return body, rest
    return f"{title}\n{body}", lead + rest


def one_word_variants(texts: dict[str, str], seqs: dict[str, tuple[str, ...]] | None = None
                      ) -> list[tuple[str, str, float]]:
    """(id, id, similarity) for every pair of short texts (MIN_VARIANT_WORDS..SHORT_WORDS words) that
    differ by one substituted, added or dropped word; similarity is the share of words kept."""
    seqs = seqs if seqs is not None else {k: words(v) for k, v in texts.items()}
    seqs = {k: w for k, w in seqs.items() if MIN_VARIANT_WORDS - 1 <= len(w) <= SHORT_WORDS}
    full: dict[tuple[str, ...], list[str]] = {}
    holes: dict[tuple, list[str]] = {}
    for key in sorted(seqs):
        full.setdefault(seqs[key], []).append(key)
        for i in range(len(seqs[key])):
            holes.setdefault((i, seqs[key][:i] + seqs[key][i + 1:]), []).append(key)
    found: set[tuple[str, str]] = set()
    for group in holes.values():  # same length, one position apart: a substitution
        for i, a in enumerate(group):
            found.update((a, b) for b in group[i + 1:] if seqs[a] != seqs[b])
    for key, seq in seqs.items():  # one word longer: an insertion
        for i in range(len(seq)):
            found.update((other, key) for other in full.get(seq[:i] + seq[i + 1:], ()))
    out = []
    for a, b in sorted(tuple(sorted(p)) for p in found):
        longest = max(len(seqs[a]), len(seqs[b]))
        if longest >= MIN_VARIANT_WORDS:
            out.append((a, b, 1 - 1 / longest))
    return out


def near_pairs(texts: dict[str, str], threshold: float, seqs: dict[str, tuple[str, ...]] | None = None
               ) -> list[tuple[str, str, float]]:
    """Every near-duplicate pair by either measure (a pair found by both is listed once, best score);
    `seqs` holds `words` of each text when the caller has them (`compared`)."""
    best: dict[tuple[str, str], float] = {}
    seqs = seqs if seqs is not None else {k: words(v) for k, v in texts.items()}  # split once for both
    for a, b, score in [*similar_pairs(texts, threshold, seqs), *one_word_variants(texts, seqs)]:
        pair = (min(a, b), max(a, b))
        best[pair] = max(score, best.get(pair, 0.0))
    return [(a, b, best[(a, b)]) for a, b in sorted(best)]


def one_word_apart(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The pairwise form of `one_word_variants`' rule (same bounds), for one text against many."""
    if a == b or not MIN_VARIANT_WORDS <= max(len(a), len(b)) <= SHORT_WORDS:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long_ = sorted((a, b), key=len)
    return len(long_) - len(short) == 1 and any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


@dataclass(frozen=True)
class Similar:
    id: str
    score: float
    exact: bool

    def describe(self) -> str:
        return "repeats" if self.exact else f"is {self.score:.0%} similar to"


def similar_to(new: _Text, facts: Iterable[_Text], threshold: float = 0.92) -> list[Similar]:
    """The live facts of `new`'s kind that it repeats (the same words) or nearly repeats, best first."""
    from ..kinds import CLOSED_STATUSES

    mine = compared_text(new.title, new.body)
    mine_words, mine_set = words(mine), shingles(mine)
    out = []
    for fact in facts:
        if fact.kind != new.kind or fact.id == new.id or fact.status in CLOSED_STATUSES:
            continue
        text = compared_text(fact.title, fact.body)
        theirs = words(text)
        if theirs == mine_words:
            out.append(Similar(fact.id, 1.0, True))
        elif one_word_apart(mine_words, theirs):
            out.append(Similar(fact.id, 1 - 1 / max(len(mine_words), len(theirs)), False))
        elif mine_set:
            other = shingles(text)
            score = len(mine_set & other) / len(mine_set | other) if other else 0.0
            if score >= threshold:
                out.append(Similar(fact.id, score, False))
    return sorted(out, key=lambda s: (not s.exact, -s.score, s.id))
