"""Drift: has the code a fact (or a session entry) is anchored to changed since it was last confirmed?

A fact records, when it is written and again at each `stele verify`, the fingerprint of every anchor
that resolves (`fingerprint.py`), and `verified_at`, the commit it was confirmed against. A session
entry records the fingerprints of the files it names when it is appended (`session/wal.py`). Drift is
the fingerprint now differing from the recorded one; then git says by how much:

- the commits that changed the anchor since the baseline (`verified_at..HEAD`, else commits after the
  `verified` (or `created`) date, or after a session entry's timestamp): for a symbol anchor only the
  commits in which the symbol's own fingerprint changed (each version of the file is read once, by blob
  id, and fingerprinted), for a file anchor the commits in which the file's fingerprint changed
  (whitespace-only commits do not count);
- the lines added and removed between the anchored code as it was at the baseline and as it is now
  (the symbol's lines, or the whole file);
- whether the working tree differs from the last commit (uncommitted edits).

Without a recorded fingerprint (an older fact) the baseline is the anchor's content at the baseline
commit, read from git. An anchor that is a glob or a folder, or that does not resolve, has no drift
(`stele doctor` reports broken anchors).

Cheap enough for a hook: an anchor whose fingerprint is unchanged costs a file read and a SHA-1 (the
fingerprint is cached by the file's blob id, so nothing is parsed twice), and no git process. Only a
drifted anchor asks git, once per HEAD: the answers are cached in `.stele/index/drift.json` (derived,
safe to delete) keyed by HEAD's sha, which is read from git's files without running git.
"""
from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

from .. import treefile
from ..plain import dataclass, field
from ..textcut import counted
from .paths import is_glob, split

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:  # imported where used: a recall whose items have no fingerprints needs neither
    from .. import gitrepo
    from ..project import Project

ZERO = "0" * 40
CACHE_VERSION = 2  # 2: a date baseline counts its whole day (logs cached by 1 left its morning out)
MAX_PRINTS = 20_000  # cached fingerprints kept (by blob id and symbol); oldest dropped past it


@dataclass(frozen=True)
class Baseline:
    """What an item was confirmed against: `since` an ISO date or timestamp (a fact's `verified`, else
    its `created`; a session entry's `ts`), `commit` a fact's `verified_at`, `prints` the fingerprints
    recorded then (anchor -> fingerprint)."""
    anchors: tuple[str, ...]
    since: str | None = None
    commit: str | None = None
    prints: dict[str, str] = field(default_factory=dict)


@dataclass
class Drift:
    commits: int                      # commits that changed the anchored code since the baseline
    added: int | None = None          # lines, between the anchored code at the baseline and now
    removed: int | None = None
    since: str = ""                   # the baseline: a commit (short) or a date
    last: str | None = None           # the newest of those commits (short sha)
    uncommitted: bool = False         # the working tree differs from the last commit
    anchors: list[str] = field(default_factory=list)  # the anchors that drifted
    shas: list[str] = field(default_factory=list)     # the commits, oldest first (short)

    def as_dict(self) -> dict[str, Any]:
        return {"commits": self.commits, "added": self.added, "removed": self.removed, "since": self.since,
                "last": self.last, "uncommitted": self.uncommitted, "anchors": list(self.anchors),
                "shas": list(self.shas)}

    def label(self, verb: str = "verified") -> str:
        """`anchor changed in 3 commits since verified (+40/-12 lines)`."""
        lines = f" (+{self.added}/-{self.removed} lines)" if self.added is not None else ""
        if self.commits:
            n = counted(self.commits, "commit")
            more = ", and uncommitted edits" if self.uncommitted else ""
            return f"anchor changed in {n}{more} since {verb}{lines}"
        return f"anchor changed since {verb}" + (" (uncommitted edits)" if self.uncommitted else "") + lines


