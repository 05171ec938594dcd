"""Writing facts: file names, the record's write lock, and the one path every write goes through.

Why it is shaped this way:
- A write either lands whole or not at all (temp file, fsync, rename), so a crash or a Ctrl-C never
  leaves a half-written fact. The temporary file is written under the git dir
  (`.git/stele/tmp/`), not beside the fact: `git add docs/memory` must never stage one a killed
  writer left behind. The next write clears what a killed writer left there.
- Every read-modify-write of the record (edit, link, supersede, remember's id and duplicate checks)
  holds one exclusive `flock` (`changing()`), so sixteen concurrent `stele edit --add-tag` all land
  instead of each overwriting the others' change. The lock lives under the git dir too: it is
  per-worktree like `docs/memory/` itself, needs no `stele init`, and a killed holder drops it (a
  `flock` dies with its descriptor). It is reentrant within a process.
- A change of several files (`supersede`) is journaled first (`.git/stele/pending.json`: every
  file's new text and a hash of the text it replaces), then written file by file, then the journal
  is removed. A kill in between is finished by the next write under the lock, so the record never
  stays half superseded; a file changed by hand meanwhile is left alone and named.
- Every write is redacted and validated first, here, whichever command, hook or editor produced it:
  no secret reaches docs/memory/, and a fact that would not load back is refused before anything
  touches the disk.
"""
from __future__ import annotations

import copy
import json
import os
import re
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from .. import atomic
from ..anchors.fingerprint import LENGTH
from ..errors import SteleError, say
from ..kinds import KINDS
from ..project import Project, check_inside
from ..redact import Redactor, Tally
from .model import Fact, parse_fact

SLUG_MAX = 48
LOCK_WAIT_S = 60.0  # a write holds the lock for well under a second; past this something is stuck
_local = threading.local()  # .held: lock path -> depth, per thread (the servers write from threads)


def slugify(title: str) -> str:
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", text)
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > SLUG_MAX:
            break
        slug = candidate
    return slug or (words[0][:SLUG_MAX] if words else "fact")


def pinned(project: Project, fact: Fact, repin: bool) -> dict[str, str]:
    """The fingerprints `fact` should carry: one per anchor that has one or resolves now (an anchor that
    does not resolve keeps the fingerprint it had: that is what finds it again), none for an anchor it
    no longer has."""
    from ..anchors.fingerprint import of_anchor

    def read(path: str) -> str | None:
        file = project.root / path
        if not project.contains(file):  # a link out of the repository is not the repository's code
            return None
        try:
            return file.read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):
            return None

    prints: dict[str, str] = {}
    for anchor in fact.anchors:
        old = fact.fingerprints.get(anchor)
        new = of_anchor(anchor, read) if repin or old is None else None
        if new or old:
            prints[anchor] = new or old or ""
    return prints


def new_fact_path(project: Project, fact: Fact) -> Path:
    return project.memory_dir / KINDS[fact.kind].folder / f"{fact.id}-{slugify(fact.title)}.md"


def retitled_path(fact: Fact) -> str | None:
    """Where `fact`'s file belongs after its title changed: the same folder, `<ID>-<slug of the title>.md`.
    None when it already fits, or when the file is not named the way Stele names facts (a hand-named
    file keeps the name someone chose)."""
    if not fact.path:
        return None
    old = PurePosixPath(fact.path)
    if not (old.name.startswith(f"{fact.id}-") or old.name == f"{fact.id}.md"):
        return None
    new = str(old.with_name(f"{fact.id}-{slugify(fact.title)}.md"))
    return None if new == fact.path else new


def move(project: Project, fact: Fact, rel: str) -> None:
    """Rename `fact`'s file to `rel` (with `git mv` when git tracks it, so history follows the file);
    links name ids, never paths, so nothing else changes."""
    from .. import gitrepo

    with changing(project):
        old, new = project.root / str(fact.path), project.root / rel
        check_inside(project, new)
        if new.exists():
            raise SteleError(f"cannot rename {fact.path} to {rel}: that file exists; nothing was renamed")
        if gitrepo.is_tracked(project.root, old):
            gitrepo.run(project.root, "mv", "--", str(fact.path), rel)
        else:
            os.replace(old, new)
        atomic.fsync_dir(new.parent)
        fact.path = rel


