"""`.stele/config.yaml`: committed settings, every one written out with its default and a comment.

The commented template below is the single source of the defaults: `stele init` writes it verbatim and
`load()` merges the user's file over it. A key the template does not know, or a value of the wrong
type, is an error naming the key path, so a typo never silently falls back to a default.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .errors import SteleError

TEMPLATE = """\
# Stele settings. Committed with the repository; every key is shown with its default.
# Delete a key to go back to its default. Docs: docs/configuration.md in the Stele repository.

# Where committed facts live, relative to the repository root.
memory_dir: docs/memory

embedding:
  # "bundled" is the 256-d int8 static model shipped with Stele (offline, no download).
  # Or a path to any model2vec model folder, or a Hugging Face hub id (downloaded once by model2vec).
  # Changing it re-embeds everything on the next command.
  model: bundled

retrieval:
  min_prompt_chars: 25      # shorter prompts inject nothing unless they name an id
  max_seeds: 10             # search hits the walk starts from
  min_seed_strength: 0.15   # ...each matching at least this share of the best hit's strength
  # A search hit is a seed only if it matches the prompt well in absolute terms, by either floor;
  # when none does, nothing is injected (mode "no_match"). Calibrated on prompts on and off three
  # records (docs/retrieval.md, "The relevance floors"); `stele why` shows what missed them.
  text_floor: 0.35          # full text: the hit holds this share of the prompt's content words,
                            #   each weighted by its rarity in the record (1: all of them)
  vector_floor: 0.6         # embeddings: cosine to the prompt, for the bundled model (unrelated
                            #   pairs average ~0.2, related ~0.6); another model needs its own
  seed_support: 0.65        # once one hit reaches a floor, further seeds need this share of the
                            #   way to one (a fact bearing on one part of a two-part question)
  max_entries: 20           # window size, risk callouts included (may be lowered, never raised)
  window_cut: 0.4           # entries scoring under this share of the best entry's score are cut
  walk_depth: 1             # hops walked from each seed, both edge directions
  callout_hops: 2           # a risk this many causal hops from a seed is called out
  callout_strength: 0.4     # ...from seeds matching at least this well (the best seed is 1.0)
  max_callouts: 5           # risk callouts at most (they count toward max_entries)
  session_entries: 4        # session entries at most, listed below every committed fact
  rrf_k: 1                  # reciprocal-rank-fusion constant: small, so the top of each ranking counts
  bm25_weight: 1.0          # weight of the full-text ranking in the fusion
  vector_weight: 0.35       # weight of the embedding ranking in the fusion
  weak_match: 0.3           # when the best full-text hit scores under this share of what the prompt's
  strong_match: 0.6         #   words could score, the embeddings lead the fusion; from strong_match on,
                            #   BM25 alone (the embeddings are not consulted)
  title_boost: 0.5          # BM25 boost of the title field (body 1.0, tags 1.0, anchors 0.5)
  seed_match: 6.0           # score added to a seed for its match strength (fused score / best fused score):
                            #   twice the heaviest kind, so a strong match outranks a weak one of any kind
  walk_inherit: 0.5         # share of its seed's match term a walked fact inherits (relation weights
                            #   also count in proportion to how well that seed matched)
  hop_penalty: 0.5          # subtracted per hop walked
  session_penalty: 4.0      # session entries rank this far below committed facts
  walk_budget_ms: 6000      # past it, return what is ready with partial: true
  hook_budget_ms: 8000

# Category weight of each kind (an ordering key, not a probability). Containers sink, not vanish.
kind_weights:
  decision: 3
  architecture: 3
  instruction: 3
  constraint: 3
  goal: 2
  risk: 2
  lesson: 2
  priority: 2
  document: 2
  gap: 1
  fyi: 1
  opportunity: 1
  note: 1
  task: 1
  diagram: 1
  component: 0
  epic: -3
  objective: -3
  milestone: -3

# Weight of the edge followed to reach a fact.
relation_weights:
  fulfills: 3
  blocks: 3
  supersedes: 3
  caused-by: 2
  contradicts: 2
  relates-to: 1
  part-of: 1
  mentions: 1
  embeds: 1
  expires-on: 1

snapshot:                   # what `stele context` and a task claim deliver (bytes)
  records_bytes: 16384
  records_count: 12
  records_count_max: 64     # more `always` records raise the count up to this; bytes stay strict
  record_max_bytes: 12288
  code_bytes: 32768
  total_bytes: 49152
  briefing_items: 20
  briefing_bytes: 4096

session:
  default_fidelity: compact # compact | summary:high | summary:medium | summary:low | truncate
  # Team session memory (docs/sessions.md): ship session lines to an S3-compatible bucket and read
  # the team's back. Empty: local files only. Credentials never go here: they come from the
  # environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or an AWS profile.
  store: ""                 # s3://BUCKET/PREFIX
  endpoint: ""              # MinIO, RustFS, Ceph, R2: the server's URL; empty: AWS
  region: ""                # empty: us-east-1
  sync_deadline_ms: 3000    # the most a hook spends syncing at a session's start or stop

