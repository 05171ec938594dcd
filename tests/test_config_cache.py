"""The merged config is cached under .stele/index/ and follows every edit of config.yaml."""
from stele import config
from stele.project import Project


def test_the_cache_is_used_and_follows_edits(repo, monkeypatch):
    path = repo / ".stele/config.yaml"
    assert config.load(path)["retrieval.max_seeds"] == 10
    assert not (repo / ".stele/index/config.json").exists()  # no index folder yet: nothing cached
    (repo / ".stele/index").mkdir()
    config.load(path)
    assert (repo / ".stele/index/config.json").is_file()
    monkeypatch.setattr(config, "_load", lambda p: (_ for _ in ()).throw(AssertionError("not cached")))
    assert config.load(path)["retrieval.max_seeds"] == 10
    monkeypatch.undo()
    path.write_text(path.read_text().replace("max_seeds: 10", "max_seeds: 7"))
    assert config.load(path)["retrieval.max_seeds"] == 7
    assert Project(repo).config["retrieval.max_seeds"] == 7
    (repo / ".stele/index/config.json").write_text("{not json")
    assert config.load(path)["retrieval.max_seeds"] == 7
