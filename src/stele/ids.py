"""Fact ids: a kind prefix and a random Crockford base32 suffix.

Random, not counters: two branches must never mint the same id. Session entries use ULIDs (`S-` +
26 Crockford characters), which sort by time. An imported fact's id is derived from what it was read
from (`derived_id`): the same suffix shape, as unlikely to collide as a random one across different
sources, and the same on a dry run and the real run, so a dry run can be used to plan a review (and two
branches importing the same text mint the same fact, not two).
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Container

from .kinds import BY_PREFIX, KINDS
from .lazyre import lazy

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
SUFFIX_LEN = 4

_PREFIXES = "|".join(sorted(BY_PREFIX, key=len, reverse=True))
# A full id: known prefix, dash, 4 Crockford characters or digits (3 to MAX_SUFFIX read). Bounded: a
# longer run is no id of ours, and as one it would name a file or a claim ref the file system refuses
# (a 300-character "id" made `task claim` retry 60 times and blame contention).
MAX_SUFFIX = 32
ID_RE = lazy(rf"^(?:{_PREFIXES})-[0-9A-HJKMNP-TV-Z]{{3,{MAX_SUFFIX}}}$")
SESSION_ID_RE = lazy(r"^S-[0-9A-HJKMNP-TV-Z]{10,32}$")
# Ids inside free text (bodies, prompts): bounded by non-word characters.
MENTION_RE = re.compile(rf"(?<![\w-])((?:{_PREFIXES})-[0-9A-HJKMNP-TV-Z]{{3,{MAX_SUFFIX}}}"
                        r"|S-[0-9A-HJKMNP-TV-Z]{10,32})(?![\w-])")


def prefix_of(fact_id: str) -> str:
    return fact_id.split("-", 1)[0]


def is_fact_id(text: str) -> bool:
    return bool(ID_RE.match(text))


def new_id(kind: str, taken: Container[str] = ()) -> str:
    """A fresh id for `kind`, re-drawn until it collides with nothing in `taken`."""
    prefix = KINDS[kind].prefix
    while True:
        import secrets  # only when minting: not on the path of a read (it imports random and hashlib)

        candidate = f"{prefix}-" + "".join(secrets.choice(CROCKFORD) for _ in range(SUFFIX_LEN))
        if candidate not in taken:
            return candidate


def derived_id(kind: str, seed: str, taken: Container[str] = ()) -> str:
    """An id for `kind` that depends only on `seed` (an imported text and where it was read) and on
    `taken`: hashed into the suffix, re-hashed with a counter until it collides with nothing taken."""
    import hashlib

    prefix = KINDS[kind].prefix
    n = 0
    while True:
        digest = int.from_bytes(hashlib.sha256(f"{n}\0{kind}\0{seed}".encode()).digest()[:8], "big")
        candidate = f"{prefix}-" + "".join(CROCKFORD[(digest >> (5 * i)) & 31] for i in range(SUFFIX_LEN))
        if candidate not in taken:
            return candidate
        n += 1


def mentioned_ids(text: str) -> list[str]:
    """Ids named in free text, first occurrence order, without duplicates."""
    seen: dict[str, None] = {}
    for m in MENTION_RE.finditer(text):
        seen.setdefault(m.group(1), None)
    return list(seen)


def ulid(now: float | None = None) -> str:
    """A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32 (26 characters)."""
    ms = int((time.time() if now is None else now) * 1000)
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    out = []
    for _ in range(26):
        out.append(CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(out))


def session_entry_id() -> str:
    return "S-" + ulid()
