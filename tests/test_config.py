"""config: values are range-checked with the key path, duplicate keys refused, backtracking redaction
patterns refused, a hard cap clamped with a word; a broken config never blames the index."""
import pytest

from stele import config
from stele.errors import ConfigError
from tests.helpers import invoke


def _load(tmp_path, text):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return config.load(path)


@pytest.mark.parametrize("text,message", [
    ("retrieval:\n  hook_budget_ms: -5\n", "`retrieval.hook_budget_ms` is -5; it must be at least 1"),
    ("retrieval:\n  vector_floor: 0.2\n", "`retrieval.vector_floor` is 0.2; it must be from 0.21 to 1"),
    ("retrieval:\n  min_seed_strength: 1.5\n", "`retrieval.min_seed_strength` is 1.5; it must be from 0 to 1"),
    ("retrieval:\n  max_seeds: 2.5\n", "`retrieval.max_seeds` must be a whole number"),
    ("doctor:\n  near_duplicate: 0\n", "`doctor.near_duplicate` is 0"),
    ("snapshot:\n  total_bytes: 0\n", "`snapshot.total_bytes` is 0; it must be at least 1"),
    ("kind_weights:\n  decision: high\n", "`kind_weights.decision` must be"),
    ("memory_dir: /etc\n", "`memory_dir` '/etc' must be a folder inside the repository"),
    ("memory_dir: .\n", "`memory_dir` '.' must be a folder inside the repository other than its root"),
    ("memory_dir: ./\n", "`memory_dir` './' must be a folder inside the repository other than its root"),
    ("retrieval:\n  max_seeds: 3\n  max_seeds: 4\n", ":3: `retrieval.max_seeds` is set twice (also on line 2)"),
    ("redaction:\n  patterns: ['(a+)+$']\n", "`redaction.patterns[0]` '(a+)+$': a repeat inside a repeat"),
    ("redaction:\n  patterns: ['(\\\\w+\\\\s?)+$']\n", "a repeat inside a repeat can take exponential time"),
    ("redaction:\n  patterns: ['[unclosed']\n", "is not a valid regular expression"),
    ("redaction:\n  patterns: [7]\n", "must be a non-empty regular expression"),
    ("tasks:\n  lease: forever\n", "`tasks.lease` is 'forever': write a duration like 2h, 30m, 90s, 1d or 1h30m"),
    ("tasks:\n  lease: 0h\n", "`tasks.lease` is '0h': a claim needs a lease of at least one second"),
    ("tasks:\n  lease: -2h\n", "`tasks.lease` is '-2h': write a duration like"),
    ("tasks:\n  lease: 7\n", "`tasks.lease` must be str like the default '2h', not 7"),
    # a pull request's config that no reader could walk: a RecursionError (exit 3), or hours quoting it
    ("redaction:\n  patterns: " + "[" * 900 + "]" * 900 + "\n", ":1: `redaction` nests more than 50 levels deep"),
    ("redaction:\n  patterns: [[&a0 [x, y], " + ", ".join(f"&a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, 30))
     + "]]\n", ":1: `redaction` is expanded past 10,000 values by YAML aliases"),
])
def test_a_bad_value_is_refused_naming_its_key_path(tmp_path, text, message):
    with pytest.raises(ConfigError, match="^" + str(tmp_path / "config.yaml").replace("/", "/") + ".*") as e:
        _load(tmp_path, text)
    assert message in str(e.value)
    assert "rebuild" not in str(e.value)


def test_safe_patterns_and_in_range_values_load(tmp_path):
    cfg = _load(tmp_path, "redaction:\n  patterns: ['internal-[a-z]+-\\\\d+', '(?:foo|bar)+', 'TOKEN_[A-Z0-9]{20}']\n"
                          "retrieval:\n  hook_budget_ms: 500\ntasks:\n  lease: 1h30m\n")
    assert cfg["retrieval.hook_budget_ms"] == 500 and cfg["tasks.lease"] == "1h30m" and cfg.warnings == ()


def test_max_entries_over_the_cap_is_clamped_with_a_word_every_time(repo, capsys):
    (repo / ".stele/index").mkdir()
    path = repo / ".stele/config.yaml"
    path.write_text("retrieval:\n  max_entries: 40\n")
    for _ in range(2):  # the second load comes from the cache and still says it
        cfg = config.load(path)
        assert "`retrieval.max_entries` is 40, over the design's cap" in capsys.readouterr().err
    assert cfg.warnings and "using 20" in cfg.warnings[0]


def test_a_broken_config_is_named_and_never_sent_to_rebuild(repo):
    (repo / ".stele/config.yaml").write_text("retrieval:\n  max_entries: [\n")
    for args in (("list",), ("search", "rate limiting"), ("rebuild",)):
        r = invoke(*args)
        assert r.code == 1 and ".stele/config.yaml:3: invalid YAML" in r.err, (args, r.err)
        assert "stele rebuild" not in r.err
