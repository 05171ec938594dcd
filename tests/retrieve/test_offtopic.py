"""The relevance floors with the bundled model, independent of any one record: on every record, a
prompt unrelated to the project gets nothing (no entry, no callout, mode "no_match"), while the
record's own questions still get answers. The unrelated prompts are not tuned to these records: they
are everyday requests and general programming questions, as an agent receives between tasks."""
import pytest

from stele.cli.demo import example_inputs
from stele.project import Project
from stele.record.scaffold import example_repository
from stele.retrieve.recall import recall
from tests.fakes import write_fact

UNRELATED = [
    "write a haiku about autumn leaves drifting across a quiet pond",
    "explain the difference between a mutex and a semaphore in operating systems",
    "what is the capital of Australia and why is it not Sydney?",
    "how many tablespoons are in a quarter cup of butter?",
    "recommend three science fiction novels for a long flight",
    "how do I center a div horizontally and vertically with flexbox?",
    "translate 'where is the train station' into German",
]
# Three small records of unrelated domains, each with one question of its own.
RECORDS = {
    "bakery": ([("DEC-0001", "decision", "Sourdough starter is fed twice a day at 09:00 and 21:00"),
                ("RISK-0002", "risk", "A proofing cabinet above 30 C overproofs the croissant dough"),
                ("LSN-0003", "lesson", "Rye flour from the new mill absorbs more water: raise hydration")],
               "how often do we feed the sourdough starter?"),
    "climate": ([("ARCH-0001", "architecture", "The ocean model couples to the atmosphere every six hours"),
                 ("DEC-0002", "decision", "Ensemble runs use forty members seeded from perturbed SSTs"),
                 ("CON-0003", "constraint", "Output files stay in NetCDF4 with CF-1.8 metadata")],
                "how many ensemble members do the runs use?"),
    "game": ([("DEC-0001", "decision", "The physics step runs at a fixed 120 Hz, rendering interpolates"),
              ("RISK-0002", "risk", "Large terrain colliders stall the broadphase on low-end consoles"),
              ("INS-0003", "instruction", "Sprite atlases are packed by the asset pipeline, never by hand")],
             "at what rate does the physics step run?"),
}


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_an_unrelated_prompt_gets_nothing_on_any_record(repo, name):
    facts, own = RECORDS[name]
    for fact_id, kind, title in facts:
        write_fact(repo, fact_id, kind, title)
    project = Project(repo)
    assert recall(project, own).entries, f"{name}: its own question found nothing"
    for prompt in UNRELATED:
        r = recall(project, prompt)
        assert (r.mode, r.entries, r.risks) == ("no_match", [], []), f"{name}: {prompt!r} got {r.entries}"


def test_the_bundled_example_answers_its_prompts_and_nothing_else(tmp_path, monkeypatch):
    root = example_repository(tmp_path / "harbor")
    monkeypatch.chdir(root)
    project = Project(root)
    prompts, _ = example_inputs()
    for prompt in prompts:
        assert recall(project, prompt).entries, f"{prompt!r} found nothing"
    for prompt in UNRELATED + ["Please add a dark mode toggle to the settings page"]:
        r = recall(project, prompt)
        assert (r.mode, r.entries, r.risks) == ("no_match", [], []), f"{prompt!r} got {r.entries}"
