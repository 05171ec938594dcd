"""The catalog: one SQLite file holding what the walk, the ranker and the renderer look up by id.

SQLite (standard library, ~4 ms to import) because recall touches a few dozen of possibly 50,000
items: random access by id, by edge end and by anchor path must not mean loading the whole record.
It also holds the manifest (schema version, model id, the stamp of every source file, each item's
content hash and vector row) so freshness is a matter of stat() calls and one query.

Tables:
- meta(key, value): `schema`, `model_id`, `dim`, `rows` (of the model's vectors), `built_at`, ...
- files(path, mtime_ns, size, ino, offset): every source file as last indexed (facts and WAL logs);
  `offset` is how far a live session log has been read (it is only ever appended to).
- manifest(k, blob): the scan the index was last brought up to date with, in parts (`sources.Scan.parts`).
- items(id, source, kind, title, status, priority, delivery, created, expires, review_after, summary,
  excerpt, body, path, hash, vec_row, vec_hash, needs_review, agent, host): one row per fact or session
  entry (`agent` and `host`: who wrote a session entry, `host` only for a team entry).
- edges(src, rel, dst): declared links, body mentions and session task links, as written.
- anchors(id, path, symbol, glob, key): anchor paths split from their symbols, for every question of the
  form "what is anchored to these files?" (the hooks, recall, `stele anchored`, the pre-commit hook).
  `key` is the path itself, or for a glob the folder it cannot leave (`src/api/**/*.py` -> `src/api`):
  a file's lookup is one indexed query on its ancestor folders, and it is matched only against the
  globs that could cover it.
- baselines(id, since, verified_at, prints): for each anchored item, what its freshness is measured
  against (`anchors/drift.py`): when it was last confirmed, the commit, its anchors' fingerprints (JSON).
- checks(id, spec): a fact's executable `check:` entries (`anchors.codecheck.dump`), for the pre-edit
  hook, which must not parse YAML; only facts that have some get a row.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..anchors.paths import ancestors, filed_under, inside, is_glob, normalize, path_matches, split
from ..errors import SteleError
from ..plain import dataclass, fields
from .items import Item

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..anchors.drift import Baseline

SCHEMA = 10  # 4: files.offset (live logs read on), 5: items.needs_review, 6: items.agent, items.host,
# 7: indexes on items(kind, status) and items(delivery) (the session-start hook's queries),
# 8: baselines (freshness: anchors/drift.py), 9: checks (a fact's `check:`: anchors/codecheck.py),
# 10: rebuilt so a fact whose `ast:`/`command:` check an older parse refused gets its checks row
_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
  ino INTEGER NOT NULL, offset INTEGER NOT NULL DEFAULT 0);
CREATE TABLE manifest (k INTEGER PRIMARY KEY, blob BLOB NOT NULL);
CREATE TABLE items (
  id TEXT PRIMARY KEY, source TEXT NOT NULL, kind TEXT NOT NULL, title TEXT NOT NULL, status TEXT,
  priority TEXT, delivery TEXT, created TEXT, expires TEXT, review_after TEXT, summary TEXT, excerpt TEXT,
  body TEXT, path TEXT NOT NULL, hash TEXT NOT NULL, vec_row INTEGER, vec_hash TEXT, needs_review TEXT,
  agent TEXT, host TEXT);
CREATE INDEX items_path ON items(path);
CREATE INDEX items_row ON items(vec_row);
CREATE INDEX items_kind ON items(kind, status);
CREATE INDEX items_delivery ON items(delivery);
CREATE TABLE edges (src TEXT NOT NULL, rel TEXT NOT NULL, dst TEXT NOT NULL);
CREATE INDEX edges_src ON edges(src);
CREATE INDEX edges_dst ON edges(dst);
CREATE TABLE anchors (id TEXT NOT NULL, path TEXT NOT NULL, symbol TEXT, glob INTEGER NOT NULL,
  key TEXT NOT NULL);
CREATE INDEX anchors_key ON anchors(key);
CREATE INDEX anchors_path ON anchors(path);
CREATE INDEX anchors_id ON anchors(id);
CREATE TABLE baselines (id TEXT PRIMARY KEY, since TEXT, verified_at TEXT, prints TEXT NOT NULL);
CREATE TABLE checks (id TEXT PRIMARY KEY, spec TEXT NOT NULL);
"""
# (item id, anchor path or glob, symbol or None, is glob)
Anchor = tuple[str, str, str | None, bool]


