"""`nearest`: the items nearest a query vector do not depend on the index's history: rows no item uses,
rows shared by items with one text, and items the background builder has yet to embed."""
from __future__ import annotations

import time

from stele.index import background
from stele.index.build import finish, open_index, rebuild
from stele.index.nearest import nearest
from stele.project import Project
from tests.fakes import write_fact

TOPICS = ["charge the order twice on retry", "refund a duplicate charge", "orders ship from the warehouse",
          "the warehouse closes at night", "night builds run the test suite", "the test suite needs postgres",
          "postgres backups are taken hourly", "hourly reports mail the team", "the team rota is on the wiki",
          "the wiki lives in the docs folder", "docs are built with sphinx", "sphinx themes are vendored"]
QUERY = "a double charge on an order"


def _near(project, enc, k):
    with open_index(project) as index:
        return [(n.id, round(n.cosine, 12), n.row) for n in nearest(index, enc, enc.encode([QUERY])[0], k)]


def test_rows_no_item_uses_take_no_place_and_a_shared_row_gives_every_item(repo, fake_model):
    for n, title in enumerate(TOPICS):
        write_fact(repo, f"DEC-{n:04}", "decision", title)
    write_fact(repo, "DEC-0099", "decision", TOPICS[0])  # the same text as DEC-0000: one row for both
    project = Project(repo)
    rebuild(project)
    fresh = _near(project, fake_model.encoder, 2)
    assert [i for i, _, _ in fresh] == ["DEC-0001", "DEC-0000", "DEC-0099"]  # the 2nd row's two items tie

    gone = [write_fact(repo, f"DEC-{50 + n:04}", "decision", f"{QUERY} {n}") for n in range(3)]
    with open_index(project):
        pass
    for path in gone:  # their rows stay in the store (too few to compact) and are nearest the query
        path.unlink()
    assert _near(project, fake_model.encoder, 2) == fresh


def test_a_read_before_the_builder_embeds_ranks_as_one_after(repo, fake_model, monkeypatch):
    paths = [write_fact(repo, f"DEC-{n:04}", "decision", title) for n, title in enumerate(TOPICS)]
    project = Project(repo)
    rebuild(project)
    write_fact(repo, "DEC-0100", "decision", "an order charged two times")  # new
    paths[3].write_text(paths[3].read_text().replace("the warehouse closes at night", "charges double at night"))
    monkeypatch.setenv(background.ENV, "1")
    monkeypatch.setattr(background, "start", lambda project: True)  # the builder "runs" later
    with open_index(project, deadline=time.monotonic() + 60) as index:
        assert index.unembedded() == ["DEC-0003", "DEC-0100"]  # left to the builder by a hook's refresh
        before = [(n.id, round(n.cosine, 12), n.row)
                  for n in nearest(index, fake_model.encoder, fake_model.encoder.encode([QUERY])[0], 5)]
    monkeypatch.setenv(background.ENV, "0")
    finish(project)
    with open_index(project) as index:
        assert index.unembedded() == []
    assert before == _near(project, fake_model.encoder, 5)
    assert {"DEC-0003", "DEC-0100"} <= {i for i, _, _ in before}
