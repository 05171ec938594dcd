"""The committed record: every fact file under the memory folder, loaded and cross-checked.

Every Markdown file under the memory folder that starts with `---` is read as a fact, and one that
cannot be (bad YAML, a frontmatter without `id` or `kind`) is reported, never ignored without a word;
files without frontmatter (`README.md`, notes) are left alone. Problems are collected, never raised
while loading, so `doctor` can report all of them and fail on them. Every other reader works from
`usable()`: one bad file (a typo, a link to a fact on an unmerged branch) must not stop every agent's
recall and claims, so it is set aside with one warning line naming the file and the field, and the
rest of the record is read as usual.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .. import errors
from ..errors import RecordError, SteleError
from ..project import Project
from . import frontmatter
from .graph import Graph
from .model import Fact, Problem, from_document, parse_fact

WARN_FILES = 5  # warning lines at most per command; the rest are counted, `stele doctor` lists them all


@dataclass(frozen=True)
class FactFile:
    """A candidate fact file as it was read for the record: `raw` is its text exactly as stored (the
    untrusted-input checks must see a lone carriage return), None when it was not read (`error` says
    why). `doctor`'s checks scan these instead of walking and reading the folder again."""
    rel: str
    raw: str | None
    error: str = ""

    @property
    def text(self) -> str | None:
        """The text as `Path.read_text` gives it (universal newlines): what the record is parsed from."""
        return None if self.raw is None else self.raw.replace("\r\n", "\n").replace("\r", "\n")


@dataclass
class Record:
    project: Project
    facts: dict[str, Fact] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    files: list[FactFile] | None = None  # what `load` read; see `working_files`

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    skipped: dict[str, Problem] = field(default_factory=dict)  # id -> why `usable()` set its file aside

    def working_files(self) -> list[FactFile]:
        """The candidate files of the working tree: those `load` read, else read now (a record from
        `load_at` or built in memory)."""
        if self.files is None:
            self.files = read_files(self.project)
        return self.files

    def require_valid(self) -> Record:
        """For a caller that must not act on a flawed record at all (`doctor` reports instead)."""
        if self.errors:
            raise RecordError(self.errors)
        return self

    def usable(self, warn: Callable[[str], None] | None = None) -> Record:
        """The record a reader works from: each file with an error is set aside (a dangling link is
        dropped from its fact instead: the fact itself is sound), with one warning line per file."""
        say = warn or (lambda line: errors.say(f"stele: warning: {line}"))
        by_file: dict[str, list[Problem]] = {}
        for problem in self.errors:
            by_file.setdefault(problem.path, []).append(problem)
        by_path = {f.path: f for f in self.facts.values()}
        for n, (path, problems) in enumerate(sorted(by_file.items())):
            fact = by_path.get(path)
            whole = [p for p in problems if p.check != "dangling-link"]
            if fact is not None and whole:
                self.skipped[fact.id] = whole[0]
                del self.facts[fact.id]
            elif fact is not None:
                for rel, ids in list(fact.links.items()):
                    fact.links[rel] = [t for t in ids if t in self.facts or t.startswith("S-")]
                    if not fact.links[rel]:
                        del fact.links[rel]
            if n < WARN_FILES:
                more = f" (and {len(problems) - 1} more in the file)" if len(problems) > 1 else ""
                action = "skipped" if whole else "link ignored"
                say(f"{problems[0]}{more}; {action} (`stele doctor` lists every problem)")
        if len(by_file) > WARN_FILES:
            say(f"{len(by_file) - WARN_FILES} more files with problems; `stele doctor` lists them")
        self.__dict__.pop("graph", None)
        return self

    def get(self, fact_id: str) -> Fact:
        fact = self.facts.get(fact_id) or self.facts.get(fact_id.upper())
        if fact is None:
            why = self.skipped.get(fact_id) or self.skipped.get(fact_id.upper())
            if why is not None:
                raise SteleError(f"{fact_id.upper()} is set aside until its file is fixed: {why}")
            raise SteleError(f"no fact with id {fact_id} in {self.project.rel(self.project.memory_dir)}/: "
                             "`stele list` shows the ids")
        return fact

    @cached_property
    def graph(self) -> Graph:
        return Graph.from_facts(self.facts)