@dataclass
class Node:
    """What retrieval needs to know about an item (the body is fetched only when it is shown whole)."""
    id: str
    source: str
    kind: str
    title: str
    status: str = ""
    priority: str = "normal"
    delivery: str = ""
    created: str | None = None
    expires: str | None = None
    review_after: str | None = None
    summary: str = ""
    excerpt: str = ""
    path: str = ""
    needs_review: str | None = None  # why a person must look at it again (recall labels it)
    agent: str | None = None  # who wrote a session entry
    host: str | None = None  # where a team session entry was written (None: this clone's own)


NODE_COLUMNS = tuple(f.name for f in fields(Node))  # the items columns a Node is made of, in order


def _chunks(values: list, size: int = 500) -> Iterator[list]:
    for i in range(0, len(values), size):
        yield values[i:i + size]


def _rank(column: str, ranks: dict[str, float], default: float) -> tuple[str, list]:
    """`CASE column WHEN value THEN rank ... ELSE default END` and its arguments: an order given by
    the caller's table, so that the rule it comes from keeps its one home."""
    whens = " ".join("WHEN ? THEN ?" for _ in ranks)
    return (f"CASE {column} {whens} ELSE ? END" if ranks else "?",
            [*[x for v, n in ranks.items() for x in (v, n)], default])


class IndexUnavailable(SteleError):
    """The index can neither be opened nor built (retrieval degrades to session context)."""


class OutdatedIndex(ValueError):
    """The catalog is readable but in another schema: rebuilt without calling it damaged."""


