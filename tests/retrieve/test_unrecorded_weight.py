"""Two refinements of the relevance test, each on a real index (docs/retrieval.md, DEC-Q0P5 and the
decision recorded with this test):

- a prompt naming a part of the repository the record never mentions is still answered when a hit
  outweighs that name (`unrecorded.outweighs`): it covers twice the share of the prompt the name
  carries, as a developer's question about a recorded topic names the component it is working in;
- a hit that covers the prompt's words is no seed when the embeddings contradict it
  (`seeds.contradicted`): the words are shared, the meaning is not."""

import pytest

from stele.index.build import open_index
from stele.plain import replace
from stele.project import Project
from stele.retrieve.recall import recall, recall_in
from stele.retrieve.seeds import Hit, contradicted, passed
from stele.retrieve.settings import Settings
from stele.retrieve.unrecorded import outweighs, share, unrecorded
from tests.fakes import write_fact
from tests.helpers import track, window


@pytest.fixture
def record(repo):
    write_fact(repo, "DEC-0001", "decision", "The querier fans out to every sidecar with a 30 s deadline",
               body="Each query fans out to every sidecar; a sidecar that misses the 30 second deadline is "
                    "dropped from the answer and the querier returns a partial response with a warning.")
    write_fact(repo, "LSN-0002", "lesson", "Sidecars behind a proxy dropped long-lived streams")
    write_fact(repo, "CON-0003", "constraint", "Invoices are numbered per tenant and per year")
    track(repo, "pkg/query/querier.go", "pkg/exemplars/exemplars.go", "pkg/exemplars/proxy.go")
    return repo


ASIDE = "in the exemplars code the querier drops a sidecar past the 30 second deadline, why?"


def test_a_hit_that_outweighs_the_unrecorded_name_is_answered(record):
    r = recall(Project(record), ASIDE)
    assert "DEC-0001" in window(r), (r.mode, window(r), r.trace.unrecorded)
    assert r.trace.unrecorded == []  # not vetoed...
    with open_index(Project(record)) as index:
        assert unrecorded(index, ASIDE) == ["exemplars"]  # ...though the name is there: it is outweighed
        hit = next(h for h in r.trace.candidates if h.id == "DEC-0001")
        assert not hit.leads and not hit.named  # no precise test saved it
        assert hit.coverage >= 2 * share(index, ASIDE, ["exemplars"])


def test_a_prompt_about_the_unrecorded_part_still_gets_nothing(record):
    r = recall(Project(record), "how does the querier reach the sidecars for exemplars?")
    assert (r.mode, window(r)) == ("no_match", []), window(r)
    assert r.trace.unrecorded == ["exemplars"]


def test_outweighs_needs_twice_the_share_or_a_clear_standout():
    s = Settings.defaults()
    by_words = Hit("A", coverage=0.40)
    assert outweighs(by_words, 0.2, s) and not outweighs(by_words, 0.21, s)
    standout = Hit("B", coverage=0.13, cosine=0.86, background=0.3, spread=0.14)  # 4 deviations
    assert outweighs(standout, 0.10, s) and not outweighs(standout, 0.14, s)
    near = Hit("C", coverage=0.13, cosine=0.70, background=0.3, spread=0.14)  # 2.9 deviations: the domain
    assert passed(near, s) and not outweighs(near, 0.10, s)
    assert not outweighs(Hit("D", coverage=0.3), 0.0, s)  # it must pass a floor first


@pytest.fixture
def places(repo):
    write_fact(repo, "DEC-0004", "decision", "Storage layout of the history database",
               body="The places database keeps the browsing history; review the data migration in every city "
                    "of the schema before you bump its version.")
    write_fact(repo, "CON-0003", "constraint", "Invoices are numbered per tenant and per year")
    return repo


def test_shared_words_in_another_sense_make_no_seed(places):
    """`places`, `city` and `review` cover the prompt; in meaning it is about brunch. The embeddings are
    consulted here whatever full text found (`strong_match` out of reach), as they are for a prompt
    whose words matched only partly."""
    s = replace(Settings.defaults(), strong_match=10.0)
    prompt = "which places in the city serve the best brunch, and should I trust the reviews?"
    with open_index(Project(places)) as index:
        r = recall_in(index, prompt, settings=s)
        hit = next(h for h in r.trace.candidates if h.id == "DEC-0004")
        assert hit.coverage >= s.text_floor and contradicted(hit, s), hit
        assert (r.mode, window(r)) == ("no_match", [])
        asked = recall_in(index, "the places database keeps the browsing history: how do I review its data "
                                 "migration before the schema version is bumped?", settings=s)
        assert window(asked) == ["DEC-0004"]


def test_covered_words_the_embeddings_contradict_make_no_seed():
    s = Settings.defaults()
    words = Hit("A", coverage=0.38, cosine=0.53, background=0.30, spread=0.15)  # 1.5 deviations
    assert contradicted(words, s) and passed(words, s) is None
    agreed = Hit("B", coverage=0.38, cosine=0.60, background=0.30, spread=0.15)  # 2 deviations
    assert not contradicted(agreed, s) and passed(agreed, s)
    assert passed(Hit("C", coverage=0.38), s)  # the embeddings not consulted: coverage stands
