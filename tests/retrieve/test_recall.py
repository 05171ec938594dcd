"""recall() end to end on a real temporary repository, with the fake embedding model."""
import json

import pytest

from stele.project import Project
from stele.retrieve.recall import recall
from tests.fakes import write_fact

PROMPT = "how many times do we retry a failed card charge before giving up?"


@pytest.fixture
def shop(repo, fake_model):
    write_fact(repo, "DEC-AGHA", "decision", "Card charge retries back off exponentially, at most 3 attempts",
               "We retry a failed charge with jittered backoff.",
               links={"caused-by": ["LSN-WGV9", "RISK-V34N"], "relates-to": ["RISK-7C9Y"]},
               anchors=["src/pay/retry.py::RetryPolicy"])
    write_fact(repo, "LSN-WGV9", "lesson", "Fixed one-second ticks kept the provider saturated",
               "stripe.error.APIConnectionError flooded the logs for 38 minutes.")
    write_fact(repo, "RISK-V34N", "risk", "Synchronised bursts prolong an outage")
    write_fact(repo, "RISK-7C9Y", "risk", "Networks fine merchants for re-submitting declines")
    write_fact(repo, "DEC-AK5X", "decision", "Retry failed charges 5 times, fixed delay", "Old retry policy.",
               status="superseded")
    write_fact(repo, "TASK-8592", "task", "Send an idempotency key header from the web client",
               links={"blocks": ["EPIC-WTDF"]})
    write_fact(repo, "EPIC-WTDF", "epic", "Exactly-once payment capture")
    write_fact(repo, "FYI-OLD", "fyi", "Retry charge settings were tuned in 2024", expires="2026-01-01")
    (repo / ".stele" / "wal").mkdir(parents=True, exist_ok=True)
    (repo / ".stele" / "wal" / "s1.jsonl").write_text(json.dumps(
        {"v": 1, "id": "S-01JFZS31V0ZJ1D2PYVE21AVN5S", "ts": "2026-11-27T09:14:40Z", "session": "s1",
         "type": "decision", "text": "Retry a failed card charge 5 times during the sale",
         "task": "TASK-8592"}) + "\n")
    return Project(repo)


def ids(r):
    return [e.id for e in r.entries]


def test_the_json_contract_is_exact(shop):
    data = recall(shop, PROMPT).as_dict()
    assert list(data) == ["mode", "entries", "risks", "elapsed_ms", "partial"]
    assert data["mode"] == "hybrid" and data["partial"] is False and isinstance(data["elapsed_ms"], int)
    # a session entry adds who wrote it: `agent`, and `host` (set for a teammate's pulled entry only)
    # `drift`: null, or how the anchored code changed since the fact was verified (tests/retrieve/test_fresh.py)
    assert all(list(e) == ["id", "kind", "title", "score", "source", "via", "drift"] for e in data["entries"]
               if e["source"] == "committed")
    sessions = [e for e in data["entries"] if e["source"] == "session"]
    assert sessions and all(list(e) == ["id", "kind", "title", "score", "source", "via", "drift", "agent", "host"]
                            and e["host"] is None for e in sessions)
    assert all(list(r) == ["id", "title", "via", "drift"] for r in data["risks"])
    first = data["entries"][0]
    assert first["id"] == "DEC-AGHA" and first["via"] is None and first["source"] == "committed"
    assert data["risks"] == [{"id": "RISK-V34N", "title": "Synchronised bursts prolong an outage",
                              "via": {"from": "DEC-AGHA", "rel": "caused-by", "hops": 1}, "drift": None}]


def test_walk_callout_lifecycle_and_session_order(shop):
    r = recall(shop, PROMPT)
    assert "LSN-WGV9" in ids(r)
    assert "RISK-7C9Y" in ids(r) and "RISK-7C9Y" not in [x.id for x in r.risks]  # relates-to: an entry
    assert not {"DEC-AK5X", "FYI-OLD"} & set(ids(r))                               # superseded, expired
    assert ids(r)[-1] == "S-01JFZS31V0ZJ1D2PYVE21AVN5S" and r.entries[-1].source == "session"


def test_short_prompts_inject_nothing_and_ids_bypass_the_gate(shop):
    assert recall(shop, "fix retries").as_dict()["entries"] == []
    assert recall(shop, "fix retries").mode == "skipped"
    r = recall(shop, "EPIC-WTDF?")
    assert r.mode == "identifier" and ids(r)[:2] == ["EPIC-WTDF", "TASK-8592"]
    assert r.entries[0].body == "Exactly-once payment capture"  # returned whole
    assert ids(recall(shop, "dec-ak5x"))[0] == "DEC-AK5X"         # named: shown even though superseded


