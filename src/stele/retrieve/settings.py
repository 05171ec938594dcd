"""The retrieval knobs, read once per call from `.stele/config.yaml`.

The defaults live in one place, the commented template in `stele/config.py` (`retrieval`,
`kind_weights`, `relation_weights`); this is a plain frozen dataclass over them, so the pure parts of
retrieval (fusion, walk, ranking, callout) can be tested with `Settings.defaults()` and
`plain.replace`, with no project on disk.
"""
from __future__ import annotations

from ..plain import dataclass, fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..config import Config

HARD_CAP = 20  # entries, callouts included; the config may lower it, never raise it


@dataclass(frozen=True)
class Settings:
    min_prompt_chars: int
    max_seeds: int
    min_seed_strength: float
    text_floor: float
    vector_floor: float
    vector_z: float
    vector_alone_z: float
    seed_support: float
    max_entries: int
    window_cut: float
    walk_depth: int
    callout_hops: int
    callout_strength: float
    max_callouts: int
    session_entries: int
    rrf_k: float
    bm25_weight: float
    vector_weight: float
    weak_match: float
    strong_match: float
    title_boost: float
    seed_match: float
    walk_inherit: float
    hop_penalty: float
    session_penalty: float
    drift_penalty: float
    walk_budget_ms: int
    hook_budget_ms: int
    kind_weights: dict[str, float]
    relation_weights: dict[str, float]

    @classmethod
    def from_config(cls, config: Config) -> Settings:
        cast = {"int": int, "float": float}
        values: dict[str, Any] = {f.name: cast[f.type](config["retrieval"][f.name]) for f in fields(cls)
                                  if f.type in cast}
        values["max_entries"] = max(0, min(HARD_CAP, values["max_entries"]))
        return cls(**values, kind_weights=dict(config["kind_weights"]),
                   relation_weights=dict(config["relation_weights"]))

    @classmethod
    def defaults(cls) -> Settings:
        from ..config import Config, defaults

        return cls.from_config(Config(defaults()))

    def kind_weight(self, kind: str) -> float:
        return float(self.kind_weights.get(kind, 0.0))

    def relation_weight(self, rel: str) -> float:
        return float(self.relation_weights.get(rel, 0.0))
