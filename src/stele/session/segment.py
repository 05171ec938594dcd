"""The objects session sync writes: segments, heads and vector packs, and how a reader checks them.

A segment is a session's new WAL lines followed by one trailer line that names the session, the
sequence number, the writer and host, the line count and the SHA-256 of the bytes before it. The
object is the whole proof of itself: a reader needs no second request to know that what it got is
complete (the trailer is last, so a cut-off object has none) and unchanged (the hash). Verification
is also where pulled lines stop being trusted input: every line must be an entry of this session with
an `S-` id, or the segment is refused whole.

A vector pack is a JSON header line (model id, dimension, entry ids, content hashes, SHA-256) and
then the float32 rows, little-endian: readable with or without numpy, checked the same way.
Nothing here does I/O or imports an S3 client.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from ..ids import SESSION_ID_RE
from ..textcut import counted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1
TRAILER = "stele_segment"
PACK = "stele_vectors"
MAX_LINES = 2000  # per segment; a longer backlog becomes several
SEGMENT_BYTES = 16 << 20  # of lines per segment a writer sends at most (a backlog is also cut by size)
MAX_BYTES = 4 * SEGMENT_BYTES  # an object larger than this is not a segment Stele wrote: never downloaded
SEQ_DIGITS = 8
_SEQ_RE = re.compile(r"^(\d{8})\.(jsonl|vec)$")
_MODEL_KEY_RE = re.compile(r"[^A-Za-z0-9._@-]")


class BadSegment(ValueError):
    """A segment or pack that fails verification; the message says why in a few words."""


def chunks(sizes: list[int], start: int = 0) -> list[tuple[int, int]]:
    """[a, b) spans of `sizes[start:]` (each line's bytes) for one segment each: at most MAX_LINES
    lines and, past its first line, at most SEGMENT_BYTES."""
    out, a, size = [], start, 0
    for i in range(start, len(sizes)):
        if i > a and (i - a >= MAX_LINES or size + sizes[i] > SEGMENT_BYTES):
            out.append((a, i))
            a, size = i, 0
        size += sizes[i]
    if a < len(sizes):
        out.append((a, len(sizes)))
    return out


def fetch(store: Any, key: str, listed: int | None = None) -> bytes | None:
    """`key`'s bytes from the store (None: gone), never more than MAX_BYTES held: an object listed or
    sent larger raises BadSegment, as a teammate's bucket may hold gigabytes under a segment's name."""
    if listed is None or listed <= MAX_BYTES:
        data = store.get(key, limit=MAX_BYTES)
        if data is None or len(data) <= MAX_BYTES:
            return data
    raise BadSegment(f"larger than the {MAX_BYTES >> 20} MiB a segment can be: not downloaded")


# -- keys ------------------------------------------------------------------------------------------

def seq_name(seq: int, suffix: str = "jsonl") -> str:
    return f"{seq:0{SEQ_DIGITS}d}.{suffix}"


def segment_key(prefix: str, session: str, seq: int) -> str:
    return f"{prefix}wal/{session}/{seq_name(seq)}"


def head_key(prefix: str, session: str, writer: str) -> str:
    return f"{prefix}head/{session}/{writer}.json"


def pack_key(prefix: str, model_id: str, session: str, seq: int) -> str:
    return f"{prefix}vec/{model_key(model_id)}/{session}/{seq_name(seq, 'vec')}"


def model_key(model_id: str) -> str:
    """A model id as one key part (`hub:org/name` -> `hub-org-name`); the pack header keeps the exact id."""
    return _MODEL_KEY_RE.sub("-", model_id)[:128]


def parse_seq(name: str) -> int | None:
    m = _SEQ_RE.match(name)
    return int(m.group(1)) if m else None


# -- segments --------------------------------------------------------------------------------------

def line(data: dict[str, Any]) -> bytes:
    """One entry as the WAL writes it (wal.append's separators), newline included."""
    return (json.dumps(data, ensure_ascii=False, separators=(", ", ": ")) + "\n").encode("utf-8")


def encode(session: str, seq: int, writer: str, host: str, entries: list[dict[str, Any]]) -> bytes:
    body = b"".join(line(e) for e in entries)
    trailer = {TRAILER: FORMAT, "session": session, "seq": seq, "writer": writer, "host": host,
               "lines": len(entries), "sha256": hashlib.sha256(body).hexdigest()}
    return body + line(trailer)


@dataclass
class Segment:
    session: str
    seq: int
    writer: str
    host: str
    entries: list[dict[str, Any]]


def decode(session: str, seq: int, data: bytes) -> Segment:
    """Check a downloaded segment against its key and itself; raises BadSegment saying why."""
    if not data.endswith(b"\n"):
        raise BadSegment("truncated (no trailer line)")
    cut = data.rfind(b"\n", 0, len(data) - 1) + 1
    body, tail = data[:cut], data[cut:]
    try:
        trailer = json.loads(tail)
    except ValueError:
        raise BadSegment("truncated or damaged (the last line is not a trailer)") from None
    if not isinstance(trailer, dict) or trailer.get(TRAILER) != FORMAT:
        raise BadSegment("truncated or damaged (the last line is not a trailer)")
    if trailer.get("session") != session or trailer.get("seq") != seq:
        raise BadSegment(f"its trailer names {trailer.get('session')}/{trailer.get('seq')}, not its own key")
    if hashlib.sha256(body).hexdigest() != trailer.get("sha256"):
        raise BadSegment("content does not match its SHA-256 (tampered with or damaged)")
    raw = body.split(b"\n")[:-1]
    if len(raw) != trailer.get("lines"):
        raise BadSegment(f"{counted(len(raw), 'line')}, its trailer says {trailer.get('lines')}")
    entries = []
    for n, item in enumerate(raw, 1):
        try:
            entry = json.loads(item)
        except ValueError:
            raise BadSegment(f"line {n} is not JSON") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) \
                or not SESSION_ID_RE.match(entry["id"]) or entry.get("session") != session:
            raise BadSegment(f"line {n} is not an entry of session {session}")
        entries.append(entry)
    writer, host = trailer.get("writer"), trailer.get("host")
    return Segment(session, seq, str(writer or ""), str(host or ""), entries)


# -- heads -----------------------------------------------------------------------------------------

def head(session: str, writer: str, host: str, agent: str | None, seq: int, lines: int, ts: str) -> bytes:
    return line({"v": FORMAT, "session": session, "writer": writer, "host": host, "agent": agent,
                 "seq": seq, "lines": lines, "updated": ts})


# -- vector packs ----------------------------------------------------------------------------------

def encode_pack(model_id: str, dim: int, ids: list[str], hashes: list[str], rows: bytes) -> bytes:
    """`rows`: len(ids) x dim float32 values, little-endian, row after row."""
    header = {PACK: FORMAT, "model_id": model_id, "dim": dim, "ids": ids, "hashes": hashes,
              "sha256": hashlib.sha256(rows).hexdigest()}
    return line(header) + rows


@dataclass
class Pack:
    model_id: str
    dim: int
    ids: list[str]
    hashes: list[str]
    rows: bytes

    def row(self, n: int) -> bytes:
        size = self.dim * 4
        return self.rows[n * size:(n + 1) * size]


def decode_pack(data: bytes) -> Pack:
    cut = data.find(b"\n")
    try:
        header = json.loads(data[:cut]) if cut > 0 else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get(PACK) != FORMAT:
        raise BadSegment("not a vector pack (no header)")
    rows = data[cut + 1:]
    ids, hashes, dim = header.get("ids"), header.get("hashes"), header.get("dim")
    if not (isinstance(ids, list) and isinstance(hashes, list) and isinstance(dim, int) and dim > 0
            and len(ids) == len(hashes) and len(rows) == len(ids) * dim * 4):
        raise BadSegment("vector pack of the wrong shape (truncated?)")
    if hashlib.sha256(rows).hexdigest() != header.get("sha256"):
        raise BadSegment("vector pack does not match its SHA-256")
    return Pack(str(header.get("model_id", "")), dim, [str(i) for i in ids], [str(h) for h in hashes], rows)