def redact_fact(fact: Fact, redactor: Redactor, tally: Tally) -> None:
    """Redact every text field of `fact` in place. A tag, anchor, source or link target that holds a
    secret is dropped: a redacted identifier names nothing."""
    for name in ("title", "body", "summary", "retire_when", "needs_review"):
        value = getattr(fact, name)
        if value:
            setattr(fact, name, tally.add(redactor.redact(value)))

    def kept(items: list[str]) -> list[str]:
        out = []
        for item in items:
            r = redactor.redact(item)
            if r.secrets:
                tally.add(r)
            else:
                out.append(item)
        return out

    fact.anchors, fact.tags, fact.source = kept(fact.anchors), kept(fact.tags), kept(fact.source)
    fact.links = {rel: kept(targets) for rel, targets in fact.links.items()}


def state_dir(project: Project) -> Path:
    """Per-worktree write state of the record: its lock, temporary files and pending journal."""
    git_dir = project.git_dir
    return (git_dir if git_dir.is_dir() else project.stele_dir) / "stele"


def _tmp_dir(project: Project) -> Path:
    return state_dir(project) / "tmp"


def _journal(project: Project) -> Path:
    return state_dir(project) / "pending.json"


@contextmanager
def changing(project: Project) -> Iterator[None]:
    """Hold the record's write lock for a read-modify-write (reentrant). On taking it, clear the
    temporary files of killed writers and finish a journaled change a kill interrupted."""
    lock = state_dir(project) / "record.lock"
    key = str(lock)
    _held: dict[str, int] = _local.__dict__.setdefault("held", {})
    if _held.get(key):
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    try:
        cm = atomic.locked(lock, deadline=time.monotonic() + LOCK_WAIT_S)
        cm.__enter__()
    except atomic.LockTimeout:
        raise SteleError(f"another stele command has held the record's write lock ({lock}) for over "
                         f"{LOCK_WAIT_S:.0f} s; let it finish, or end it, and try again") from None
    _held[key] = 1
    try:
        _clear_temporaries(project)
        _finish_pending(project)
        yield
    finally:
        _held.pop(key, None)
        cm.__exit__(None, None, None)


def _clear_temporaries(project: Project) -> None:
    """Every fact write holds the lock, so under it any temporary file is a killed writer's."""
    folder = _tmp_dir(project)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        try:
            os.unlink(folder / name)
        except OSError:
            pass


def _finish_pending(project: Project) -> None:
    journal = _journal(project)
    try:
        pending = json.loads(journal.read_text(encoding="utf-8"))
        files = [(str(f["path"]), str(f["text"]), f.get("before")) for f in pending["files"]]
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):
        say(f"stele: {journal}: an unreadable journal of an interrupted change; removed (run `stele "
            "doctor` to check the record)")
        journal.unlink(missing_ok=True)
        return
    skipped = []
    for rel, text, before in files:
        path = project.root / rel
        now = atomic.read_text(path)
        if now == text:
            continue
        if atomic.text_digest(now) != before:
            skipped.append(rel)  # changed by hand since: theirs wins
            continue
        atomic.write(path, text, tmp_dir=_tmp_dir(project))
    journal.unlink(missing_ok=True)
    atomic.fsync_dir(journal.parent)
    note = f"; left alone, changed since: {', '.join(skipped)}" if skipped else ""
    say(f"stele: finished an interrupted change of {', '.join(r for r, _, _ in files)}{note}")


def _checked(project: Project, fact: Fact, extra: dict | None, tally: Tally,
             repin: bool = False) -> tuple[str, str, Fact | None]:
    """Redact `fact` (in place) and its `extra` keys, fingerprint its anchors, render, and prove the
    text loads back."""
    redactor = Redactor(project.config["redaction.patterns"])
    redact_fact(fact, redactor, tally)
    fact.fingerprints = pinned(project, fact, repin)
    text = fact.render(redactor.redact_data(extra, tally) if extra else extra)
    rel = fact.path or project.rel(new_fact_path(project, fact))
    # the net under the fields: a key the model does not know (typed in $EDITOR) is rendered as is
    rest = redactor.apply(text, [s for s in redactor.spans(text) if not in_fingerprints(text, s[0])])
    if rest.secrets:
        tally.add(rest)
        text = rest.text
    reparsed, problems = parse_fact(text, rel)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise SteleError("; ".join(str(p) for p in errors) + " (nothing was written)")
    check_inside(project, project.root / rel)
    return rel, text, reparsed