def _is_candidate(rel: str) -> bool:
    """Could the file at `rel` (posix, relative to the memory folder) be a fact? Markdown, not a README,
    nothing hidden on the way. The one rule for the working tree and for a commit."""
    parts = rel.split("/")
    return parts[-1].endswith(".md") and parts[-1].lower() != "readme.md" and not any(
        part.startswith(".") for part in parts)


OUTSIDE = ("a symbolic link to a file outside the repository: it is not read (a record holds only "
           "files inside it); remove the link or copy the file in")


def _candidates(memory_dir: Path) -> list[tuple[str, Path, bool]]:
    """(posix path relative to `memory_dir`, path, is a symbolic link) of every candidate fact file,
    sorted as paths sort (by their parts). One `scandir` per folder: `rglob`, `relative_to` and
    `is_file` per path cost a 10,000-fact record a second. Like `rglob`, it never descends into a
    linked folder; hidden folders are not entered, since nothing in them is a candidate."""
    found: list[tuple[tuple[str, ...], Path, bool]] = []

    def walk(folder: Path, parts: tuple[str, ...]) -> None:
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except (PermissionError, FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not name.startswith("."):
                        walk(folder / name, (*parts, name))
                    continue
                if not entry.is_file():
                    continue
            except OSError:
                continue
            if name.endswith(".md") and _is_candidate("/".join((*parts, name))):
                found.append(((*parts, name), folder / name, entry.is_symlink()))

    if memory_dir.is_dir():
        walk(memory_dir, ())
    found.sort(key=lambda t: t[0])
    return [("/".join(parts), path, link) for parts, path, link in found]


def has_frontmatter(text: str) -> bool:
    """Does the file claim to be a fact? Every file that starts with `---` does."""
    return text.removeprefix("\ufeff").startswith("---")


def read_files(project: Project) -> list[FactFile]:
    """Every candidate fact file, read once."""
    memory = project.memory_dir
    base = memory.relative_to(project.root).as_posix()
    files = []
    for sub, path, link in _candidates(memory):
        rel = sub if base == "." else f"{base}/{sub}"  # project.rel without a Path per file
        if link and not project.contains(path):
            files.append(FactFile(rel, None, OUTSIDE))
            continue
        try:
            files.append(FactFile(rel, path.read_bytes().decode("utf-8")))
        except (OSError, UnicodeDecodeError) as e:
            files.append(FactFile(rel, None, str(e)))
    return files


def load(project: Project) -> Record:
    """The record in the working tree, each file's frontmatter from the parse cache when its text was
    parsed before (`parsecache`)."""
    from .parsecache import ParseCache

    files = read_files(project)
    cache = ParseCache.open(project)
    record = from_texts(project, ((f.rel, f.text, f.error) for f in files),
                        cache.parse if cache is not None else frontmatter.parse)
    if cache is not None:
        cache.save()
    record.files = files
    return record


def find_one(project: Project, fact_id: str) -> Fact | None:
    """One fact by id without loading the record: the files named after it (`<ID>-<slug>.md`, in its
    kind's folder first), parsed and checked to carry that id. None when no such file holds it (a fact
    may live under any name: the caller then loads the record). A claim's loser pays this, not a load
    of 10k files. An id not shaped like one names no file: it is never made a glob pattern (`/etc/x`,
    `TASK-*`, 100 KB of it)."""
    from ..ids import is_fact_id
    from ..kinds import BY_PREFIX

    fact_id = fact_id.upper()
    if not is_fact_id(fact_id):
        return None
    kind = BY_PREFIX.get(fact_id.split("-", 1)[0])
    memory = project.memory_dir
    folders = [memory / kind.folder] if kind else []
    for found in (lambda: _named(folders, fact_id, False), lambda: _named([memory], fact_id, True)):
        for path in found():
            rel = project.rel(path)
            if not _is_candidate(path.relative_to(memory).as_posix()):
                continue
            try:
                fact, problems = parse_fact(path.read_text(encoding="utf-8"), rel)
            except (OSError, UnicodeDecodeError):
                continue
            if fact is not None and fact.id == fact_id and not any(p.severity == "error" for p in problems):
                return fact
    return None


def _named(folders: list[Path], fact_id: str, deep: bool) -> list[Path]:
    found: list[Path] = []
    for folder in folders:
        if folder.is_dir():
            for pattern in (f"{fact_id}-*.md", f"{fact_id}.md"):
                try:
                    found += sorted(folder.rglob(pattern) if deep else folder.glob(pattern))
                except OSError:  # a name too long for the file system: no file is named so
                    continue
    return found


def load_at(project: Project, rev: str) -> Record:
    """The record as committed at `rev` (same rules as `load`): one `git ls-tree` for the blob ids,
    one `git cat-file` for their contents."""
    from .. import gitrepo

    prefix = project.rel(project.memory_dir).rstrip("/") + "/"
    blobs = {p: sha for p, sha in gitrepo.tree_blobs(project.root, rev, prefix.rstrip("/")).items()
             if p.startswith(prefix) and _is_candidate(p[len(prefix):])}
    contents = gitrepo.read_blobs(project.root, list(blobs.values()))

    def texts() -> Iterator[tuple[str, str | None, str]]:
        for p, sha in sorted(blobs.items()):
            try:
                yield p, (contents.get(sha) or b"").decode("utf-8"), ""
            except UnicodeDecodeError as e:
                yield p, None, str(e)
    return from_texts(project, texts())


def from_texts(project: Project, texts: Iterable[tuple[str, str | None, str]],
               parse: Callable[[str], frontmatter.Document] = frontmatter.parse) -> Record:
    """Build a record from (rel path, text or None, read error) triples; `parse` is
    `frontmatter.parse` or a cache of it."""
    record = Record(project)
    paths: dict[str, str] = {}
    for rel, text, error in texts:
        if text is None:
            fix = "" if error == OUTSIDE else "; save it as UTF-8 text"  # OUTSIDE says what to do
            record.problems.append(Problem(rel, 1, f"cannot read the file ({error}){fix}"))
            continue
        if not has_frontmatter(text):
            continue
        try:
            doc = parse(text)
        except frontmatter.FrontmatterError as e:
            record.problems.append(Problem(rel, e.line, e.message))
            continue
        if "id" not in doc.meta and "kind" not in doc.meta:
            record.problems.append(Problem(rel, 1, "starts with `---` but its frontmatter has no `id` or "
                                           "`kind`: make it a fact (`stele new KIND` shows the fields) or "
                                           "drop the frontmatter, or move the file out of the memory folder"))
            continue
        fact, problems = from_document(doc, rel)
        record.problems.extend(problems)
        if fact is None:
            continue
        if fact.id in record.facts:
            record.problems.append(Problem(rel, fact.doc.line_of("id") if fact.doc else 1,
                                           f"duplicate id {fact.id}: also used by {paths[fact.id]}; give one "
                                           "of them a new id (`stele doctor --fix` cannot choose for you)",
                                           check="duplicate-id"))
            continue
        record.facts[fact.id] = fact
        paths[fact.id] = rel
    for fact in record.facts.values():
        for rel_name, target in fact.targets():
            if target not in record.facts and not target.startswith("S-"):
                at = fact.links[rel_name].index(target)
                line = fact.doc.line_of("links", rel_name, at) if fact.doc else 1
                record.problems.append(Problem(
                    fact.path, line, f"dangling link {rel_name} -> {target}: no fact has that id; fix the id "
                    "or remove the link", check="dangling-link"))
    return record
