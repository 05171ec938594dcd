"""A cosine that holds no word of the prompt makes a seed only when the prompt speaks the record's
language as much as the record's own facts do (`retrieve.language`), on real indexes with the bundled
model: an everyday homonym on a real record gets nothing, a paraphrase on a tiny record is still found."""
import shutil
from pathlib import Path

import pytest

from stele.index.build import open_index
from stele.project import Project
from stele.retrieve import language
from stele.retrieve.recall import recall
from tests.fakes import write_fact
from tests.retrieve.test_real_model import FACTS

RECORD = Path(__file__).resolve().parents[2] / "eval" / "sets" / "rust-mobile" / "record"


@pytest.fixture
def sync_record(repo):
    """A real record of 45 facts (application-services: sync engines, storage, megazords)."""
    shutil.copytree(RECORD, repo / "docs" / "memory", dirs_exist_ok=True)
    return Project(repo)


def test_an_everyday_homonym_gets_nothing_on_a_record_with_a_language(sync_record):
    """"Out of sync" stands at cosine 0.74 from the Sync facts, 3.7 deviations above their background,
    and holds none of their words but `sync`: the prompt speaks 0.16 of the record's language, its
    facts speak 0.67 of each other's at their lower quartile (the line is capped at 0.5)."""
    prompt = "My AirPods audio is out of sync with the video on my laptop. How do I fix the lag?"
    r = recall(sync_record, prompt)
    assert (r.mode, r.entries, r.risks) == ("no_match", [], []), [e.id for e in r.entries]
    foreign = [h for h in r.trace.candidates if h.foreign]
    assert foreign and all(h.coverage < 0.1 for h in foreign)
    with open_index(sync_record) as index:
        assert language.line(index.text, index.catalog) == language.SPEAKS
    # the record's own question, in its words or in others, is still answered
    assert recall(sync_record, "how do the sync engines store their sync IDs and change counters?").entries


def test_a_tiny_record_has_no_language_and_a_paraphrase_in_other_words_is_found(repo):
    """Six facts of unrelated decisions share no word: the line is 0, the test is off, and "a buyer was
    billed two times" (no word in common, the record's language spoken 0.0) still finds its risk."""
    for fact_id, kind, title in FACTS:
        write_fact(repo, fact_id, kind, title)
    project = Project(repo)
    r = recall(project, "a buyer was billed two times for one purchase")
    assert r.trace.seeds and r.trace.seeds[0].id == "RISK-2M9Q"
    with open_index(project) as index:
        assert language.line(index.text, index.catalog) == 0.0
