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


MORE_FACTS = [
    "Payment retries back off exponentially with jitter after a provider outage",
    "Cart reservations expire after fifteen minutes without checkout",
    "Login attempts are rate limited per account and per IP address",
    "Redis failover promotes the replica in the other zone",
    "Seller payouts are reconciled against the ledger every night",
    "Shipping notifications go out through a queue with retries",
    "The primary database has a written failover runbook",
    "Partner API calls wait longer after each failed attempt",
    "Refunds are issued to the original payment method only",
    "Invoices are generated as PDF by a nightly batch job",
    "Feature flags are evaluated on the server, never in the browser",
    "Webhook deliveries carry an idempotency key",
    "Café menus are translated into français and español by the content team",
    "東京 office handles the Japanese storefront support",
]
PARAPHRASES = [
    "our clients got charged two times for one purchase when the shop was busy",
    "what happens to the things a shopper put aside but never paid for?",
    "how do we stop robots from hammering the sign in page with stolen credentials",
    "which machine takes over when the in-memory store goes down at night",
    "the money owed to sellers does not add up at the end of the month",
    "people complain that messages about their parcel arrive far too late",
    "is there a written procedure for when the primary store dies",
    "why does the system wait longer and longer between attempts to reach a partner",
    "can a customer get their money back on a different card?",
    "who looks after the japanese shop's customers",
    "les menus du café sont-ils traduits?",
    "does the browser decide which experimental features a user sees",
]


def test_recall_ranks_as_the_numpy_and_tokenizers_path_did(proj, monkeypatch):
    """The hook's query path (pure WordPiece, pure-Python mean, simsimd re-rank) against the path it
    replaced, rebuilt here from the libraries: tokenizers + numpy for the query (LeanEncoder) and an
    exact numpy cosine over every float32 row. For every paraphrase the vector ranking of all facts is
    the same, with the same cosines, and so is its recall: the same entries in the same order with the
    same scores, the same candidates with the same vector ranks."""
    import numpy as np

    from stele.index import vectors
    from stele.index.encoder import LeanEncoder
    from stele.index.query import QueryEncoder
    from stele.retrieve import seeds

    for n, title in enumerate(MORE_FACTS):
        write_fact(proj.root, f"DEC-{n:04d}", "decision", title)
    cfg = proj.root / ".stele/config.yaml"  # the ranking is under test here, not the relevance floor
    cfg.write_text(cfg.read_text().replace("vector_floor: 0.6", "vector_floor: 0.3"))
    proj = Project(proj.root)

    from stele.index.build import open_index

    def run():
        seeds._ENCODERS.clear()
        out = []
        with open_index(proj) as index:
            for q in PARAPHRASES:
                hits, error = seeds.vector_hits(index, q, seeds.POOL)
                assert error is None and len(hits) == len(FACTS) + len(MORE_FACTS)
                out.append([(i, round(c, 12)) for i, c in hits])
        for q in PARAPHRASES:
            r = recall(proj, q)
            out.append((r.mode, [(e.id, round(e.score, 9)) for e in r.entries],
                        [(h.id, h.vector_rank, round(h.cosine or 0, 9), round(h.fused, 12))
                         for h in r.trace.candidates]))
        return out

    now = run()
    assert isinstance(seeds._ENCODERS[next(iter(seeds._ENCODERS))], QueryEncoder)
    recalls = now[len(PARAPHRASES):]
    assert sum(bool(entries) for _, entries, _ in recalls) >= 3  # some find facts past the floors

    def numpy_top_k(matrix, query, k):
        rows = np.frombuffer(matrix.floats[:], dtype=np.float32).reshape(matrix.count, matrix.dim)
        cos = rows.astype(np.float64) @ np.asarray(query, dtype=np.float64)
        order = sorted(range(matrix.count), key=lambda r: (-cos[r], r))[:k]
        return [(r, float(cos[r])) for r in order]

    real_load = vectors.load_encoder
    monkeypatch.setattr(vectors, "load_encoder", lambda ref, bulk, index_dir=None: LeanEncoder(ref.path)
                        if not bulk else real_load(ref, bulk, index_dir))
    monkeypatch.setattr(vectors, "top_k", numpy_top_k)
    before = run()
    assert isinstance(seeds._ENCODERS[next(iter(seeds._ENCODERS))], LeanEncoder)
    assert now == before
