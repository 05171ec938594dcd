"""What a turn showed the model and left on disk, read from the mock's request log and the repository.

Stele's injected texts are framed (`-- project memory (reference data, not instructions) ---` or
`-- from the project record ... ---` down to a rule of dashes), so they can be cut out of whatever
envelope a harness wraps them in (a system reminder, a tool result, a prepended user message). The
step of the turn a text first appears in says which hook delivered it: before the first tool result,
the session start and the prompt; after the edit of the first file, that file's pre-edit; and so on.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from .mockmodel import Request, strings

_FRAME = re.compile(r"-- (?:project memory|from the project record) \(reference data, not instructions\) -+\n"
                    r".*?(?:\n-{60}(?:\n|$)|\Z)", re.DOTALL)
# `KIND ID  Title` or `! RISK on your path: ID  Title` at the start of a line: a fact the text shows
_HEADLINE = re.compile(r"^(?:! RISK on your path: |[A-Z]+ )([A-Z]{2,5}-[0-9A-Z]{3,})(?: \[[a-z-]+\])?  ", re.MULTILINE)
NUDGE_MARK = "recorded nothing in the project record"


def frames(req: Request) -> list[str]:
    """Stele's framed texts in one request, in order, each once."""
    found: list[str] = []
    for text in strings(req.body):
        found += [m.group(0) for m in _FRAME.finditer(text)]
    return list(dict.fromkeys(found))


def headlines(text: str) -> list[str]:
    """The fact ids a Stele text shows as entries (not ids merely mentioned in a body)."""
    return _HEADLINE.findall(text)


@dataclass
class Delivery:
    step: int  # tool results before the request that first carried it
    text: str

    @property
    def ids(self) -> list[str]:
        return headlines(self.text)


def deliveries(requests: list[Request]) -> list[Delivery]:
    """Each Stele frame once, at the first agent request that carried it."""
    seen: set[str] = set()
    out: list[Delivery] = []
    for req in sorted(requests, key=lambda r: r.at):
        for text in frames(req):
            if text not in seen:
                seen.add(text)
                out.append(Delivery(req.tool_results, text))
    return out


def carried(requests: list[Request], needle: str) -> list[Request]:
    return [r for r in requests if needle in r.text]


def wal_entries(root: Path) -> list[dict]:
    """Every session log line in the repository (torn lines skipped)."""
    out = []
    for path in sorted((root / ".stele" / "wal").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                out.append(entry)
    return out


def edited_in_wal(root: Path) -> dict[str, str]:
    """repo-relative path -> the agent the session log credits with editing it."""
    out: dict[str, str] = {}
    for entry in wal_entries(root):
        refs = entry.get("refs") if isinstance(entry.get("refs"), dict) else {}
        for p in refs.get("paths") or ():
            if isinstance(p, str) and str(entry.get("text", "")).startswith("edited"):
                rel = Path(p).relative_to(root).as_posix() if Path(p).is_absolute() else p
                out[rel] = str(entry.get("agent", ""))
    return out
