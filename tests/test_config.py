"""Config loading: defaults, the user's file over them, and the JSON cache hooks rely on."""
import json

import pytest

from stele import config
from stele.errors import SteleError


def test_cache_is_reused_and_follows_the_file(tmp_path):
    path, cache = tmp_path / "config.yaml", tmp_path / "state" / "config.json"
    path.write_text("hooks:\n  max_chars: 3000\n")
    assert config.load(path, cache)["hooks.max_chars"] == 3000
    data = json.loads(cache.read_text())
    data["config"]["hooks"]["max_chars"] = 1234  # prove the next load reads the cache, not the YAML
    cache.write_text(json.dumps(data))
    assert config.load(path, cache)["hooks.max_chars"] == 1234
    path.write_text("hooks:\n  max_chars: 5000\n")
    assert config.load(path, cache)["hooks.max_chars"] == 5000
    cache.write_text("{torn")
    assert config.load(path, cache)["hooks.max_chars"] == 5000
    assert config.load(tmp_path / "absent.yaml", cache)["hooks.max_chars"] == 9000


def test_an_invalid_file_is_an_error_and_is_not_cached(tmp_path):
    path, cache = tmp_path / "config.yaml", tmp_path / "config.json"
    path.write_text("hooks:\n  max_charz: 1\n")
    with pytest.raises(SteleError, match="unknown setting `hooks.max_charz`"):
        config.load(path, cache)
    assert not cache.exists()