hooks:
  max_chars: 9000           # injected text stays under the harnesses' 10,000-character cap

tasks:
  lease: 2h                 # how long a claim holds before another agent may take it over

doctor:
  unverified_days: 180      # warn about facts not verified for longer than this
  oversized_bytes: 12288    # warn about records larger than this
  near_duplicate: 0.92      # warn when two facts of one kind are this similar (0..1)
  long_line: 4000           # warn about lines longer than this (a diff view hides the rest)

redaction:
  # Extra regular expressions to redact before anything is written, on top of the built-in
  # rules (private keys, 100+ vendor token shapes, credential assignments; docs/security.md).
  patterns: []
"""


@dataclass(frozen=True)
class Config:
    data: dict[str, Any]

    def __getitem__(self, dotted: str) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            node = node[part]
        return node


@cache
def defaults() -> dict[str, Any]:
    import yaml

    return yaml.load(TEMPLATE, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


# A setting named like a credential is refused as one (the config is committed; DESIGN.md section 1).
_CREDENTIAL_KEY = re.compile(r"(?i)(secret|password|passwd|token|credential|access_?key|api_?key)")
CACHE = Path("index") / "config.json"  # beside config.yaml, under the derived (gitignored) index folder


def load(path: Path | None) -> Config:
    """The config at `path` merged over the defaults (`path` may be absent).

    The merged result is cached as JSON under `.stele/index/`, keyed by the file's stat and the
    template: a read command on the hook path then needs no YAML parser at all (~20 ms)."""
    if path is None:
        return Config(defaults())
    key = _cache_key(path)
    cached = _read_cache(path, key)
    if cached is not None:
        return Config(cached)
    config = _load(path)
    _write_cache(path, key, config.data)
    return config


def _cache_key(path: Path) -> list:
    import hashlib

    try:
        st = path.stat()
    except OSError:
        st = None
    stat = [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino] if st else None
    return [1, hashlib.sha1(TEMPLATE.encode()).hexdigest()[:16], stat]


def _read_cache(path: Path, key: list) -> dict | None:
    import json

    try:
        data = json.loads((path.parent / CACHE).read_text(encoding="utf-8"))
        return data["config"] if data.get("key") == key else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_cache(path: Path, key: list, data: dict) -> None:
    """Whole (temp file and rename), not fsynced: it is a cache."""
    import json

    from . import atomic

    target = path.parent / CACHE
    if key[2] is None or not target.parent.is_dir():  # no config file or no index yet: no cache
        return
    try:
        atomic.write(target, json.dumps({"key": key, "config": data}), durable=False)
    except (OSError, TypeError, ValueError):  # a cache that cannot be written is just not used
        pass


def _load(path: Path) -> Config:
    base = defaults()
    if not path.is_file():
        return Config(base)
    import yaml

    try:
        user = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise SteleError(f"{path}{where}: invalid YAML ({getattr(e, 'problem', e)}); fix it or delete the file "
                         "to use the defaults") from None
    if user is None:
        return Config(base)
    merged = _merge(base, user, str(path), "")
    _check_patterns(merged["redaction"]["patterns"], path)
    return Config(merged)


def _check_patterns(patterns: Any, path: Path) -> None:
    """Every `redaction.patterns` entry compiles, else one line naming it (the redactor assumes so)."""
    import re

    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise SteleError(f"{path}: `redaction.patterns` must be a list of regular expressions")
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as e:
            raise SteleError(f"{path}: redaction.patterns entry {pattern!r} is not a valid regular expression "
                             f"({e}); fix or remove it") from None


def _merge(base: dict, user: Any, path: str, prefix: str) -> dict:
    if not isinstance(user, dict):
        raise SteleError(f"{path}: `{prefix or 'the file'}` must be a mapping of settings")
    out = dict(base)
    for key, value in user.items():
        where = f"{prefix}.{key}" if prefix else str(key)
        if key not in base and _CREDENTIAL_KEY.search(str(key)):
            raise SteleError(f"{path}: `{where}` looks like a credential; credentials never go in the "
                             "committed config: remove it and use the environment (AWS_ACCESS_KEY_ID, "
                             "AWS_SECRET_ACCESS_KEY) or an AWS profile")
        if key not in base:
            known = ", ".join(base)
            raise SteleError(f"{path}: unknown setting `{where}`; known keys here: {known}")
        default = base[key]
        if isinstance(default, dict):
            out[key] = _merge(default, value, path, where)
        elif not _compatible(default, value):
            raise SteleError(f"{path}: `{where}` must be {type(default).__name__} like the default "
                             f"{default!r}, not {value!r}")
        else:
            out[key] = value
    return out


def _compatible(default: Any, value: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))