def blob_id(data: bytes) -> str:
    """git's blob id of `data` (what `git hash-object` prints), without running git. hashlib (OpenSSL's
    libcrypto, ~4 ms to load) is imported here: a prompt whose entries need no blob id never loads it."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Checker:
    """Drift of many items against one checkout; holds the cache while it lives (`save()` to keep it)."""

    def __init__(self, root: Path, head: str | None, cache_path: Path | None = None, unpinned: bool = True,
                 deadline: float | None = None) -> None:
        """`unpinned=False` checks only anchors with a recorded fingerprint (the hooks: an anchor
        without one would need git to find its baseline, on every HEAD). Past `deadline` (a
        `time.monotonic()` value) git is not asked any more: a drifted anchor is then reported
        without its commits, and asked about again next time."""
        self.root, self.head, self.cache_path, self.unpinned = root, head, cache_path, unpinned
        self.deadline = deadline
        self._prints: dict[str, str | None] = {}
        self._logs: dict[str, dict[str, Any]] = {}
        self._lines: dict[str, list[int]] = {}
        self._dirty = False
        self._files: dict[str, tuple[str, str] | None] = {}
        self._compared = False
        if cache_path is not None:
            self._load()

    @classmethod
    def for_project(cls, project: Project, unpinned: bool = True, deadline: float | None = None) -> Checker:
        from .. import gitrepo

        head = gitrepo.head_id(project.git_dir, project.git_common_dir)
        return cls(project.root, head, project.index_dir / "drift.json", unpinned, deadline)

    # -- the cache
    def _load(self) -> None:
        try:
            data = json.loads(self.cache_path.read_text(encoding="utf-8"))  # type: ignore[union-attr]
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("v") != CACHE_VERSION:
            return
        self._prints = data.get("prints") or {}
        self._lines = data.get("lines") or {}
        if data.get("head") == self.head and self.head is not None:
            self._logs = data.get("logs") or {}

    def save(self) -> None:
        """Keep what was learned (best effort: a read-only checkout only loses the cache)."""
        if not self._dirty or self.cache_path is None or self.head is None:
            return
        from .. import atomic

        prints = dict(list(self._prints.items())[-MAX_PRINTS:])
        lines = dict(list(self._lines.items())[-MAX_PRINTS:])
        data = {"v": CACHE_VERSION, "head": self.head, "prints": prints, "lines": lines, "logs": self._logs}
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            atomic.write(self.cache_path, json.dumps(data, separators=(",", ":")))
            self._dirty = False
        except OSError:
            pass

    # -- reading
    def _now(self, path: str) -> tuple[str, str] | None:
        """(blob id, text) of `path` in the working tree; None when it is not a readable file."""
        if path not in self._files:
            try:
                data = treefile.read_bytes(self.root / path, self.root)
            except OSError:
                self._files[path] = None
            else:
                self._files[path] = (blob_id(data), data.decode("utf-8", "replace"))
        return self._files[path]

    def _print(self, blob: str, text: str | None, symbol: str | None, path: str) -> str | None:
        key = f"{blob}\0{symbol or ''}\0{path}"
        if key not in self._prints:
            if text is None:
                return None
            from . import fingerprint

            self._prints[key] = fingerprint.of_symbol(text, symbol, path) if symbol else fingerprint.of_file(text)
            self._dirty = True
        return self._prints[key]

    def _changes(self, path: str, base: Baseline) -> tuple[list[gitrepo.Change] | None, str]:
        """The commits that changed `path` since the baseline, and the baseline they were counted from
        (the commit, or the date when git does not know that commit: a shallow clone, a rebase)."""
        from .. import gitrepo

        key = f"{base.commit or ''}\0{base.since or ''}\0{path}"
        if (key not in self._logs or self.head is None) and self.deadline is not None \
                and time.monotonic() > self.deadline:
            return None, base.commit[:7] if base.commit else (base.since or "")
        if key not in self._logs or self.head is None:
            found = gitrepo.path_changes(self.root, path, since_commit=base.commit) if base.commit else None
            since = base.commit[:7] if found is not None and base.commit else (base.since or "")
            if found is None and base.since:
                found = gitrepo.path_changes(self.root, path, since_time=base.since)
            rows = [[c.sha, c.time, c.before, c.after] for c in found] if found is not None else None
            self._logs[key] = {"since": since, "rows": rows}
            self._dirty = True
        entry = self._logs[key]
        rows = entry["rows"]
        return ([gitrepo.Change(*r) for r in rows] if rows is not None else None), entry["since"]

    # -- the question
    def drift(self, base: Baseline) -> Drift | None:
        """The drift of an item's anchors since its baseline, or None when none of them changed (or it
        cannot be told: no fingerprint and no baseline to read one from)."""
        return self.check(base)[0]

    def check(self, base: Baseline) -> tuple[Drift | None, bool]:
        """(`drift(base)`, whether any anchor could be compared at all: one that resolves now)."""
        found: list[tuple[str, list[gitrepo.Change], bool, tuple[int, int] | None]] = []
        since = base.commit[:7] if base.commit else (base.since or "")
        self._compared = False
        for anchor in base.anchors:
            one = self._anchor(anchor, base)
            if one is not None:
                found.append((anchor, *one[:3]))
                since = one[3]
        if not found:
            return None, self._compared
        commits: dict[str, gitrepo.Change] = {}
        added = removed = 0
        counted_lines = False
        for _, changes, _, lines in found:
            commits.update((c.sha, c) for c in changes)
            if lines is not None:
                added, removed, counted_lines = added + lines[0], removed + lines[1], True
        ordered = sorted(commits.values(), key=lambda c: c.time)
        return Drift(len(ordered), added if counted_lines else None, removed if counted_lines else None,
                     since=since, last=ordered[-1].sha[:7] if ordered else None,
                     uncommitted=any(u for _, _, u, _ in found), anchors=[a for a, *_ in found],
                     shas=[c.sha[:7] for c in ordered]), True

    def _anchor(self, anchor: str, base: Baseline
                ) -> tuple[list[gitrepo.Change], bool, tuple[int, int] | None, str] | None:
        """(the commits that changed it, uncommitted edits?, (added, removed) lines, the baseline they
        were counted from) when it drifted."""
        path, symbol = split(anchor)
        if is_glob(path) or (not self.unpinned and anchor not in base.prints):
            return None
        now = self._now(path)
        if now is None:
            return None
        print_now = self._print(now[0], now[1], symbol, path)
        if print_now is None:
            return None  # the symbol is gone: a broken anchor, doctor's business
        self._compared = True
        recorded = base.prints.get(anchor)
        if recorded == print_now or (recorded is None and not (base.commit or base.since)):
            return None
        known, since = self._changes(path, base)
        if known is None:  # git cannot say (no repository, past the deadline): changed, by how much unknown
            return ([], False, None, since) if recorded is not None else None
        changes = known
        texts = self._texts([b for c in changes for b in (c.before, c.after)], symbol, path)
        first = changes[0].before if changes else None
        prev = self._print(first, texts.get(first), symbol, path) if first and first != ZERO else None
        if recorded is None and (prev is None or prev == print_now):
            return None  # no fingerprint, and the code at the baseline is unknown or the same
        baseline = recorded if recorded is not None else prev
        after = [self._print(c.after, texts.get(c.after), symbol, path) if c.after != ZERO else None
                 for c in changes]
        # count from the last commit that left the code as it was verified (the window may start
        # before it: a date, when the commit is not known), each commit against the state before it;
        # a commit that adds the file changed no code the item was written against (it was not in git
        # then: an item about an uncommitted file, or a record brought from another checkout)
        start = max((k + 1 for k, p in enumerate(after) if p == baseline), default=0)
        base_blob = changes[start - 1].after if start else first
        counted, last_print = [], baseline
        for c, p in zip(changes[start:], after[start:], strict=True):
            if p != last_print and c.before != ZERO:
                counted.append(c)
            last_print = p
        lines = self._diff(base_blob, now, symbol, path, texts) if base_blob and base_blob != ZERO else None
        return counted, last_print != print_now, lines, since

    def _texts(self, blobs: list[str], symbol: str | None, path: str) -> dict[str, str]:
        """The texts of those `blobs` whose fingerprint is not cached yet, in one `git cat-file`."""
        missing = [b for b in dict.fromkeys(blobs) if b != ZERO and f"{b}\0{symbol or ''}\0{path}" not in self._prints]
        if not missing:
            return {}
        from .. import gitrepo

        try:
            read = gitrepo.read_blobs(self.root, missing)
        except Exception:
            return {}
        return {b: data.decode("utf-8", "replace") for b, data in read.items() if data is not None}

    def _diff(self, before: str, now: tuple[str, str], symbol: str | None, path: str,
              texts: dict[str, str]) -> tuple[int, int] | None:
        key = f"{before}\0{now[0]}\0{symbol or ''}\0{path}"
        if key not in self._lines:
            old = texts.get(before)
            if old is None:
                from .. import gitrepo

                try:
                    blob = gitrepo.read_blobs(self.root, [before]).get(before)
                except Exception:
                    return None
                if blob is None:
                    return None
                old = blob.decode("utf-8", "replace")
            self._lines[key] = list(changed_lines(_span(old, symbol, path), _span(now[1], symbol, path)))
            self._dirty = True
        a, r = self._lines[key]
        return a, r


def _span(text: str, symbol: str | None, path: str) -> list[str]:
    from . import symbols

    lines = text.splitlines()
    if symbol is None:
        return lines
    where = symbols.find(text, symbol, path)
    return lines[where[0] - 1:where[1]] if where else []


def changed_lines(old: list[str], new: list[str]) -> tuple[int, int]:
    """(added, removed) lines from `old` to `new`, as a unified diff counts them."""
    import difflib

    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def days_ago(since: str | None, today: dt.date) -> str | None:
    """`12 days ago`, `today`, `1 day ago` for an ISO date or timestamp; None when it cannot be read."""
    if not since:
        return None
    try:
        day = dt.date.fromisoformat(since[:10])
    except ValueError:
        return None
    n = (today - day).days
    return "today" if n <= 0 else "1 day ago" if n == 1 else f"{n} days ago"
