"""`.stele/config.yaml`: committed settings, every one written out with its default and a comment.

The commented template below is the single source of the defaults: `stele init` writes it verbatim and
`load()` merges the user's file over it. A key the template does not know, a key written twice, a value
of the wrong type or out of its range (`RANGES`), or a redaction pattern that could backtrack
catastrophically or cost a hook its compiling (`regexcheck`), is an error naming the key path, so a typo never silently falls back to a default
or switches a feature off (`hook_budget_ms: -5` disabled every hook). A value past a hard cap that the
design fixes (`retrieval.max_entries`, 20) is clamped and said so (`Config.warnings`, printed on stderr
on every load: hooks keep stdout for their answer).
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

from . import textcut
from .errors import ConfigError, say
from .lazyre import lazy
from .plain import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
  vector_z: 2.8             # ...and that many deviations above what the fact scores against
                            #   unrelated text (its background): long, generic facts need more
  vector_alone_z: 3.5       # ...or this many, for a hit holding under a tenth of the prompt's words
  seed_support: 0.65        # once one hit reaches a floor, further seeds need this share of the
                            #   way to one (a fact bearing on one part of a two-part question)
  max_entries: 20           # window size, risk callouts included (may be lowered, never raised)
  window_cut: 0.5           # entries scoring under this share of the best entry's score are cut
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
  drift_penalty: 0.5        # a fact whose anchored code changed since it was verified ranks this much lower
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
  sync_deadline_ms: 3000    # the most a hook's background sync runs at a session's start or stop
  sync_bound_ms: 60000      # the most `stele session sync` runs; past it, it says what waits

hooks:
  max_chars: 9000           # injected text stays under the harnesses' 10,000-character cap
  nudge_unattended: false   # nudge at the stop of runs nobody watches too (`claude -p`, CI, scripts):
                            #   continuing such a turn replaces the result a script reads
  hold_edits: false         # hold an edit once when a constraint or risk is anchored where it lands,
                            #   so the model reads the fact before the change (the harness's deny)
  resident: false           # Linux: one process per repository answers hooks, recall and search (forked,
                            #   no start-up imports, freshness by inotify). Pays on large records (50k
                            #   facts: prompt ~35 ms against ~190 in its own process); costs a process and
                            #   an inotify instance per repository (docs/hooks.md). Never in CI.

tasks:
  lease: 2h                 # how long a claim holds before another agent may take it over
  remote_timeout_ms: 30000  # the most one call to a claim's remote (ls-remote, fetch, push) may take

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
    warnings: tuple[str, ...] = ()

    def __getitem__(self, dotted: str) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            node = node[part]
        return node


def load_yaml(text: str, where: str, fix: str = "") -> Any:
    """`text` parsed as YAML: safely, with libyaml's C loader when it is installed (7.5x faster than
    the Python one). A syntax error, or a key set twice in one mapping (YAML lets the last one win,
    which hides the value in force), is one ConfigError naming `where` and the line, then `fix`."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _refuse_unreadable(node, where, fix)
            _refuse_duplicate_keys(node, where, "")
        return loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{where}{line}: invalid YAML ({getattr(e, 'problem', None) or e}){fix}") from None
    finally:
        loader.dispose()


@cache
def defaults() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(TEMPLATE, "the built-in config template")
    return loaded


# A setting named like a credential is refused as one (the config is committed; DESIGN.md section 1).
_CREDENTIAL_KEY = lazy(r"(?i)(secret|password|passwd|token|credential|access_?key|api_?key)")
CACHE = Path("index") / "config.json"  # beside config.yaml, under the derived (gitignored) index folder


def load(path: Path | None) -> Config:
    """The config at `path` merged over the defaults (`path` may be absent).

    The merged result is cached as JSON under `.stele/index/`, keyed by the file's stat and the
    template: a read command on the hook path then needs no YAML parser at all (~20 ms)."""
    if path is None:
        return Config(defaults())
    key = _cache_key(path)
    cached = _read_cache(path, key)
    config = Config(cached[0], tuple(cached[1])) if cached is not None else _load(path)
    if cached is None:
        _write_cache(path, key, config)
    for warning in config.warnings:
        say(f"stele: warning: {warning}")
    return config


