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
    write_fact(repo, "DEC-0001", "decision", "A cohort of statin users",
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


@pytest.fixture
def lookup(repo, fake_model):
    """A fact named "Release tagging", and two neighbours that say its words in their bodies and share
    words of their own (semver, changelog: what feedback would lend the query)."""
    write_fact(repo, "DEC-0001", "decision", "Release tagging",
               body="Done by the engineer on duty, from main.")
    write_fact(repo, "DOC-0002", "document", "Release checklist", status="current",
               body="Tagging waits for the changelog; semver decides the number, the changelog its heading.")
    write_fact(repo, "DOC-0003", "document", "Version numbers", status="current",
               body="Semver numbers every release; tagging waits for the changelog and its semver heading.")
    for n, title in enumerate(["Onboarding a new engineer", "The on-call rota and paging policy",
                               "Writing a postmortem"], 4):
        write_fact(repo, f"DOC-000{n}", "document", title, status="current")
    return Project(repo)


def test_a_lookup_by_title_words_gets_no_feedback(lookup):
    """Every word of "release tagging" is in DEC-0001's title: the query names it. DOC-0003 matches
    best on the first pass; feedback would lend the query its and DOC-0002's semver and changelog and
    rank DOC-0002 over DEC-0001 (second without feedback, third with it)."""
    boosts = text_boosts(Settings.defaults())
    with open_index(lookup) as index:
        assert feedback.expanded(index.text, "release tagging", boosts) is None
        # a topic that no title names whole still borrows words
        assert feedback.expanded(index.text, "tagging semver", boosts) is not None
    found = [h.id for h in search(lookup, "release tagging").results]
    assert found.index("DEC-0001") < found.index("DOC-0002")
