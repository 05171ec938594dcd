"""What an importer reads out of one file, before it is a fact: a `Draft`.

Importers (`adr.py`, `guidance.py`, `memories.py`) turn files into drafts and know nothing of the
record; `apply.py` decides which drafts are new, gives them ids, links them and writes them. So a
format is added by writing one reader, and the rules of deduplication and provenance stay in one place.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Draft:
    path: str  # the file read, relative to the repository root (`~/...` for per-user harness memory)
    start: int  # its lines, 1-based, inclusive
    end: int
    kind: str
    title: str
    body: str
    status: str = ""  # "" = the kind's default
    delivery: str = ""
    created: str = ""  # the date the file gives (named in the body: `created` is the day of the import)
    anchors: list[str] = field(default_factory=list)  # kept as given (the file itself, frontmatter globs)
    named: list[str] = field(default_factory=list)  # paths and symbols the text names: anchors if they resolve
    tags: list[str] = field(default_factory=list)
    refs: list[tuple[str, str]] = field(default_factory=list)  # (relation, path of another file) declared here
    superseded_by: list[str] = field(default_factory=list)  # paths of the files that replace this one
    whole_file: bool = False  # one fact per file: an earlier import of the file is this draft
    notes: list[str] = field(default_factory=list)  # what the reader could not map, for the report

    def where(self) -> str:
        return f"{self.path}#L{self.start}-L{self.end}"
