"""search(): plain hybrid search. Asking for one kind never makes a match look weaker than it is."""
import pytest

from stele.project import Project
from stele.retrieve.search import search
from tests.fakes import write_fact

QUERY = "alias swap when reindexing the product catalog"


@pytest.fixture
def catalog(repo, fake_model):
    write_fact(repo, "DEC-0001", "decision", "Reindex the product catalog into a fresh index, then swap the alias")
    for n, title in enumerate(["How releases are cut and tagged", "Onboarding a new engineer",
                               "The on-call rota and paging policy", "Writing a postmortem"], 2):
        write_fact(repo, f"DOC-000{n}", "document", title, status="current")
    return Project(repo)


def test_kind_filter_returns_no_more_than_the_unfiltered_search(catalog):
    """How well full text matched is measured over the whole record: with `--kind document` the
    documents used to be the only candidates, their weak match sent the query to the embeddings, and
    every document came back."""
    everything = [h.id for h in search(catalog, QUERY).results]
    documents = [h.id for h in search(catalog, QUERY, kinds=["document"]).results]
    assert everything[0] == "DEC-0001"
    assert len(documents) <= len(everything) and set(documents) <= set(everything)


def test_relevant_only_keeps_what_passes_the_floors(catalog):
    assert [h.id for h in search(catalog, QUERY, relevant_only=True).results] == ["DEC-0001"]
    assert search(catalog, "write a haiku about autumn leaves drifting across a quiet pond",
                  relevant_only=True).results == []