_FINGERPRINT_LINE = re.compile(rf"^  \S.*: [0-9a-f]{{{LENGTH}}}$")


def in_fingerprints(text: str, at: int) -> bool:
    """Is offset `at` inside a `fingerprints:` entry Stele wrote (an anchor, already redacted as an
    anchor, and a hash of the code)? The net's assignment rule reads `src/x.py::SLACK_URL: 3f09...` as
    a Slack credential, and its marker turned the value into a YAML list that no longer loads. The one
    rule for what is Stele's own bookkeeping: the write path's net and doctor's `secret` check both
    ask it (doctor once read `docs/fastly-cname-ttl.md: 29ca...` as a Fastly credential)."""
    block = text.find("\nfingerprints:\n")
    if block < 0 or at < block:
        return False
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start:end if end >= 0 else len(text)]
    between = text[block + len("\nfingerprints:\n"):start]
    return bool(_FINGERPRINT_LINE.match(line)) and all(
        _FINGERPRINT_LINE.match(x) for x in between.split("\n") if x)


def _landed(fact: Fact, rel: str, reparsed: Fact | None) -> None:
    fact.path = rel
    fact.doc = reparsed.doc if reparsed else None  # later renders diff against what is on disk now


def save(project: Project, fact: Fact, *, create: bool = False, extra: dict | None = None,
         tally: Tally | None = None, repin: bool = False) -> Path:
    """Redact, validate and write `fact`; returns its path. `create` refuses to overwrite an existing
    file; `extra` sets (None: removes) frontmatter keys the model does not know; `tally` collects what
    was redacted, for the caller to tell the writer. Every fact write comes through here, so no text
    reaches docs/memory/ unredacted, whichever command, hook or editor produced it.

    Every anchor that resolves and has no fingerprint yet gets one (`repin`: every anchor that resolves
    gets a fresh one, as `stele verify` asks), so a renamed or moved symbol can be found again by its
    content."""
    with changing(project):
        rel, text, reparsed = _checked(project, fact, extra, tally if tally is not None else Tally(), repin)
        path = project.root / rel
        if create and path.exists():
            raise SteleError(f"{rel} already exists; nothing was written")
        atomic.write(path, text, tmp_dir=_tmp_dir(project))
        _landed(fact, rel, reparsed)
        return path


def refusal(project: Project, fact: Fact) -> str | None:
    """Why `save` would refuse `fact` (one line), or None; checked on a copy, nothing is written. A
    writer of many facts (an import) asks first, so one fact it cannot write costs that fact, not all."""
    try:
        _checked(project, copy.deepcopy(fact), None, Tally())
    except SteleError as e:
        return str(e).removesuffix(" (nothing was written)")
    return None


def save_all(project: Project, changes: list[tuple[Fact, dict | None]], tally: Tally | None = None) -> None:
    """Write several facts as one change: all of them land, or a kill leaves a journal the next write
    finishes. Each is redacted and validated before anything is written."""
    tally = tally if tally is not None else Tally()
    with changing(project):
        checked = [(fact, *_checked(project, fact, extra, tally)) for fact, extra in changes]
        files = [{"path": rel, "text": text, "before": atomic.text_digest(atomic.read_text(project.root / rel))}
                 for _, rel, text, _ in checked]
        journal = _journal(project)
        atomic.write(journal, json.dumps({"v": 1, "files": files}), tmp_dir=_tmp_dir(project))
        for fact, rel, text, reparsed in checked:
            atomic.write(project.root / rel, text, tmp_dir=_tmp_dir(project))
            _landed(fact, rel, reparsed)
        journal.unlink()
        atomic.fsync_dir(journal.parent)


def pending(project: Project) -> list[str]:
    """Files of a journaled change a kill interrupted (finished by the next write; doctor names it)."""
    try:
        return [str(f["path"]) for f in json.loads(_journal(project).read_text(encoding="utf-8"))["files"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []
