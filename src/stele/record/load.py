"""The committed record: every fact file under the memory folder, loaded and cross-checked.

A file is a fact when it starts with a `---` frontmatter that has an `id` or a `kind`; anything else
(`README.md`, notes without frontmatter) is left alone. Problems are collected, never raised while
loading, so `doctor` can report all of them; read commands call `require_valid()`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import RecordError, SteleError
from ..project import Project
from .graph import Graph
from .model import Fact, Problem, parse_fact


@dataclass
class Record:
    project: Project
    facts: dict[str, Fact] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def require_valid(self) -> "Record":
        if self.errors:
            raise RecordError(self.errors)
        return self

    def get(self, fact_id: str) -> Fact:
        fact = self.facts.get(fact_id) or self.facts.get(fact_id.upper())
        if fact is None:
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


def fact_files(memory_dir: Path) -> Iterator[Path]:
    """Every candidate fact file, in a stable order."""
    if not memory_dir.is_dir():
        return
    for path in sorted(memory_dir.rglob("*.md")):
        if _is_candidate(path.relative_to(memory_dir).as_posix()) and path.is_file():
            yield path


def looks_like_fact(text: str) -> bool:
    if not text.startswith(("---\n", "---\r\n", "\ufeff---")):
        return False
    head = text[: text.find("\n---", 3) + 1 if "\n---" in text[3:] else len(text)]
    return any(line.startswith(("id:", "kind:")) for line in head.splitlines())


def load(project: Project) -> Record:
    def texts() -> Iterator[tuple[str, str | None, str]]:
        for path in fact_files(project.memory_dir):
            if not project.contains(path):
                yield project.rel(path), None, OUTSIDE
                continue
            try:
                yield project.rel(path), path.read_text(encoding="utf-8"), ""
            except (OSError, UnicodeDecodeError) as e:
                yield project.rel(path), None, str(e)
    return from_texts(project, texts())


def load_at(project: Project, rev: str) -> Record:
    """The record as committed at `rev` (same rules as `load`, read through one `git cat-file`)."""
    from .. import gitrepo

    prefix = project.rel(project.memory_dir).rstrip("/") + "/"
    paths = [p for p in gitrepo.ls_files(project.root, rev)
             if p.startswith(prefix) and _is_candidate(p[len(prefix):])]
    blobs = gitrepo.read_blobs(project.root, [f"{rev}:{p}" for p in paths])

    def texts() -> Iterator[tuple[str, str | None, str]]:
        for p in paths:
            try:
                yield p, (blobs.get(f"{rev}:{p}") or b"").decode("utf-8"), ""
            except UnicodeDecodeError as e:
                yield p, None, str(e)
    return from_texts(project, texts())


def from_texts(project: Project, texts: Iterable[tuple[str, str | None, str]]) -> Record:
    """Build a record from (rel path, text or None, read error) triples."""
    record = Record(project)
    paths: dict[str, str] = {}
    for rel, text, error in texts:
        if text is None:
            record.problems.append(Problem(rel, 1, f"cannot read the file ({error}); save it as UTF-8 text"))
            continue
        if not looks_like_fact(text):
            continue
        fact, problems = parse_fact(text, rel)
        record.problems.extend(problems)
        if fact is None:
            continue
        if fact.id in record.facts:
            record.problems.append(Problem(rel, fact.doc.line_of("id") if fact.doc else 1,
                                           f"duplicate id {fact.id}: also used by {paths[fact.id]}; give one of "
                                           "them a new id (`stele doctor --fix` cannot choose for you)",
                                           check="duplicate-id"))
            continue
        record.facts[fact.id] = fact
        paths[fact.id] = rel
    for fact in record.facts.values():
        for rel_name, target in fact.targets():
            if target not in record.facts and not target.startswith("S-"):
                line = fact.doc.line_of("links", rel_name, fact.links[rel_name].index(target)) if fact.doc else 1
                record.problems.append(Problem(fact.path, line, f"dangling link {rel_name} -> {target}: no fact has "
                                               "that id; fix the id or remove the link",
                                               check="dangling-link"))
    return record
