"""The bundled model, for real: a paraphrase that shares no content word is found, and only by vectors."""
import pytest

from stele.project import Project
from stele.retrieve.recall import recall
from stele.retrieve.search import search
from tests.fakes import write_fact

FACTS = [("RISK-2M9Q", "risk", "Customers were charged twice for a single order"),
         ("DEC-4F7K", "decision", "Sessions expire after fourteen days of inactivity"),
         ("DEC-5G8H", "decision", "Search results show stale prices after a catalog update"),
         ("DEC-6J9K", "decision", "Password hashing uses bcrypt with cost factor 12"),
         ("DEC-7KAM", "decision", "Receipts are emailed by a background worker"),
         ("INS-8MBN", "instruction", "Database migrations must set a lock timeout")]


@pytest.fixture
def proj(repo):
    for fact_id, kind, title in FACTS:
        write_fact(repo, fact_id, kind, title)
    return Project(repo)


def test_the_bundled_model_finds_a_paraphrase(proj):
    r = recall(proj, "a buyer was billed two times for one purchase")
    assert r.mode == "hybrid" and r.warnings == []
    assert r.trace.seeds[0].id == "RISK-2M9Q"
    assert r.trace.seeds[0].hit.vector_rank == 1  # only "for" and "a" in common: the embedding found it
    assert search(proj, "the shop sends mails from a queue job", limit=1).results[0].id == "DEC-7KAM"


def test_with_the_model_folder_gone_recall_answers_in_full_text_mode(proj, tmp_path):
    import shutil

    from stele.index.encoder import BUNDLED_DIR

    folder = tmp_path / "my-model"
    shutil.copytree(BUNDLED_DIR, folder)
    cfg = proj.root / ".stele/config.yaml"
    cfg.write_text(cfg.read_text().replace("model: bundled", f"model: {folder}"))
    question = "how long until sessions expire for inactive users?"
    assert recall(Project(proj.root), question).mode == "hybrid"
    shutil.rmtree(folder)
    r = recall(Project(proj.root), question)
    assert r.mode == "fts" and r.entries[0].id == "DEC-4F7K"
    assert any("full-text only" in w for w in r.warnings)


def test_a_fresh_recall_loads_no_cli_no_parser_and_no_model2vec(proj):
    import subprocess
    import sys

    recall(proj, "warm the index up before measuring")  # builds it
    recall(Project(proj.root), "and once more, which caches the settings")
    code = ("import sys; from pathlib import Path; from stele.project import Project; "
            "from stele.retrieve.recall import recall; "
            "r = recall(Project(Path(sys.argv[1])), 'a buyer was billed two times for one purchase'); "
            "assert r.mode == 'hybrid', r.mode; "
            "print(sorted(m for m in ('typer', 'rich', 'git', 'model2vec', 'yaml', "
            "'stele.record.frontmatter') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(proj.root)], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
