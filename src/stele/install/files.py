"""Changing other tools' files so that uninstall can give them back.

Every installer describes its change to a file as an `Edit`: `apply(old)` gives the file with
Stele's entries in (from the old text, None when absent), `remove(text, created, before)` gives it
with them out (None to delete the file; `before` is the text Stele first found, when the ledger has
it, so that what was there already stays: an empty `hooks` object, say). This module does the rest,
the same way for every target:

- A ledger under `<scope>/.stele/state/install/` keeps, for each file Stele changed, the original
  bytes and permission bits from the first time (or "did not exist"), the hash of the bytes Stele
  last wrote and the folders it had to create. Installs and uninstalls take the scope's install lock
  (`.stele/state/install.lock`) for the whole read-change-record, so concurrent runs lose nothing.
- Uninstall restores the original bytes and mode when the file is exactly as Stele left it. When
  someone has changed it since, restoring would lose their work, so only Stele's entries are taken
  out; and a reinstall over such a change makes their version, minus Stele's entries, the one to
  restore. A folder Stele created goes when the last file in it does, whichever target removes it.
- Edits see text; the file keeps its form (line ends, byte-order mark, encoding: `textform`). A
  symbolic link (a dotfiles setup) is written through, never replaced by a file.
- Writes are atomic, a second install that changes nothing writes nothing, and a dry run computes
  the same changes (with a diff) and touches nothing, ledger and lock included.
- A file someone made read-only is read-only on purpose: a change to it is refused with its name
  (`refuse_unwritable`), and before a target writes anything every file it would change is checked
  (`preflight`), so an install lands whole or not at all. A rename over a file ignores the file's own
  permission bits, which is why this is checked and not left to the write.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .. import atomic, textform
from ..errors import SteleError, UsageError
from ..project import Project
from .targets import Change


class EditError(ValueError):
    """A file Stele must change is not in the shape it expects (e.g. not valid JSON)."""


class Edit(Protocol):
    def apply(self, old: str | None) -> str: ...

    def remove(self, text: str, created: bool, before: str | None = None) -> str | None: ...


# What a target changes in one scope: (path, edit, a note shown when the file changes)
Plan = list[tuple[Path, Edit, str]]


@dataclass
class Scope:
    """Where a target writes: the repository root (`project`) or the home folder (`user`)."""
    name: str
    root: Path

    @property
    def ledger_dir(self) -> Path:
        return Project(self.root).local("state") / "install"

    @property
    def lock_path(self) -> Path:
        return Project(self.root).local("state") / "install.lock"


@contextmanager
def _locked(scope: Scope, dry_run: bool) -> Iterator[None]:
    """The scope's install lock for a real run; a dry run writes nothing, the lock file included."""
    if dry_run:
        yield
        return
    with atomic.locked(scope.lock_path):
        yield


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class Ledger:
    """Read when the scope's install lock is taken and saved before it is let go."""

    def __init__(self, scope: Scope) -> None:
        self.dir = scope.ledger_dir
        self.root = scope.root
        self.path = self.dir / "ledger.json"
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.entries: dict[str, dict] = data.get("files", {})
            self.dirs: list[str] = [d for d in data.get("dirs", []) if isinstance(d, str)]
        except (OSError, ValueError, AttributeError):
            self.entries, self.dirs = {}, []

    def key(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def backup_path(self, key: str) -> Path:
        return self.dir / "originals" / (key.replace("/", "__") + ".orig")

    def original(self, key: str) -> bytes | None:
        entry = self.entries.get(key, {})
        if not entry.get("existed"):
            return None
        try:
            return self.backup_path(key).read_bytes()
        except FileNotFoundError:
            return None

    def record(self, path: Path, old: bytes | None, new: bytes, mode: int | None, created_dirs: list[Path],
               baseline: Callable[[bool, bytes | None], bytes | None]) -> None:
        """Note that Stele wrote `new` over `old` (whose permission bits were `mode`). The first time,
        `old` is what uninstall restores. When someone changed the file after Stele last wrote it,
        their version minus Stele's entries (`baseline`) becomes what uninstall restores, so a
        reinstall never costs them that change."""
        key = self.key(path)
        entry = self.entries.get(key)
        if entry is not None and old is not None and digest(old) != entry.get("written"):
            original = baseline(not entry.get("existed"), self.original(key))
            entry["existed"] = original is not None
            if original is not None:
                atomic.write(self.backup_path(key), original, mode=0o600)
                entry["mode"] = mode
        if entry is None:  # first change: keep what was there before Stele
            entry = {"existed": old is not None, "dirs": [self.key(d) for d in created_dirs]}
            if old is not None:
                atomic.write(self.backup_path(key), old, mode=0o600)  # settings can hold secrets
                entry["mode"] = mode
        entry["written"] = digest(new)
        self.entries[key] = entry
        self.save()

    def forget(self, path: Path) -> list[str]:
        """Drop `path`'s entry; the folders Stele created for it (deepest first)."""
        key = self.key(path)
        entry = self.entries.pop(key, None)
        if entry is None:
            return []
        self.backup_path(key).unlink(missing_ok=True)
        return list(entry.get("dirs", []))

    def prune(self, dirs: list[str]) -> None:
        """Remove the folders Stele created that are empty now (`dirs`, and those an earlier uninstall
        left because another target's file was still in them: `.codex/` of `codex` and `codex-mcp`)."""
        left = []
        for d in sorted(dict.fromkeys(self.dirs + dirs), key=lambda d: d.count("/"), reverse=True):
            try:
                (self.root / d).rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                left.append(d)  # someone's files live there (another target's, or the user's)
        self.dirs = left if self.entries else []

    def save(self) -> None:
        if self.entries:
            data = {"v": 1, "files": self.entries, **({"dirs": self.dirs} if self.dirs else {})}
            atomic.write(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")
            return
        self.path.unlink(missing_ok=True)  # nothing installed any more: leave no trace
        for d in (self.dir / "originals", self.dir):
            try:
                d.rmdir()
            except OSError:
                pass


def diff(path: Path, old: str | None, new: str | None) -> str:
    lines = difflib.unified_diff((old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                                 fromfile=f"a/{path.name}" if old is not None else "/dev/null",
                                 tofile=f"b/{path.name}" if new is not None else "/dev/null")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _missing_dirs(path: Path, stop: Path) -> list[Path]:
    out, d = [], path.parent
    while d != stop and not d.exists():
        out.append(d)
        d = d.parent
    return out


def _checked(path: Path, func, *args):
    try:
        return func(*args)
    except EditError as e:
        raise SteleError(f"{path}: {e}; fix the file, or make the change by hand (`--dry-run` shows it)"
                         ) from None


def _real(path: Path) -> Path:
    """Where `path`'s bytes live: through a symbolic link (a dotfiles checkout) to its target."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def read_regular(path: Path, shown: Path | None = None) -> tuple[bytes | None, int | None]:
    """A file's bytes and permission bits (None, None when it is absent). Anything but a regular file
    is refused with its name before it is opened: reading a FIFO waits forever, and writing over a
    link to /dev/null would replace the device with a file."""
    from .. import treefile

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None, None
    if not stat.S_ISREG(mode):
        name, real = shown or path, os.path.realpath(path)
        leads = f" (it leads to {real})" if real != str(name) else ""
        raise SteleError(f"{name}: is not a regular file{leads}; Stele reads and writes only regular files: "
                         "make the change by hand")
    return treefile.read_bytes(path), mode & 0o7777  # opened without blocking: a swap since is refused too


def unwritable(path: Path) -> str | None:
    """Why Stele may not write `path` (through a link: its target), or None. A file without a write
    bit, or one this user may not write, was made so on purpose; a folder the file cannot be created
    or replaced in (a write goes through a temporary file beside it) would fail half way."""
    real = _real(path)
    try:
        mode = real.stat().st_mode
    except FileNotFoundError:
        folder = real.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"{folder}: is not writable, so Stele cannot create {path} in it"
        return None
    if not mode & 0o222 or not os.access(real, os.W_OK):
        return (f"{path}: is read-only (mode {stat.S_IMODE(mode):03o}), and Stele does not change a file you made "
                f"read-only: make it writable (`chmod u+w {real}`) and run again, or make the change by hand "
                "(`--dry-run` shows it)")
    if not os.access(real.parent, os.W_OK | os.X_OK):
        return f"{real.parent}: is not writable, so Stele cannot replace {path} in it"
    return None


def refuse_unwritable(path: Path) -> None:
    why = unwritable(path)
    if why:
        raise SteleError(why)


def preflight(changes: list[Change]) -> None:
    """Refuse before anything is written when any of the changes a dry run found could not be made."""
    for change in changes:
        if change.action != "unchanged":
            refuse_unwritable(change.path)


def _text(path: Path, data: bytes | None) -> tuple[str | None, textform.Form]:
    if data is None:
        return None, textform.PLAIN
    try:
        return textform.decode(data)
    except UnicodeDecodeError as e:
        raise SteleError(f"{path}: cannot be read as text ({e}); make the change by hand") from None


def _decoded(data: bytes | None) -> str | None:
    """The ledger's copy of a file as text (None when there is none, or it is not text)."""
    try:
        return None if data is None else textform.decode(data)[0]
    except UnicodeDecodeError:
        return None


def _joined(*parts: str | None) -> str:
    return "; ".join(p for p in parts if p)


def install_file(scope: Scope, path: Path, edit: Edit, dry_run: bool, note: str = "") -> Change:
    with _locked(scope, dry_run):
        real = _real(path)
        raw, mode = read_regular(real, path)
        old, form = _text(path, raw)
        new = _checked(path, edit.apply, old)
        if new == old:
            return Change(path, "unchanged")
        action = "created" if old is None else "updated"
        if dry_run:
            return Change(path, action, _joined(note, unwritable(path) and "not writable: a real run refuses it"),
                          diff(path, old, new))
        refuse_unwritable(path)
        data = textform.encode(new, form)
        dirs = _missing_dirs(real, scope.root) if real == path else []
        # an existing file keeps its mode; a new one gets the edit's (a hook script is executable)
        atomic.write(real, data, mode=getattr(edit, "mode", None) if raw is None else None)

        def baseline(created: bool, before: bytes | None) -> bytes | None:
            assert old is not None
            text = _checked(path, edit.remove, old, created, _decoded(before))
            return None if text is None else textform.encode(text, form)

        Ledger(scope).record(path, raw, data, mode, dirs, baseline)
    return Change(path, action, note)


def uninstall_file(scope: Scope, path: Path, edit: Edit, dry_run: bool) -> Change:
    with _locked(scope, dry_run):
        ledger = Ledger(scope)
        key = ledger.key(path)
        entry = ledger.entries.get(key)
        real = _real(path)
        raw, _ = read_regular(real, path)
        if raw is None:
            if entry and not dry_run:
                ledger.prune(ledger.forget(path))
                ledger.save()
            return Change(path, "unchanged", "not there")
        current, form = _text(path, raw)
        assert current is not None
        created = entry is not None and not entry.get("existed")
        if entry is not None and digest(raw) == entry.get("written"):
            data, action, detail = ledger.original(key), "restored", "as it was before Stele"
            mode = entry.get("mode")
        else:
            text = _checked(path, edit.remove, current, created, _decoded(ledger.original(key)))
            data = None if text is None else textform.encode(text, form)
            action, detail, mode = "updated", "Stele's entries taken out", None
        if data == raw:
            return Change(path, "unchanged", "no Stele entries")
        if data is None:
            action, detail = "removed", ""
        if dry_run:
            return Change(path, action, _joined(detail, unwritable(path) and "not writable: a real run refuses it"),
                          diff(path, current, None if data is None else _text(path, data)[0]))
        refuse_unwritable(path)
        if data is None:
            real.unlink()
        else:
            atomic.write(real, data, mode=mode if isinstance(mode, int) else None)
        dirs = ledger.forget(path)
        ledger.prune(dirs if data is None else [])
        ledger.save()
    return Change(path, action, detail)


# Edits shared by several targets.

@dataclass
class WholeFile:
    """A file that is all Stele's (a subagent, a skill, a rule)."""
    text: str

    def apply(self, old: str | None) -> str:
        return self.text

    def remove(self, text: str, created: bool, before: str | None = None) -> str | None:
        return None if text == self.text else text  # changed by someone: theirs now


BEGIN = "<!-- stele:begin (managed by `stele install`; `stele uninstall` removes this block) -->"
END = "<!-- stele:end -->"


@dataclass
class TextBlock:
    """A marked block inside a Markdown file someone else owns (AGENTS.md, copilot-instructions.md)."""
    body: str

    @property
    def block(self) -> str:
        return f"{BEGIN}\n{self.body.strip()}\n{END}\n"

    @staticmethod
    def _span(text: str) -> tuple[int, int] | None:
        start = text.find("<!-- stele:begin")
        end = text.find(END, start)
        if start < 0 or end < 0:
            return None
        end += len(END)
        return start, end + 1 if text[end:end + 1] == "\n" else end

    def apply(self, old: str | None) -> str:
        if not old:
            return self.block
        span = self._span(old)
        if span:
            return old[: span[0]] + self.block + old[span[1]:]
        return old + ("\n" if old.endswith("\n") else "\n\n") + self.block

    def remove(self, text: str, created: bool, before: str | None = None) -> str | None:
        span = self._span(text)
        if not span:
            return text
        before, after = text[: span[0]], text[span[1]:]
        if before.endswith("\n\n") and (not after or after.startswith("\n")):
            before = before[:-1]  # the blank line install put before the block
        rest = before + after
        return None if created and not rest.strip() else rest



@dataclass
class FileTarget:
    """A harness target: a name, how to detect it, and the files it changes per scope."""
    name: str
    summary: str
    markers: tuple[str, ...]  # repo paths whose presence says the harness is in use
    plan: Callable[[Scope], Plan]
    scopes: tuple[str, ...] = ("project", "user")

    def detect(self, project: Project) -> bool:
        return any((project.root / m).exists() for m in self.markers)

    def _scope(self, project: Project, scope: str) -> Scope:
        if scope not in self.scopes:
            raise UsageError(f"--scope {scope}: {self.name} supports " + " and ".join(self.scopes))
        return Scope(scope, project.root if scope == "project" else Path.home())

    def install(self, project: Project, *, dry_run: bool = False, scope: str = "project") -> list[Change]:
        where = self._scope(project, scope)
        if not dry_run:  # all of its files, or none
            preflight([install_file(where, path, edit, True, note) for path, edit, note in self.plan(where)])
        return [install_file(where, path, edit, dry_run, note) for path, edit, note in self.plan(where)]

    def uninstall(self, project: Project, *, dry_run: bool = False, scope: str = "project") -> list[Change]:
        where = self._scope(project, scope)
        if not dry_run:
            preflight([uninstall_file(where, path, edit, True) for path, edit, _ in reversed(self.plan(where))])
        return [uninstall_file(where, path, edit, dry_run) for path, edit, _ in reversed(self.plan(where))]
