"""Filters a recall applies before ranking: the HTTP API's `retrieve?issue=&pr=&path=&fts=` and the MCP
`recall` tool's arguments of the same names, one home for both.

They choose the candidates (`recall(only=...)`) instead of trimming the ranked window: with 31 notes
on one topic, the one tagged `issue=101` would otherwise be ranked out before the filter saw it. They
are applied once more to what the walk added, so every entry of the answer passes them.

- `issue`, `pr`, `path` keep only the session entries whose refs match (`session list`'s own
  `Filters.matches`); committed facts stay, since they are not tied to an issue. `path` is also a
  file being edited: its anchored facts become seeds.
- `fts` keeps only results holding every one of its words as a whole token of the id, title or text
  (case-insensitive): `fts=4F` does not match inside DEC-4F7K, nor `BEFO` inside "before".

The session log is read once per call (bounded by the log, as `session list` is), not per candidate.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..errors import UsageError
from ..plain import dataclass
from ..project import Project
from .recall import Recall, recall

_TOKEN = re.compile(r"\w+")
MAX_FTS = 2048


def tokens(text: str) -> set[str]:
    """The whole tokens `fts` compares, lower case."""
    return set(_TOKEN.findall(text.lower()))


@dataclass
class RecallFilters:
    issue: str | None = None
    pr: str | None = None
    path: str | None = None
    fts: str | None = None

    def __post_init__(self) -> None:
        for name in ("issue", "pr", "path", "fts"):  # blank means not given
            value = getattr(self, name)
            setattr(self, name, value.strip() or None if isinstance(value, str) else value)
        if self.fts is not None:
            if len(self.fts) > MAX_FTS:
                raise UsageError(f"fts is {len(self.fts)} characters; it holds at most {MAX_FTS}")
            if not self.words:
                raise UsageError("fts holds no word: give the words every result must contain, or leave it out")

    @property
    def words(self) -> set[str]:
        return tokens(self.fts) if self.fts else set()

    @property
    def by_session(self) -> bool:
        return any(v is not None for v in (self.issue, self.pr, self.path))

    @property
    def active(self) -> bool:
        return self.by_session or bool(self.words)

    def _kept_sessions(self, project: Project) -> set[str] | None:
        """Ids of the session entries whose refs match, or None when no ref filter is set."""
        if not self.by_session:
            return None
        from ..session.sessions import Filters
        from ..session.wal import read_all

        chosen = Filters(issue=self.issue, pr=self.pr, path=self.path)
        return {e.id for e in read_all(project) if chosen.matches(e)}

    def run(self, project: Project, prompt: str, files: Sequence[str] = (), gate: bool = True,
            as_of: Any = None) -> Recall:
        """`recall` with these filters choosing its candidates, then holding for every entry."""
        files = [*files, *([self.path] if self.path and self.path not in files else [])]
        if not self.active:
            return recall(project, prompt, files, gate=gate, as_of=as_of)
        keep = self._kept_sessions(project)
        words = self.words

        def passes(source: str, entry_id: str, text: str) -> bool:
            if keep is not None and source == "session" and entry_id not in keep:
                return False
            return not words or words <= tokens(text)

        def only(node: Any) -> bool:
            return passes(node.source, node.id, f"{node.id} {node.title} {node.excerpt}")

        result = recall(project, prompt, files, gate=gate, only=only, as_of=as_of)
        result.entries = [e for e in result.entries
                          if passes(e.source, e.id, f"{e.id} {e.title} {e.body or e.excerpt}")]
        return result