def _cache_key(path: Path) -> list:
    import zlib  # not hashlib: its OpenSSL costs the hook path ~3 ms, and a cache key needs no strength

    try:
        st = path.stat()
    except OSError:
        st = None
    stat = [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino] if st else None
    # the first number changes with what validation refuses (3: `regexcheck`'s bounds), so a config an
    # older Stele accepted is judged again
    return [3, zlib.crc32(TEMPLATE.encode()), stat]


def _read_cache(path: Path, key: list) -> tuple[dict, list] | None:
    import json

    try:
        data = json.loads((path.parent / CACHE).read_text(encoding="utf-8"))
        return (data["config"], list(data.get("warnings", []))) if data.get("key") == key else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_cache(path: Path, key: list, config: Config) -> None:
    """Whole (temp file and rename), not fsynced: it is a cache."""
    import json

    from . import atomic

    target = path.parent / CACHE
    if key[2] is None or not target.parent.is_dir() or target.parent.is_symlink():
        return  # no config file or no index yet (or an index folder linked elsewhere: `Project.local`)
    try:
        atomic.write(target, json.dumps({"key": key, "config": config.data, "warnings": list(config.warnings)}),
                     durable=False)
    except (OSError, TypeError, ValueError):  # a cache that cannot be written is just not used
        pass


def _load(path: Path) -> Config:
    base = defaults()
    if not path.is_file():
        return Config(base)
    user = load_yaml(path.read_text(encoding="utf-8"), str(path),
                     "; fix it or delete the file to use the defaults")
    if user is None:
        return Config(base)
    merged = _merge(base, user, str(path), "")
    return Config(merged, tuple(_check_values(merged, str(path))))


def _refuse_unreadable(node: Any, where: str, fix: str) -> None:
    """Alias bombs and deep nesting (`yamlshape`), refused before anything walks or quotes a value."""
    from . import yamlshape

    found = yamlshape.unreadable(node)
    if found is not None:
        raise ConfigError(f"{where}:{found[0] + 1}: {found[1]}{fix}")


