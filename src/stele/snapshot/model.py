"""The data of a snapshot: its budgets, the items it delivers, what was left out, and the JSON shape.

Every item carries the exact text the agent receives for it, and its size is the UTF-8 length of that
text: budgets are measured on what is delivered, not on the source file. The JSON written for a run
embeds those texts, so a later edit of a rule cannot change what the run was told.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

SCHEMA_VERSION = 1
RECORD_PARTS = ("always", "named", "ranked")
PARTS = RECORD_PARTS + ("code", "briefing")


@dataclass(frozen=True)
class Budgets:
    """The `snapshot:` section of `.stele/config.yaml` (its template holds the defaults)."""
    records_bytes: int
    records_count: int
    records_count_max: int
    record_max_bytes: int
    code_bytes: int
    total_bytes: int
    briefing_items: int
    briefing_bytes: int

    @classmethod
    def from_config(cls, config: Any) -> Budgets:
        return cls(**{f.name: int(config[f"snapshot.{f.name}"]) for f in fields(cls)})


@dataclass
class Item:
    part: str  # one of PARTS
    key: str  # a fact id, or `path:start-end` for code
    text: str  # exactly what the agent receives for this item
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, **self.meta, "bytes": self.size, "text": self.text}


@dataclass(frozen=True)
class Skip:
    """Something that was a candidate and was left out, with the budget that left it out."""
    part: str
    key: str
    reason: str


@dataclass
class Snapshot:
    run: str
    created: str
    inputs: dict[str, Any]
    budgets: Budgets
    items: list[Item] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    records_limit: int = 0  # the record count limit after `always` records raised it
    code_limit: int = 0  # the code byte limit after the total budget took its share
    text: str = ""
    stored: str | None = None  # repo-relative path once saved
    warnings: list[str] = field(default_factory=list)  # what degraded (e.g. no vectors, no index)

    def part(self, name: str) -> list[Item]:
        return [i for i in self.items if i.part == name]

    def used(self, *names: str) -> tuple[int, int]:
        """(items, bytes) used by the named parts."""
        chosen = [i for i in self.items if i.part in names]
        return len(chosen), sum(i.size for i in chosen)

    def usage(self) -> list[dict[str, Any]]:
        """The budget table: one row per part, then records, total (records + code) and the briefing."""
        b = self.budgets
        rows = []
        for name in RECORD_PARTS:
            n, size = self.used(name)
            rows.append({"part": name, "items": n, "bytes": size, "limit_items": None, "limit_bytes": None})
        for name, parts, items, limit in (
                ("records", RECORD_PARTS, self.records_limit, b.records_bytes),
                ("code", ("code",), None, self.code_limit),
                ("total", RECORD_PARTS + ("code",), None, b.total_bytes),
                ("briefing", ("briefing",), b.briefing_items, b.briefing_bytes)):
            n, size = self.used(*parts)
            rows.append({"part": name, "items": n, "bytes": size, "limit_items": items, "limit_bytes": limit})
        return rows

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `stele context --json` and of a stored run (keys are only ever added)."""
        return {
            "v": SCHEMA_VERSION, "run": self.run, "created": self.created, "stored": self.stored,
            "inputs": self.inputs, "budgets": asdict(self.budgets), "usage": self.usage(),
            "parts": {name: [i.as_dict() for i in self.part(name)] for name in PARTS},
            "skipped": [asdict(s) for s in self.skipped], "warnings": self.warnings, "text": self.text,
        }
