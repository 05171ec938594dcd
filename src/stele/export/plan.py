"""What the exported rule files should be, what they are, and making them so.

`plan` computes, for the chosen harnesses, the bytes every file Stele manages should hold (None: it
should not exist) next to the bytes it holds now. Writing (`apply`), checking (`stele doctor`,
`stele export rules --check`) and the pre-commit sync all read this one plan, so "out of date" means
the same thing everywhere. Output is byte-stable: groups, facts and patterns are sorted, nothing
carries a time, so an unchanged record gives unchanged files and a second export writes nothing.

Which files are Stele's is read from the files, never from local state, so a fresh clone and CI see
what the author's machine saw: a `stele-*` file in a harness's rule folder whose text carries the
generated marker (`formats.MARK`), and an `AGENTS.md` holding the marked block. A file without the
marker is the user's and is never written, removed or renamed over, even when its name is one Stele
would use (that group is then not exported for that harness, and said). A generated file whose group
no longer qualifies is removed; an AGENTS.md block with no fact left is taken out (`agents.remove`).

What is read or written here is a regular file inside the repository (`treefile`): a pull request can
commit `src/AGENTS.md` or `.claude` as a symbolic link, and followed, a link to `~/.aws/credentials`
would copy that file into the block's file (staged by the pre-commit sync), a link to /dev/zero would
read until memory ran out, and a folder linked out would receive the files. Such a path is left
alone and said.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .. import atomic, gitrepo, textform, treefile
from ..anchors.paths import is_glob, literal_dir
from ..delivery import anchored_order
from ..errors import UsageError
from ..project import Project
from ..record.model import Fact
from . import agents
from .formats import HARNESSES, MARK, Clean, Harness, cleaner, pattern, rule_file
from .select import Group, groups

IsDir = Callable[[str], bool]

HEAD_BYTES = 4096  # the marker sits right after the frontmatter


@dataclass(frozen=True)
class FileState:
    rel: str
    harness: str
    want: bytes | None  # None: should not exist
    have: bytes | None  # None: does not exist
    facts: tuple[str, ...] = ()

    @property
    def stale(self) -> bool:
        return self.want != self.have

    @property
    def action(self) -> str:
        if not self.stale:
            return "unchanged"
        if self.have is None:
            return "created"
        return "removed" if self.want is None else "updated"


@dataclass
class Plan:
    files: list[FileState] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what did not fit, was left out, or left alone

    def stale(self) -> list[FileState]:
        return [f for f in self.files if f.stale]


def choose(names: list[str] | None) -> list[str]:
    """The harnesses named (all four when none), checked, in the documented order."""
    if not names:
        return list(HARNESSES)
    unknown = [n for n in names if n not in HARNESSES]
    if unknown:
        raise UsageError(f"--harness {unknown[0]}: use one of {', '.join(HARNESSES)}")
    return [n for n in HARNESSES if n in names]


def file_name(harness: Harness, paths: tuple[str, ...]) -> str:
    """`stele-<first path as a slug>-<6 hex of all paths><suffix>`: readable, and unique per path set."""
    slug = re.sub(r"[^a-z0-9_]+", "-", paths[0].lower()).strip("-")[:48].strip("-") or "root"
    digest = hashlib.sha256("\n".join(paths).encode("utf-8")).hexdigest()[:6]
    return f"stele-{slug}-{digest}{harness.suffix}"


class Refused(OSError):
    """A path of the export that is not a regular file (or folder) inside the repository."""


def _generated(root: Path, harness: Harness) -> dict[str, bytes]:
    folder = root / harness.folder
    if not folder.is_dir() or not treefile.inside(folder, root):
        return {}
    found = {}
    for path in sorted(folder.glob(f"stele-*{harness.suffix}")):
        if path.is_file() and not path.is_symlink():
            data = _found(root, path.relative_to(root).as_posix())
            if data is not None and MARK.encode() in data[:HEAD_BYTES]:
                found[path.relative_to(root).as_posix()] = data
    return found


def _agents_files(root: Path, listing: list[str] | None = None) -> dict[str, bytes]:
    """Every AGENTS.md in the working tree (tracked or not ignored) that holds a generated block."""
    found = {}
    for rel in gitrepo.ls_files(root) if listing is None else listing:
        if PurePosixPath(rel).name != agents.NAME or (data := _found(root, rel)) is None:
            continue
        if any(agents.BEGIN.encode(codec) in data for codec in ("utf-8", "utf-16-le", "utf-16-be")):
            found[rel] = data
    return found


def exported(project: Project) -> list[str]:
    """The harnesses this repository exports to: those with a generated file here now."""
    root = project.root
    return [name for name, h in HARNESSES.items()
            if (_agents_files(root) if name == "agents" else _generated(root, h))]


def _read(root: Path, rel: str) -> bytes | None:
    """The bytes of `rel`, None when there is nothing there; Refused when it is not a regular file
    inside the repository (a link out of it, a device, a FIFO, a folder)."""
    path = root / rel
    if not path.exists() and not path.is_symlink():
        return None
    try:
        return treefile.read_bytes(path, root=root)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Refused(str(e)) from None


def _found(root: Path, rel: str) -> bytes | None:
    """`_read`, with what it refuses counted as nothing there (a generated file is only looked for)."""
    try:
        return _read(root, rel)
    except Refused:
        return None


def plan(project: Project, facts: list[Fact], harnesses: list[str], on: dt.date) -> Plan:
    root = project.root
    grouped, left = groups(facts, on)
    out = Plan(notes=[f"{x.fact}: {x.why}" for x in left])

    safe = cleaner(project.config["redaction.patterns"])

    def is_dir(path: str) -> bool:
        return not is_glob(path) and (root / path).is_dir()

    for name in harnesses:
        harness = HARNESSES[name]
        if name == "agents":
            _plan_agents(root, harness, grouped, is_dir, safe, out)
        else:
            _plan_rules(root, harness, grouped, is_dir, safe, out)
    return out


def _plan_rules(root: Path, harness: Harness, grouped: list[Group], is_dir: IsDir, safe: Clean,
                out: Plan) -> None:
    folder = root / harness.folder
    if not treefile.inside(folder, root):  # also where it is yet to be made: a link on the way counts
        out.notes.append(f"{harness.folder} leads out of the repository: {harness.name} not exported")
        return
    old = _generated(root, harness)
    wanted: dict[str, FileState] = {}
    for group in grouped:
        patterns = []
        for p in group.paths:
            pat = pattern(harness, p, is_dir(p))
            if pat is None:
                out.notes.append(f"{harness.name}: `{harness.key}:` cannot hold {safe(p)!r} (a comma, a control or "
                                 "hidden character): that path is left out")
            else:
                patterns.append(pat)
        if not patterns:
            continue
        rel = f"{harness.folder}/{file_name(harness, group.paths)}"
        if rel not in old and (root / rel).exists():
            out.notes.append(f"{rel} exists and was not generated by Stele: left alone (facts "
                             f"{', '.join(f.id for f in group.facts)} not exported to {harness.name})")
            continue
        text, kept, left = rule_file(harness, group.paths, patterns, group.facts, safe)
        if left:
            out.notes.append(f"{rel}: did not fit in {harness.limit:,} {harness.unit}: {', '.join(left)}")
        if kept:
            wanted[rel] = FileState(rel, harness.name, text.encode("utf-8"), old.get(rel),
                                    tuple(f.id for f in kept))
    for rel, data in old.items():
        if rel not in wanted:
            wanted[rel] = FileState(rel, harness.name, None, data)
    out.files += [wanted[rel] for rel in sorted(wanted)]


def folder_of(path: str, is_dir: IsDir) -> str:
    """The folder whose AGENTS.md carries a fact anchored to `path` (a glob: the folder it cannot leave)."""
    if is_glob(path):
        return literal_dir(path)
    if is_dir(path):
        return path
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _plan_agents(root: Path, harness: Harness, grouped: list[Group], is_dir: IsDir, safe: Clean,
                 out: Plan) -> None:
    listing = gitrepo.ls_files(root)
    old = _agents_files(root, listing)
    # only folders git sees (tracked or not ignored): a block written where git does not look could
    # never be found again to be kept up to date or taken out
    folders = {rel.rsplit("/", 1)[0] if "/" in rel else "" for rel in listing}
    folders |= {f.rsplit("/", i)[0] for f in list(folders) for i in range(1, f.count("/") + 1)} | {""}
    by_folder: dict[str, dict[str, Fact]] = {}
    for group in grouped:
        for p in group.paths:
            folder = folder_of(p, is_dir)
            for fact in group.facts:
                by_folder.setdefault(folder, {})[fact.id] = fact
    wanted: dict[str, FileState] = {}
    for folder in sorted(by_folder):
        if folder not in folders:
            continue  # not there (doctor reports the anchor), or ignored by git
        rel = f"{folder}/{agents.NAME}" if folder else agents.NAME
        facts = sorted(by_folder[folder].values(), key=anchored_order)
        text, kept, left = agents.block(harness, facts, safe)
        if left:
            out.notes.append(f"{rel}: did not fit in {harness.limit:,} {harness.unit}: {', '.join(left)}")
        try:
            have = _read(root, rel)
        except Refused:
            out.notes.append(f"{rel} is not a regular file in the repository: left alone")
            continue
        try:
            current, form = textform.decode(have) if have is not None else (None, textform.PLAIN)
        except UnicodeDecodeError:
            out.notes.append(f"{rel} cannot be read as text: left alone")
            continue
        # without the old block first: a file that was the block alone is the block alone again
        base = agents.remove(current) if current is not None else None
        new = agents.insert(base, text) if kept else base
        want = None if new is None else textform.encode(new, form)
        wanted[rel] = FileState(rel, harness.name, want, have, tuple(f.id for f in kept))
    for rel, data in old.items():
        if rel not in wanted:
            current, form = textform.decode(data)
            rest = agents.remove(current)
            wanted[rel] = FileState(rel, harness.name, None if rest is None else textform.encode(rest, form), data)
    out.files += [wanted[rel] for rel in sorted(wanted)]


def apply(project: Project, the_plan: Plan, *, stage: bool = False) -> list[FileState]:
    """Write what is out of date (atomically), remove what should not exist; with `stage`, `git add`
    the changed files (a removed one only when git tracks it). Returns the files changed."""
    root = project.root
    changed = the_plan.stale()
    for f in changed:
        path = root / f.rel
        if f.want is None:
            path.unlink(missing_ok=True)
        else:
            atomic.write(path, f.want)
    if stage and changed:
        gitrepo.stage(root, [f.rel for f in changed if f.want is not None or gitrepo.is_tracked(root, root / f.rel)])
    return changed