def _refuse_duplicate_keys(node: Any, path: str, prefix: str) -> None:
    """YAML lets the last of two equal keys win; in settings that hides which value is in force."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            where = f"{prefix}.{key_node.value}" if prefix else str(key_node.value)
            line = key_node.start_mark.line + 1
            if key_node.value in seen:
                raise ConfigError(f"{path}:{line}: `{where}` is set twice (also on line {seen[key_node.value]}); "
                                  "keep one")
            seen[key_node.value] = line
            _refuse_duplicate_keys(value_node, path, where)


# key path -> (lowest, highest) allowed; None: no bound that side. Integers stay integers.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "retrieval.min_prompt_chars": (0, None), "retrieval.max_seeds": (1, None),
    "retrieval.min_seed_strength": (0, 1), "retrieval.max_entries": (1, None), "retrieval.walk_depth": (0, 10),
    "retrieval.callout_hops": (0, 10), "retrieval.callout_strength": (0, 1), "retrieval.max_callouts": (0, None),
    "retrieval.session_entries": (0, None), "retrieval.rrf_k": (0, None), "retrieval.bm25_weight": (0, None),
    "retrieval.vector_weight": (0, None), "retrieval.weak_match": (0, 1), "retrieval.strong_match": (0, 1),
    "retrieval.title_boost": (0, None), "retrieval.seed_match": (0, None), "retrieval.text_floor": (0, 1),
    "retrieval.vector_floor": (0.21, 1), "retrieval.vector_z": (0, None), "retrieval.vector_alone_z": (0, None), "retrieval.seed_support": (0, 1), "retrieval.window_cut": (0, 1), "retrieval.walk_inherit": (0, 1),
    "retrieval.hop_penalty": (0, None), "retrieval.session_penalty": (0, None),
    "retrieval.drift_penalty": (0, None),
    "retrieval.walk_budget_ms": (0, None), "retrieval.hook_budget_ms": (1, None),
    "snapshot.records_bytes": (1, None), "snapshot.records_count": (1, None),
    "snapshot.records_count_max": (1, None), "snapshot.record_max_bytes": (1, None),
    "snapshot.code_bytes": (0, None), "snapshot.total_bytes": (1, None), "snapshot.briefing_items": (0, None),
    "snapshot.briefing_bytes": (0, None), "hooks.max_chars": (1, None), "doctor.unverified_days": (0, None),
    "doctor.oversized_bytes": (1, None), "doctor.near_duplicate": (0.01, 1), "session.sync_deadline_ms": (0, None),
    "session.sync_bound_ms": (1, None), "tasks.remote_timeout_ms": (1, None),
}
CAPS = {"retrieval.max_entries": (20, "the design's cap (at most 20 entries, callouts included)")}


_DURATION = lazy(r"(\d+)([smhd])")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration_seconds(text: str) -> tuple[int, str]:
    """`2h`, `30m`, `90s`, `1d`, `1h30m` -> (seconds, ""); anything else -> (0, why it is refused).
    The one grammar of a lease, for `--lease` and for `tasks.lease` checked when the config loads."""
    spec = text.strip().lower().replace(" ", "")
    if not spec or _DURATION.sub("", spec) or not _DURATION.search(spec):
        return 0, "write a duration like 2h, 30m, 90s, 1d or 1h30m"
    seconds = sum(int(n) * _DURATION_UNITS[unit] for n, unit in _DURATION.findall(spec))
    return (seconds, "") if seconds > 0 else (0, "a claim needs a lease of at least one second")


def _check_values(data: dict[str, Any], path: str) -> list[str]:
    """Range-check the merged settings; returns warnings for values clamped to a hard cap."""
    config, warnings = Config(data), []
    for key, (lo, hi) in RANGES.items():
        value, default = config[key], Config(defaults())[key]
        if isinstance(default, int) and not isinstance(default, bool) and value != int(value):
            raise ConfigError(f"{path}: `{key}` must be a whole number like the default {default}, not {value!r}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            span = f"from {lo} to {hi}" if lo is not None and hi is not None else \
                f"at least {lo}" if lo is not None else f"at most {hi}"
            raise ConfigError(f"{path}: `{key}` is {value!r}; it must be {span} (the default is {default})")
    for key, (cap, why) in CAPS.items():
        if config[key] > cap:
            warnings.append(f"{path}: `{key}` is {config[key]}, over {why}; using {cap}")
    _, why = duration_seconds(str(data["tasks"]["lease"]))
    if why:
        raise ConfigError(f"{path}: `tasks.lease` is {data['tasks']['lease']!r}: {why} (the default is 2h)")
    for section in ("kind_weights", "relation_weights"):
        for name, value in data[section].items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{path}: `{section}.{name}` must be a number, not {value!r}")
    memory = str(data["memory_dir"]).replace("\\", "/")
    parts = [part for part in memory.split("/") if part not in ("", ".")]
    if not memory.strip() or memory.startswith("/") or ".." in parts or not parts:
        raise ConfigError(f"{path}: `memory_dir` {data['memory_dir']!r} must be a folder inside the repository "
                          "other than its root, written relative to it (e.g. docs/memory)")
    if not isinstance(data["embedding"]["model"], str) or not data["embedding"]["model"].strip():
        raise ConfigError(f"{path}: `embedding.model` is empty; write `bundled`, a model folder or a hub id")
    from .regexcheck import first_problem  # only when a config is validated, never from its cache

    refused = first_problem(data["redaction"]["patterns"])
    if refused:
        i, problem = refused
        pattern = data["redaction"]["patterns"][i]
        shown = textcut.ends(repr(pattern), 80, " ... ") if isinstance(pattern, str) else repr(pattern)
        raise ConfigError(f"{path}: `redaction.patterns[{i}]` {shown}: {problem}")
    return warnings


def _merge(base: dict, user: Any, path: str, prefix: str) -> dict:
    if not isinstance(user, dict):
        raise ConfigError(f"{path}: `{prefix or 'the file'}` must be a mapping of settings")
    out = dict(base)
    for key, value in user.items():
        where = f"{prefix}.{key}" if prefix else str(key)
        if key not in base and _CREDENTIAL_KEY.search(str(key)):
            raise ConfigError(f"{path}: `{where}` looks like a credential; credentials never go in the "
                             "committed config: remove it and use the environment (AWS_ACCESS_KEY_ID, "
                             "AWS_SECRET_ACCESS_KEY) or an AWS profile")
        if key not in base:
            known = ", ".join(base)
            raise ConfigError(f"{path}: unknown setting `{where}`; known keys here: {known}")
        default = base[key]
        if isinstance(default, dict):
            out[key] = _merge(default, value, path, where)
        elif not _compatible(default, value):
            raise ConfigError(f"{path}: `{where}` must be {type(default).__name__} like the default "
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
