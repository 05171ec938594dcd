"""Pseudo-relevance feedback in `stele search`: a keyword query borrows the words its best hits share."""
import pytest

from stele.index.build import open_index
from stele.project import Project
from stele.retrieve import feedback
from stele.retrieve.search import search
from stele.retrieve.seeds import text_boosts
from stele.retrieve.settings import Settings
from tests.fakes import write_fact


@pytest.fixture
def record(repo, fake_model):
    write_fact(repo, "DEC-0001", "decision", "Statins and breast cancer",
               body="Statins are cholesterol lowering drugs. Cholesterol lowering drugs and breast cancer.")
    write_fact(repo, "DEC-0002", "decision", "Cholesterol lowering drugs in women",
               body="Cholesterol lowering drugs and tumour risk in a cohort of women followed for ten years.")
    for n, title in enumerate(["How releases are cut and tagged", "Onboarding a new engineer",
                               "The on-call rota and paging policy", "Writing a postmortem"], 3):
        write_fact(repo, f"DOC-000{n}", "document", title, status="current")
    return Project(repo)


def test_a_keyword_query_gains_the_words_its_best_hits_share(record):
    with open_index(record) as index:
        words = feedback.expanded(index.text, "statins breast", text_boosts(Settings.defaults()))
    assert words is not None
    assert words["statin"] >= 1.0 and words["breast"] >= 1.0  # the query's own words keep (at least) their weight
    added = {t: w for t, w in words.items() if t not in ("statin", "breast")}
    assert "cholesterol" in added
    assert sum(words.values()) == pytest.approx(2 + feedback.MASS)  # the added words weigh MASS query words


def test_search_finds_a_fact_that_holds_no_word_of_the_query(record):
    """DEC-0002 says neither "statins" nor "breast"; the words it shares with DEC-0001 bring it."""
    found = [h.id for h in search(record, "statins breast").results]
    assert found[0] == "DEC-0001" and "DEC-0002" in found
    assert [h.id for h in search(record, "statins breast").results] == found  # deterministic


def test_a_question_is_searched_by_its_own_words(record):
    with open_index(record) as index:
        boosts = text_boosts(Settings.defaults())
        assert feedback.expanded(index.text, "do statins change breast cancer risk in older women", boosts) is None
        assert feedback.expanded(index.text, "haiku", boosts) is None  # nothing found: nothing to learn
    found = [h.id for h in search(record, "statins breast", relevant_only=True).results]
    assert "DEC-0002" not in found  # recall's judgement (snapshots, briefs) reads the prompt's words alone