class Catalog:
    def __init__(self, path: Path, create: bool = False) -> None:
        if not create and not path.is_file():
            raise FileNotFoundError(f"no catalog at {path}")
        self.path = path
        self.db = sqlite3.connect(str(path), isolation_level=None)
        # NORMAL: in WAL mode a commit no longer waits for fsync (a power cut may lose the last commits,
        # never consistency). The index is derived data: a lost commit is re-done by the next refresh,
        # which re-reads from the files table of the commit that survived. ~5 ms a commit on a hook.
        self.db.execute("PRAGMA synchronous=NORMAL")
        if create:
            self.db.executescript("PRAGMA journal_mode=WAL;" + _DDL)
            self.set_meta(schema=str(SCHEMA))
        elif self.meta("schema") != str(SCHEMA):
            raise OutdatedIndex(f"was built by another Stele version (schema {self.meta('schema')}; "
                                f"this one reads {SCHEMA})")

    def close(self) -> None:
        self.db.close()

    # -- manifest
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, **values: str) -> None:
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))

    def files(self) -> dict[str, tuple[tuple[int, int, int], int]]:
        """path -> (its stamp as indexed, how far it was read)."""
        return {p: ((m, s, i), o) for p, m, s, i, o in
                self.db.execute("SELECT path, mtime_ns, size, ino, offset FROM files")}

    def files_at(self, paths: list[str]) -> dict[str, tuple[tuple[int, int, int], int]]:
        """`files()` for some paths only."""
        out: dict[str, tuple[tuple[int, int, int], int]] = {}
        for chunk in _chunks(list(dict.fromkeys(paths))):
            marks = ",".join("?" * len(chunk))
            out.update((p, ((m, s, i), o)) for p, m, s, i, o in self.db.execute(
                f"SELECT path, mtime_ns, size, ino, offset FROM files WHERE path IN ({marks})", chunk))
        return out

    def set_files(self, stats: dict[str, tuple[tuple[int, int, int], int]], removed: Iterable[str] = ()
                  ) -> None:
        self.db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in removed])
        self.db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                            [(p, m, s, i, o) for p, ((m, s, i), o) in stats.items()])

    def manifest(self) -> list[bytes] | None:
        """The parts of the scan the index was last brought up to date with (`Scan.parts`)."""
        parts = [row[0] for row in self.db.execute("SELECT blob FROM manifest ORDER BY k")]
        return parts or None

    def set_manifest(self, parts: list[bytes] | None, old: list[bytes] | None = None) -> None:
        """Keep `parts` as the manifest; `old`, the manifest as read in this transaction, spares
        rewriting the parts that did not change."""
        if parts is None:
            self.db.execute("DELETE FROM manifest")
            return
        old = old or []
        self.db.execute("DELETE FROM manifest WHERE k >= ?", (len(parts),))
        self.db.executemany("INSERT OR REPLACE INTO manifest VALUES (?, ?)",
                            [(k, part) for k, part in enumerate(parts) if k >= len(old) or old[k] != part])

    # -- writing items
    def ids_at(self, path: str) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM items WHERE path = ?", (path,))]

    def path_of(self, item_id: str) -> str | None:
        row = self.db.execute("SELECT path FROM items WHERE id = ?", (item_id,)).fetchone()
        return row[0] if row else None

    def delete(self, ids: list[str]) -> None:
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for table, col in (("items", "id"), ("edges", "src"), ("anchors", "id"), ("baselines", "id"),
                               ("checks", "id")):
                self.db.execute(f"DELETE FROM {table} WHERE {col} IN ({marks})", chunk)

    def add(self, items: list[Item]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO items (id, source, kind, title, status, priority, delivery, created,"
            " expires, review_after, summary, excerpt, body, path, hash, needs_review, agent, host)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(i.id, i.source, i.kind, i.title, i.status, i.priority, i.delivery, i.created, i.expires,
              i.review_after, i.summary, i.excerpt, i.body, i.path, i.content_hash, i.needs_review,
              i.agent, i.host) for i in items])
        self.db.executemany("INSERT INTO edges VALUES (?, ?, ?)",
                            [(i.id, rel, dst) for i in items for rel, dst in i.edges])
        rows = []
        for i in items:
            for anchor in i.anchors:
                path, symbol = split(anchor)
                rows.append((i.id, path, symbol, int(is_glob(path)), filed_under(path)))
        self.db.executemany("INSERT INTO anchors VALUES (?, ?, ?, ?, ?)", rows)
        import json

        self.db.executemany("INSERT OR REPLACE INTO baselines VALUES (?, ?, ?, ?)",
                            [(i.id, i.verified or i.created, i.verified_at, json.dumps(i.prints, sort_keys=True))
                             for i in items if i.anchors])
        self.db.executemany("INSERT OR REPLACE INTO checks VALUES (?, ?)",
                            [(i.id, i.checks) for i in items if i.checks])

    def baselines(self, ids: Iterable[str]) -> dict[str, Baseline]:
        """id -> what its freshness is measured against (`anchors/drift.py`), for those of `ids` that
        have anchors; each anchor in the order written."""
        import json

        from ..anchors.drift import Baseline

        ids = list(dict.fromkeys(ids))
        found: dict[str, tuple] = {}
        anchors: dict[str, list[str]] = {}
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(f"SELECT id, since, verified_at, prints FROM baselines WHERE id IN ({marks})",
                                       chunk):
                found[row[0]] = row[1:]
            for i, path, symbol in self.db.execute(
                    f"SELECT id, path, symbol FROM anchors WHERE id IN ({marks}) ORDER BY id, rowid", chunk):
                anchors.setdefault(i, []).append(f"{path}::{symbol}" if symbol else path)
        out = {}
        for i, (since, commit, prints) in found.items():
            try:
                recorded = json.loads(prints)
            except ValueError:
                recorded = {}
            out[i] = Baseline(tuple(anchors.get(i, ())), since, commit,
                              recorded if isinstance(recorded, dict) else {})
        return out

    def checks(self, ids: Iterable[str]) -> dict[str, str]:
        """id -> its `check:` entries as stored (`anchors.codecheck.load` reads them), for those that have some."""
        out: dict[str, str] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            out.update(self.db.execute(f"SELECT id, spec FROM checks WHERE id IN ({marks})", chunk))
        return out

    def vector_rows(self, ids: list[str]) -> dict[str, tuple[int, str]]:
        """id -> (vector row, hash of the embedded text), for those of `ids` that have a vector."""
        out: dict[str, tuple[int, str]] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            out.update((i, (row, h)) for i, row, h in self.db.execute(
                f"SELECT id, vec_row, vec_hash FROM items WHERE vec_row IS NOT NULL AND id IN ({marks})",
                chunk))
        return out

    def hashes(self, ids: list[str]) -> dict[str, str]:
        """id -> content hash of the text the item embeds."""
        out: dict[str, str] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            out.update(self.db.execute(f"SELECT id, hash FROM items WHERE id IN ({marks})", chunk))
        return out

    def paths(self, ids: list[str]) -> dict[str, str]:
        """id -> the source file it was read from."""
        out: dict[str, str] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            out.update(self.db.execute(f"SELECT id, path FROM items WHERE id IN ({marks})", chunk))
        return out

    def needing_vectors(self, rows: int, ids: list[str] | None = None) -> list[tuple[str, str]]:
        """(id, content hash) of items without a valid vector among the first `rows` rows, in id order;
        only among `ids` when given (a refresh that knows which items it changed: the whole table is a
        scan of every row, ~0.5 s at 100,000 session entries)."""
        where = "(vec_row IS NULL OR vec_row >= ? OR vec_hash IS NOT hash)"
        if ids is None:
            return list(self.db.execute(f"SELECT id, hash FROM items WHERE {where} ORDER BY id", (rows,)))
        out: list[tuple[str, str]] = []
        for chunk in _chunks(sorted(set(ids))):
            marks = ",".join("?" * len(chunk))
            out += self.db.execute(f"SELECT id, hash FROM items WHERE id IN ({marks}) AND {where}", [*chunk, rows])
        return sorted(out)

    def vector_rows_used(self, rows: int) -> int:
        """How many distinct rows among the first `rows` items use."""
        return self.db.execute("SELECT count(DISTINCT vec_row) FROM items WHERE vec_row < ? AND vec_hash = hash",
                               (rows,)).fetchone()[0]

    def live_vectors(self, rows: int) -> list[tuple[str, int, str]]:
        """(id, row, hash) of items whose vector is valid, in row order."""
        return list(self.db.execute("SELECT id, vec_row, hash FROM items WHERE vec_row < ? "
                                    "AND vec_hash = hash ORDER BY vec_row", (rows,)))

    def clear_vector_rows(self) -> None:
        """No item has a vector (the model changed, or its store must be matched again)."""
        self.db.execute("UPDATE items SET vec_row = NULL, vec_hash = NULL")

    def indexed_files(self) -> int:
        return self.db.execute("SELECT count(*) FROM files").fetchone()[0]

    def restore_vector_rows(self, rows: dict[str, tuple[int, str]]) -> None:
        self.db.executemany("UPDATE items SET vec_row = ?, vec_hash = ? WHERE id = ?",
                            [(row, h, i) for i, (row, h) in rows.items()])

    # -- reading
    def count(self) -> int:
        return self.db.execute("SELECT count(*) FROM items").fetchone()[0]

    def nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, Node] = {}
        cols = ", ".join(NODE_COLUMNS)
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(f"SELECT {cols} FROM items WHERE id IN ({marks})", chunk):
                out[row[0]] = Node(*row)
        return out

    def embed_texts(self, ids: list[str]) -> list[str]:
        """The text each of `ids` is embedded from (`Item.embed_text`), in the order given."""
        texts: dict[str, str] = {}
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for i, title, body, summary in self.db.execute(
                    f"SELECT id, title, body, summary FROM items WHERE id IN ({marks})", chunk):
                texts[i] = Item(i, "", "", title, body, "", summary=summary or "").embed_text
        return [texts[i] for i in ids]

    def long_bodies(self, ids: list[str], at_least: int) -> dict[str, str]:
        """The bodies of those of `ids` that are at least `at_least` characters long."""
        out: dict[str, str] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            out.update(self.db.execute(
                f"SELECT id, body FROM items WHERE id IN ({marks}) AND length(body) >= ?", [*chunk, at_least]))
        return out

    def body(self, item_id: str) -> str:
        row = self.db.execute("SELECT body FROM items WHERE id = ?", (item_id,)).fetchone()
        return row[0] if row else ""

    def items_at_rows(self, rows: list[int]) -> dict[int, list[str]]:
        """Vector row -> the ids of every item that points at it (items with one text share a row), by id."""
        out: dict[int, list[str]] = {}
        for chunk in _chunks(list(dict.fromkeys(rows))):
            marks = ",".join("?" * len(chunk))
            for row, item_id in self.db.execute(
                    f"SELECT vec_row, id FROM items WHERE vec_row IN ({marks}) ORDER BY id", chunk):
                out.setdefault(row, []).append(item_id)
        return out

    def edges(self, ids: Iterable[str]) -> list[tuple[str, str, str]]:
        """Every edge with either end in `ids`, as (src, rel, dst)."""
        ids = list(dict.fromkeys(ids))
        out: list[tuple[str, str, str]] = []
        for chunk in _chunks(ids, 400):
            marks = ",".join("?" * len(chunk))
            out += self.db.execute(f"SELECT src, rel, dst FROM edges WHERE src IN ({marks}) UNION "
                                   f"SELECT src, rel, dst FROM edges WHERE dst IN ({marks})", chunk + chunk)
        return out

    def anchors_of(self, ids: Iterable[str]) -> dict[str, list[str]]:
        """Each of `ids` with anchors: its anchors as written (`path` or `path::Symbol`), sorted."""
        out: dict[str, list[str]] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            for i, path, symbol in self.db.execute(f"SELECT id, path, symbol FROM anchors WHERE id IN ({marks})",
                                                   chunk):
                out.setdefault(i, []).append(f"{path}::{symbol}" if symbol else path)
        return {i: sorted(v) for i, v in out.items()}

    def anchored(self, paths: Iterable[str]) -> list[Anchor]:
        """(id, anchor path, symbol, is glob) for anchors covering any of `paths`, each once."""
        found = self.covering(p for p in paths if p)
        return list(dict.fromkeys(row for rows in found.values() for row in rows))

    def covering(self, paths: Iterable[str]) -> dict[str, list[Anchor]]:
        """normalized path -> (id, anchor path, symbol, is glob) of every anchor covering it (symbol
        anchors by their file): the file's own first, then each folder up, each by item id and an item's
        in the order written (never by when it was indexed: that follows the index's history).
        `anchors.paths.path_matches` decides; the `key` column only narrows the query to the rows it
        could accept (`filed_under`)."""
        chains = {p: ancestors(p) for p in dict.fromkeys(normalize(p) for p in paths)}
        keys = sorted({k for chain in chains.values() for k in chain})
        by_key: dict[str, list[tuple]] = {}
        for chunk in _chunks(keys):
            marks = ",".join("?" * len(chunk))
            for key, *row in self.db.execute(f"SELECT key, id, path, symbol, glob FROM anchors WHERE key IN "
                                              f"({marks}) ORDER BY id, rowid", chunk):
                by_key.setdefault(key, []).append(row)
        out: dict[str, list[Anchor]] = {}
        for p, chain in chains.items():
            rows = [row for key in chain for row in by_key.get(key, ())]
            out[p] = [(i, path, symbol, bool(glob)) for i, path, symbol, glob in rows
                      if path_matches(path, p)]
        return out

    def anchors_inside(self, folder: str) -> list[Anchor]:
        """Anchors whose path (a glob's pattern) lies inside `folder`, or is it ("": every anchor), as
        `anchors.paths.inside` decides; the query only narrows the rows to the folder's range. By item id,
        an item's in the order written."""
        folder = normalize(folder)
        sql = "SELECT id, path, symbol, glob FROM anchors"
        rows = (self.db.execute(sql + " ORDER BY id, rowid") if not folder else self.db.execute(
            sql + " WHERE path = ? OR (path > ? AND path < ?) ORDER BY id, rowid",
            (folder, folder + "/", folder + "0")))  # "0" sorts right after "/": the folder's range
        return [(i, path, symbol, bool(glob)) for i, path, symbol, glob in rows if inside(path, folder)]

    def anchor_paths_ending(self, tail: str) -> list[str]:
        """Exact anchor paths that end with `/tail` (a file named in a prompt by its short path)."""
        return [r[0] for r in self.db.execute(
            "SELECT DISTINCT path FROM anchors WHERE glob = 0 AND (path = ? OR path LIKE ? ESCAPE '\\')",
            (tail, "%/" + tail.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")))]

    def ranked_tasks(self, statuses: tuple[str, ...], priorities: tuple[str, ...], default_priority: int,
                     first: Iterable[str], limit: int) -> tuple[list[Node], int]:
        """The committed tasks whose status is one of `statuses`: (the first `limit` of them, how many
        there are). Ordered as the caller's rule says, in SQLite, so that only the rows shown are read
        (a record of 50,000 facts holds ~6,000 open tasks): the ids in `first` ahead of the rest, then by
        the position of the status in `statuses`, of the priority in `priorities` (`default_priority`
        for any other value), then by id. The `items_kind` index covers the filter."""
        first = list(dict.fromkeys(first))
        where = f"source = 'committed' AND kind = 'task' AND status IN ({','.join('?' * len(statuses))})"
        total = self.db.execute(f"SELECT count(*) FROM items WHERE {where}", statuses).fetchone()[0]
        ahead = f"id IN ({','.join('?' * len(first))}) DESC, " if first else ""
        by_status, status_args = _rank("status", {v: n for n, v in enumerate(statuses)}, 0)
        by_priority, priority_args = _rank("priority", {v: n for n, v in enumerate(priorities)}, default_priority)
        rows = self.db.execute(
            f"SELECT {', '.join(NODE_COLUMNS)} FROM items WHERE {where} "
            f"ORDER BY {ahead}{by_status}, {by_priority}, id LIMIT ?",
            [*statuses, *first, *status_args, *priority_args, limit])
        return [Node(*r) for r in rows], total

    def ranked_committed(self, column: str, value: str, priorities: tuple[str, ...], default_priority: int,
                         weights: dict[str, float]) -> Iterator[Node]:
        """Committed items whose `column` (delivery, kind, ...) equals `value`, streamed in the order
        of `delivery.rule_order` given as its parts: the position of the priority in `priorities`
        (`default_priority` for any other value), then the kind's weight in `weights`, heaviest first
        (0 for a kind not there), then the id. A caller that needs the first few builds no more (the
        standing rules: ~2,000 at 50,000 facts, of which a session-start answer holds ~20)."""
        if column not in NODE_COLUMNS:
            raise ValueError(f"unknown catalog column {column!r}")
        by_priority, priority_args = _rank("priority", {v: n for n, v in enumerate(priorities)}, default_priority)
        by_weight, weight_args = _rank("kind", {k: -w for k, w in weights.items()}, 0)
        rows = self.db.execute(
            f"SELECT {', '.join(NODE_COLUMNS)} FROM items WHERE source = 'committed' AND {column} = ? "
            f"ORDER BY {by_priority}, {by_weight}, id", [value, *priority_args, *weight_args])
        for r in rows:
            yield Node(*r)

    def sample(self) -> tuple[str | None, str | None]:
        """(a committed item's title, a file some anchor names), each None when there is none: what
        the resident server's spare child warms up on (`cli/resident/spare.py`)."""
        title = self.db.execute("SELECT title FROM items WHERE source = 'committed' LIMIT 1").fetchone()
        path = self.db.execute("SELECT path FROM anchors WHERE glob = 0 LIMIT 1").fetchone()
        return (title[0] if title else None), (path[0] if path else None)

    def table_of_contents(self, on: str, closed: Iterable[str], skip_kinds: Iterable[str]
                          ) -> list[tuple[str, str, str, int, str]]:
        """(id, kind, title, edges, first anchor path) of every committed item that may be delivered on
        day `on` (ISO) without being a standing rule: not of a `closed` status, not expired or overdue,
        not `always` or `manual`, not of `skip_kinds`; each kind's most linked first, then the newest,
        then by id. The filter is SQL's (ISO dates compare as text): a 10,000-fact record costs a few
        milliseconds, where building every node did not (`index.contents`)."""
        closed, skip = list(closed), list(skip_kinds)
        marks = lambda xs: ",".join("?" * len(xs)) or "''"  # noqa: E731
        return [(r[0], r[1], r[2], int(r[3]), str(r[4] or "")) for r in self.db.execute(
            "WITH degree(id, n) AS (SELECT id, COUNT(*) FROM (SELECT src AS id FROM edges "
            "UNION ALL SELECT dst FROM edges) GROUP BY id), "
            "first(id, path) AS (SELECT id, MIN(path) FROM anchors WHERE glob = 0 GROUP BY id) "
            "SELECT i.id, i.kind, i.title, COALESCE(d.n, 0), f.path FROM items i "
            "LEFT JOIN degree d ON d.id = i.id LEFT JOIN first f ON f.id = i.id "
            f"WHERE i.source = 'committed' AND COALESCE(i.status, '') NOT IN ({marks(closed)}) "
            f"AND i.kind NOT IN ({marks(skip)}) AND COALESCE(i.delivery, '') NOT IN ('always', 'manual') "
            "AND (i.expires IS NULL OR i.expires = '' OR i.expires >= ?) "
            "AND (i.review_after IS NULL OR i.review_after = '' OR i.review_after >= ?) "
            "ORDER BY i.kind, COALESCE(d.n, 0) DESC, COALESCE(i.created, '') DESC, i.id",
            [*closed, *skip, on, on])]

    def committed_where(self, column: str, value: str) -> list[Node]:
        """Committed items whose `column` (delivery, kind, ...) equals `value`, in id order: the
        session-start hook's standing rules and open tasks without loading the record."""
        if column not in NODE_COLUMNS:
            raise ValueError(f"unknown catalog column {column!r}")
        cols = ", ".join(NODE_COLUMNS)
        return [Node(*r) for r in self.db.execute(
            f"SELECT {cols} FROM items WHERE source = 'committed' AND {column} = ? ORDER BY id", (value,))]