def test_edited_files_are_anchor_queries(shop):
    r = recall(shop, "", files=["src/pay/retry.py"])
    assert ids(r)[0] == "DEC-AGHA" and [x.id for x in r.risks] == ["RISK-V34N"]
    assert recall(shop, "", files=["src/other.py"]).entries == []


def test_exclude_skips_what_the_session_was_already_shown(shop):
    r = recall(shop, PROMPT, exclude={"DEC-AGHA", "RISK-V34N"})
    assert "DEC-AGHA" not in ids(r) and r.risks == []
    assert "LSN-WGV9" in ids(r)  # still walked through


def test_the_index_follows_edits_without_a_rebuild(shop):
    question = "who owns the refund reconciliation job?"
    recall(shop, question)
    write_fact(shop.root, "TASK-8592", "task", "Refund reconciliation job is owned by team Ledger")
    r = recall(shop, question)
    assert r.trace.seeds[0].id == "TASK-8592" and "team Ledger" in r.entries[ids(r).index("TASK-8592")].title
    (shop.root / "docs/memory/tasks/TASK-8592.md").unlink()
    assert "TASK-8592" not in ids(recall(shop, question))


def test_a_zero_walk_budget_returns_the_seeds_marked_partial(shop):
    cfg = shop.root / ".stele/config.yaml"
    cfg.write_text(cfg.read_text().replace("walk_budget_ms: 6000", "walk_budget_ms: 0"))
    r = recall(Project(shop.root), PROMPT)
    assert r.partial and ids(r)[0] == "DEC-AGHA" and r.risks == []
    assert all(e.via is None for e in r.entries)  # nothing walked


def test_without_a_model_recall_degrades_to_full_text(shop, monkeypatch):
    from stele.index import vectors
    from stele.index.encoder import EncoderUnavailable

    assert recall(shop, PROMPT).mode == "hybrid"

    def gone(project):
        raise EncoderUnavailable("embedding model folder /x does not exist")

    monkeypatch.setattr(vectors, "model_ref", gone)
    r = recall(shop, PROMPT)
    assert r.mode == "fts" and ids(r)[0] == "DEC-AGHA"
    assert any("full-text only" in w for w in r.warnings)


def test_a_model_that_breaks_after_indexing_degrades_the_query_only(shop, monkeypatch):
    from stele.index import vectors
    from stele.index.encoder import EncoderUnavailable
    from stele.retrieve import seeds

    recall(shop, PROMPT)
    seeds._ENCODERS.clear()

    def broken(ref, bulk, index_dir=None):
        raise EncoderUnavailable("embedding model /x is corrupt")

    monkeypatch.setattr(vectors, "load_encoder", broken)
    r = recall(shop, "something nobody ever wrote down anywhere")  # no full-text match: asks the model
    # nothing passed the floors, so the mode says that; the warning says the model is broken
    assert r.mode == "no_match" and any("full-text only" in w and "corrupt" in w for w in r.warnings)


def test_without_any_index_it_falls_back_to_recent_session_entries(shop, monkeypatch):
    from stele.index import update as update_mod

    def fail(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(update_mod, "update", fail)
    r = recall(shop, PROMPT)
    assert r.mode == "prior_context" and ids(r) == ["S-01JFZS31V0ZJ1D2PYVE21AVN5S"]
    assert r.entries[0].score == 0.0 and any("disk full" in w for w in r.warnings)


def test_a_broken_config_is_one_warning_not_an_exception(shop):
    (shop.root / ".stele/config.yaml").write_text("retrieval: [oops\n")
    r = recall(Project(shop.root), PROMPT)
    assert r.mode == "prior_context" and "config.yaml" in r.warnings[0]


def test_hits_far_weaker_than_the_best_are_not_seeds():
    from types import SimpleNamespace as NS

    from stele.retrieve.recall import text_seeds
    from stele.retrieve.seeds import Hit

    hits = [Hit("LSN-AAAA"), Hit("DEC-BBBB"), Hit("S-01JAAAAAAAAAAAAAAAAAAAAAAA"), Hit("CON-CCCC")]
    for h, strength in zip(hits, (1.0, 0.5, 0.4, 0.05), strict=True):
        h.strength = strength
    nodes = {h.id: NS(source="session" if h.id.startswith("S-") else "committed") for h in hits}
    assert [x.id for x in text_seeds(hits, nodes, 10, 0.15)] == ["LSN-AAAA", "DEC-BBBB",
                                                                "S-01JAAAAAAAAAAAAAAAAAAAAAAA"]
    assert [x.id for x in text_seeds(hits, nodes, 1, 0.0)] == ["LSN-AAAA"]  # a session hit below the top 1
    assert len(text_seeds(hits, nodes, 10, 0.0)) == 4


@pytest.mark.parametrize("notes", [0, 100])
def test_a_hundred_matching_session_notes_never_take_a_committed_facts_seat(repo, fake_model, notes):
    """One decision and many session notes on its topic, each note a closer match than the decision:
    the fused window held only notes and recall answered without the decision. Candidates are drawn
    per source."""
    from stele.index.build import open_index
    from stele.plain import replace
    from stele.retrieve.seeds import hybrid
    from stele.retrieve.settings import Settings
    from stele.session import sessions

    write_fact(repo, "DEC-PG4K", "decision", "Job leasing uses Postgres advisory locks, never Redis",
               "Leases are pg_try_advisory_lock on the job id; a crashed worker's lock is freed with its "
               "connection, which Redis keys with a TTL could not promise during the 2025 outage.")
    p = Project(repo)
    for n in range(notes):
        sessions.log(p, "s-notes", "note", f"job leasing advisory locks redis {n}", durable=False)
    # strong_match out of reach: the embeddings are consulted even for this full-text match
    settings = replace(Settings.defaults(), strong_match=1e9)
    with open_index(p) as index:
        hits = hybrid(index, "job leasing advisory locks redis", settings, 20).hits
    ids_ = [h.id for h in hits]
    assert "DEC-PG4K" in ids_, ids_
    assert sum(i.startswith("S-") for i in ids_) == min(notes, 20)
    # drawn per source on the vector side too: the decision is judged with its cosine
    assert next(h for h in hits if h.id == "DEC-PG4K").cosine is not None


def test_a_support_seed_brings_itself_not_its_neighbours(repo, fake_model):
    """Only a seed that reached a floor on its own starts the walk: a hit that merely supports it is
    shown for what it matched, and what it links to (two steps from the prompt's evidence) is not.
    Its edges to other seeds still count: two linked matches back each other up."""
    write_fact(repo, "DEC-4DGR", "decision", "Ledger reconciliation batch rounds currency amounts per line",
               "The nightly ledger reconciliation batch rounds each currency amount per line, half to even.")
    write_fact(repo, "CON-C9RR", "constraint", "Currency amounts are stored as integer minor units",
               "Every currency amount is an integer of minor units.",
               links={"relates-to": ["FYI-7FFS", "DEC-4DGR"]})
    write_fact(repo, "FYI-7FFS", "fyi", "The office moved to the third floor in March")
    for n in range(6):
        write_fact(repo, f"NOTE-{n:04d}", "note", f"Unrelated filler note number {n} about gardening tools")
    r = recall(Project(repo), "how does the ledger reconciliation batch round currency amounts?")
    seeds = {x.id: x for x in r.trace.seeds}
    assert "CON-C9RR" in seeds and "DEC-4DGR" in seeds, ids(r)
    from stele.retrieve.seeds import passed
    assert passed(seeds["CON-C9RR"].hit, r.trace.settings) is None  # support, not a match of its own
    assert "FYI-7FFS" not in r.trace.reached and "FYI-7FFS" not in ids(r)
    assert [v.from_id for v in r.trace.reached["DEC-4DGR"]] == ["CON-C9RR"]  # seed to seed still counts


def test_a_bare_file_name_many_anchors_end_with_names_none_of_them(repo, fake_model):
    """`api.py` in a prompt is an anchor query only when it can mean a few files: in a record whose
    anchors hold it in many folders, the prompt has not said which one."""
    for n, app in enumerate(("billing", "catalog", "orders", "search")):
        write_fact(repo, f"CON-{n:04d}", "constraint", f"The {app} app exposes its functions from its own module",
                   anchors=[f"src/{app}/api.py"])
    write_fact(repo, "DEC-0N1Y", "decision", "Schema migrations are generated, never written by hand",
               anchors=["src/db/migrate.py"])
    project = Project(repo)
    r = recall(project, "where should the new helper go, in api.py or next to the model code?")
    assert not [x for x in r.trace.seeds if x.origin == "anchor"], [x.id for x in r.trace.seeds]
    r = recall(project, "is it fine to edit the generated files that migrate.py writes?")
    assert [x.id for x in r.trace.seeds if x.origin == "anchor"] == ["DEC-0N1Y"]
