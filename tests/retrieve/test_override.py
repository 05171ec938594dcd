"""The newer word wins (`retrieve.override`): a session entry replaced by a newer one about the same
subject, and the losing side of a `contradicts` edge, are demoted below what overrode them, labelled,
never silently dropped (a replaced entry whose value changed is a line of the newer one); committed
facts keep their precedence. Real repository, real index, fake embeddings."""
import pytest

from stele.project import Project
from stele.render.agent import recall_text, why_text
from stele.retrieve import override
from stele.retrieve.explain import describe
from stele.retrieve.recall import recall
from stele.session import sessions
from tests.fakes import write_fact


def log(p: Project, text: str, at: str, paths: tuple[str, ...] = ()) -> str:
    return sessions.log(p, "s-notes", "note", text, at=at, paths=paths, durable=False).id


def by_id(r):
    return {e.id: e for e in r.entries}


def test_a_newer_session_entry_that_changes_the_value_carries_the_older_one(repo, fake_model):
    p = Project(repo)
    # the newer entry is written first (file order must not decide) and matches the prompt less well
    new = log(p, "Billing deploy now runs on Node.js 22 after the upgrade", "2026-03-02T10:00:00Z")
    old = log(p, "Billing deploy runs on Node.js 20", "2026-01-10T10:00:00Z")
    other = log(p, "Billing deploy needs the VPN for the release runbook", "2026-01-05T10:00:00Z")
    r = recall(p, "which Node.js does the billing deploy run on")
    e = by_id(r)
    # 20 became 22: the older entry is a line of the newer one, not an entry of its own
    assert new in e and old not in e, why_text(describe(r))
    assert [x[:2] for x in e[new].replaces] == [(old, "Billing deploy runs on Node.js 20")]
    assert e[new].overridden is None
    assert other not in e or e[other].overridden is None
    assert f"replaces {old} (older): Billing deploy runs on Node.js 20" in recall_text(r)
    assert e[new].as_dict()["replaces"] == [{"id": old, "title": "Billing deploy runs on Node.js 20"}]
    why = describe(r)
    assert [o["id"] for o in why["overridden"]] == [old] and why["folded"] == {old: new}
    assert "near-duplicate wording" in why["overridden"][0]["why"] and new in why["overridden"][0]["why"]
    assert f"{old} replaced by {new}" in why_text(why) and f"{old} in {new}" in why_text(why)


def test_a_folded_note_shows_what_it_said_below_its_heading(repo, fake_model):
    p = Project(repo)
    old = log(p, "Original symbol location\ncreateAccessToken was defined in src/auth/token.ts", "2026-01-10T10:00:00Z")
    new = log(p, "Current symbol location\ncreateAccessToken is defined in packages/auth/src/access-token.ts",
              "2026-02-10T10:00:00Z")
    r = recall(p, "where is createAccessToken defined")
    assert old not in by_id(r) and new in by_id(r), why_text(describe(r))
    assert (f"replaces {old} (older): Original symbol location: createAccessToken was defined in "
            "src/auth/token.ts") in recall_text(r)


def test_asked_about_the_past_the_replaced_entry_is_an_entry_again(repo, fake_model):
    p = Project(repo)
    new = log(p, "Billing deploy now runs on Node.js 22 after the upgrade", "2026-03-02T10:00:00Z")
    old = log(p, "Billing deploy runs on Node.js 20", "2026-01-10T10:00:00Z")
    r = recall(p, "which Node.js did the billing deploy run on before the upgrade")
    e = by_id(r)
    assert old in e and new in e, why_text(describe(r))
    assert e[old].overridden is not None and e[old].overridden.by == new and e[new].replaces == []
    order = [x.id for x in r.entries]
    assert order.index(new) < order.index(old) and f"[replaced by {new}]" in recall_text(r)


def test_a_confirmation_changes_no_value_and_stays_an_entry(repo, fake_model):
    """Same subject, same value: a later note confirming the cache limit replaces nothing it should
    hide; it is labelled and demoted only, as before."""
    p = Project(repo)
    old = log(p, "The authoritative cache limit is 96 MB for the image cache", "2026-01-10T10:00:00Z")
    new = log(p, "The team confirmed the image cache limit 96 MB", "2026-02-10T10:00:00Z")
    e = by_id(recall(p, "what is the image cache limit"))
    assert old in e and new in e and e[new].replaces == []
    assert e[old].overridden is not None and e[old].overridden.by == new


def test_a_chain_of_replacements_folds_into_the_newest(repo, fake_model):
    p = Project(repo)
    a = log(p, "Billing deploy runs on Node.js 18", "2026-01-10T10:00:00Z")
    b = log(p, "Billing deploy runs on Node.js 20", "2026-02-10T10:00:00Z")
    c = log(p, "Billing deploy runs on Node.js 22", "2026-03-10T10:00:00Z")
    r = recall(p, "which Node.js does the billing deploy run on")
    e = by_id(r)
    assert list(e) == [c], why_text(describe(r))
    assert sorted(x[0] for x in e[c].replaces) == sorted([a, b])


def test_a_state_reworded_under_the_same_heading_carries_the_older_one(repo, fake_model):
    """No value on either side, the same heading reworded ("January/March/June project state"): the
    newer says what the state is now, the older ones are lines of it."""
    p = Project(repo)
    a = log(p, "January project state\nAtlasBoard reported billing migration is blocked.", "2026-01-10T10:00:00Z")
    b = log(p, "March project state\nAtlasBoard moved the billing migration into validation.", "2026-03-10T10:00:00Z")
    c = log(p, "June project state\nAtlasBoard reported billing migration is ready for rollout.",
            "2026-06-10T10:00:00Z")
    r = recall(p, "what is the latest billing migration project state")
    e = by_id(r)
    assert list(e) == [c], why_text(describe(r))
    assert sorted(x[0] for x in e[c].replaces) == sorted([a, b])


def test_a_failed_approach_reworded_under_the_same_heading_stays_an_entry(repo, fake_model):
    """"Failed approach" then "Working approach": the older is a warning against trying it again, so it
    is labelled and demoted, not folded away."""
    p = Project(repo)
    old = log(p, "Failed implementation approach\nacknowledging messages before the checkpoint flush failed.",
              "2026-01-10T10:00:00Z")
    new = log(p, "Working implementation approach\nflush checkpoints before acknowledging messages.",
              "2026-02-10T10:00:00Z")
    e = by_id(recall(p, "which implementation approach for acknowledging messages and the checkpoint flush"))
    assert old in e and new in e and e[new].replaces == []
    assert e[old].overridden is not None and e[old].overridden.by == new


@pytest.mark.parametrize(("old", "new", "revised"), [
    ("Deploy on Node.js 20", "Deploy on Node.js 22", True),  # a changed value
    ("Initial delivery state\nbilling migration is blocked", "Current delivery state\nbilling migration is ready",
     True),  # the same heading, prose only
    ("Deploy schedule\nbilling exports run nightly", "Deploy schedule now\nbilling exports run hourly", True),
    ("Billing exports run nightly", "Billing exports now run hourly", False),  # prose, no heading: labelled
    ("Current configuration value\nThe authoritative configuration is port 4310",
     "Current value confirmed\nThe team confirmed port 4310", False),  # a confirmation states the value again
    ("Failed implementation approach\nacking before the flush failed",
     "Working implementation approach\nflush before acking", False),  # a warning
    ("First workflow prerequisite\nenable WAL before parallel read tests",
     "Second workflow prerequisite\nuse the environment prerequisite", False),  # siblings
    ("Temporary debugging hypothesis\nThe team temporarily suspected a network timeout.",
     "Hypothesis refuted\nTracing disproved the network-timeout hypothesis.", True),  # refuted
    ("Temporary debugging hypothesis\nThe team temporarily suspected a network timeout.",
     "Hypothesis confirmed\nTracing confirmed the network-timeout hypothesis.", False),  # no refutation
    ("Billing exports run nightly", "Ruled out the flaky runner for the search tests", False),  # another subject
])
def test_revised(old, new, revised):
    assert override.revised(old, new) is revised


@pytest.mark.parametrize(("old", "new", "changed"), [
    ("Deploy on Node.js 20", "Deploy on Node.js 22", True),
    ("createAccessToken is in src/auth/token.ts", "createAccessToken is in packages/auth/src/token.ts", True),
    ("The old workflow used npm test -- --runInBand", "Run npm test -- --maxWorkers=1", True),
    ("AtlasBoard uses a single Express service", "AtlasBoard now uses a modular Fastify service", True),
    ("The cache limit is 96 MB", "The team confirmed cache limit 96 MB", False),  # a confirmation
    ("AtlasBoard uses a single Express service",
     "The single Express service makes isolated deployment difficult", False),  # an elaboration
    ("The team approved moving createAccessToken", "createAccessToken is in packages/auth/src/token.ts",
     False),  # only adds a value
    ("Billing exports run nightly", "Billing exports now run hourly", False),  # prose: labelled only
])
def test_changed_value(old, new, changed):
    assert override.changed_value(old, new) is changed


def test_two_entries_logged_in_the_same_second_go_by_their_ids(repo, fake_model):
    """Times are whole seconds; entry ids are ULIDs (milliseconds): the later of the two replaces the
    other every time (it used to depend on whether the two writes straddled a second)."""
    p = Project(repo)
    first = log(p, "Billing deploy runs on Node.js 20", "2026-01-10T10:00:00Z")
    second = log(p, "Billing deploy now runs on Node.js 22 after the upgrade", "2026-01-10T10:00:00Z")
    assert first < second
    e = by_id(recall(p, "which Node.js does the billing deploy run on"))
    assert first not in e and [x[0] for x in e[second].replaces] == [first]
    assert e[second].overridden is None


def test_a_session_entry_never_replaces_a_committed_fact(repo, fake_model):
    write_fact(repo, "DEC-NQDE", "decision", "Billing deploy runs on Node.js 20")
    p = Project(repo)
    new = log(p, "Billing deploy runs on Node.js 22", "2026-03-02T10:00:00Z")
    r = recall(p, "which Node.js does the billing deploy run on")
    order = [e.id for e in r.entries]
    assert order[0] == "DEC-NQDE" and by_id(r)["DEC-NQDE"].overridden is None, order
    assert new not in by_id(r) or by_id(r)[new].overridden is None


def test_the_same_anchor_is_the_same_subject(repo, fake_model):
    p = Project(repo)
    (repo / "src").mkdir()
    (repo / "src" / "limiter.py").write_text("x = 1\n")
    old = log(p, "Rate limiter burst size is 50 tokens per client", "2026-01-10T10:00:00Z", ("src/limiter.py",))
    new = log(p, "Raised the limiter burst after the load test", "2026-02-10T10:00:00Z", ("src/limiter.py",))
    r = recall(p, "what burst size does the rate limiter allow per client")
    e = by_id(r)
    assert old in e and new in e
    assert e[old].overridden is not None and e[old].overridden.by == new
    assert "same anchor src/limiter.py" in e[old].overridden.why


def test_a_contradiction_demotes_the_older_side_or_the_one_contradicted(repo, fake_model):
    write_fact(repo, "DEC-PQRT", "decision", "The API listens on port 3000 in staging and production")
    write_fact(repo, "DEC-PRT2", "decision", "The API port is 4310", links={"contradicts": ["DEC-PQRT"]})
    r = recall(Project(repo), "which port does the API listen on in staging")
    order = [e.id for e in r.entries]
    assert "DEC-PQRT" in order and order.index("DEC-PRT2") < order.index("DEC-PQRT"), order
    lost = by_id(r)["DEC-PQRT"].overridden
    assert lost is not None and lost.by == "DEC-PRT2" and lost.rule == "contradicted"
    assert "[contradicted by DEC-PRT2]" in recall_text(r)


@pytest.mark.parametrize(("old", "new", "same"), [
    ("Deploy on Node.js 20", "Deploy on Node.js 22", True),
    ("createAccessToken lives in src/auth/token.ts", "moved createAccessToken to packages/auth", True),
    ("Deploy on Node.js 20", "Deploy on Node.js 20", False),  # a repeat, not a replacement
    ("The cache warms on start", "Billing exports run nightly at two", False),
    # notes with a heading line: the same heading reworded, and a word in common in their texts
    ("Old test command\nThe old workflow used npm test -- --runInBand", "Current test command\nRun npm test", True),
    ("First workflow prerequisite\nset SOURCE_DATE_EPOCH for release builds",
     "Second workflow prerequisite\nUse cargo test after the environment prerequisite", False),  # siblings
])
def test_same_subject(old, new, same):
    assert (override.same_subject(old, new, [], []) is not None) is same


def test_a_superseded_failed_approach_still_warns_a_superseded_decision_does_not(repo, fake_model):
    write_fact(repo, "LSN-QKD1", "lesson", "Running the SQLite migrations concurrently failed with lock errors",
               status="superseded")
    write_fact(repo, "DEC-NEW1", "decision", "Serialize the SQLite migrations inside one transaction",
               links={"supersedes": ["LSN-QKD1"]})
    write_fact(repo, "DEC-QKD2", "decision", "Run the SQLite migrations concurrently on deploy", status="superseded")
    r = recall(Project(repo), "can we run the SQLite migrations concurrently to speed up the deploy")
    e = by_id(r)
    assert "LSN-QKD1" in e and "DEC-QKD2" not in e, list(e)
    warn = e["LSN-QKD1"].overridden
    assert warn is not None and warn.by == "DEC-NEW1" and "tried, failed, replaced by DEC-NEW1" in warn.why
    order = [x.id for x in r.entries]
    assert "DEC-NEW1" not in order or order.index("DEC-NEW1") < order.index("LSN-QKD1")
    assert "[tried, failed: superseded by DEC-NEW1]" in recall_text(r)


def test_a_risk_that_contradicts_a_rule_demotes_nothing(repo, fake_model):
    """The shop's RISK-59YM case: a risk that `contradicts` a constraint says the rule is not holding
    somewhere; the rule still stands and must not sink under the walk's cut."""
    write_fact(repo, "CON-MNEY", "constraint", "Money amounts are integers in minor units", created="2025-10-02")
    write_fact(repo, "RISK-F7TS", "risk", "The legacy quote endpoint sends money amounts as floats",
               links={"contradicts": ["CON-MNEY"]}, created="2026-09-18")
    r = recall(Project(repo), "are money amounts integers in minor units")
    assert "CON-MNEY" in by_id(r) and by_id(r)["CON-MNEY"].overridden is None


def test_search_sessions_includes_the_log_labelled_with_replacement(repo, fake_model):
    import json

    from tests.helpers import invoke

    p = Project(repo)
    new = log(p, "Billing deploy now runs on Node.js 22 after the upgrade", "2026-03-02T10:00:00Z")
    old = log(p, "Billing deploy runs on Node.js 20", "2026-01-10T10:00:00Z")
    write_fact(repo, "DEC-NQDE", "decision", "Billing deploy pipeline is owned by the platform team")
    plain = json.loads(invoke("search", "billing deploy Node.js", "--json").out)["results"]
    assert [h["id"] for h in plain] == ["DEC-NQDE"]
    got = json.loads(invoke("search", "billing deploy Node.js", "--sessions", "--json").out)["results"]
    ids = [h["id"] for h in got]
    assert {old, new, "DEC-NQDE"} <= set(ids) and ids.index(new) < ids.index(old), got
    by = {h["id"]: h for h in got}
    assert by[new]["source"] == "session" and "source" not in by["DEC-NQDE"]
    assert by[old]["replaced_by"] == new and "replaced_by" not in by[new]
    text = invoke("search", "billing deploy Node.js", "--sessions").out
    assert "SESSION note" in text and f"[replaced by {new}]" in text


def test_a_superseded_fact_that_matches_brings_the_one_that_replaced_it(repo, fake_model):
    """The prompt's words are the old fact's: it stays withheld, and the fact in force that superseded
    it (through a chain) stands in for it at its match's strength; asked about the past, it is itself."""
    write_fact(repo, "DEC-MAR1", "decision", "March project state: the billing import moved into validation",
               status="superseded")
    write_fact(repo, "DEC-APR1", "decision", "April project state: the billing import waits on legal review",
               status="superseded", links={"supersedes": ["DEC-MAR1"]})
    write_fact(repo, "DEC-JNE1", "decision", "June project state: insurance export is ready for rollout",
               links={"supersedes": ["DEC-APR1"]})
    write_fact(repo, "DEC-XTHR", "decision", "Exports are signed with the release key")
    r = recall(Project(repo), "which state supersedes the March update on the billing import validation")
    e = by_id(r)
    assert "DEC-JNE1" in e and not {"DEC-MAR1", "DEC-APR1"} & set(e), why_text(describe(r))
    why = describe(r)
    assert any(f["id"] == "DEC-MAR1" and "DEC-JNE1, which replaced it, stands in" in f["why"]
               for f in why["filtered"]), why["filtered"]
    assert any(c["id"] == "DEC-JNE1" and c["why"].startswith("a seed: it stands in for DEC-MAR1")
               for c in why["candidates"]), why["candidates"]
    past = by_id(recall(Project(repo), "what was the March project state before we replaced it"))
    assert "DEC-MAR1" in past


def test_a_leading_superseded_fact_brings_its_successor_from_deep_in_the_search(repo):
    """A superseded fact that clearly leads a long prompt stands in for its successor when the
    successor is anywhere in what the search drew, not only among the fused top hits: the new
    decision is often worded in its own terms (the config file that replaced the flag) and shares a
    word or two with a prompt phrased around the old one. Before, go-sdk `long-strict` got nothing:
    DEC-BBV0 led at coverage 0.64 and its successor DEC-XVPT stood 24th."""
    write_fact(repo, "DEC-A0A1", "decision", "Strict stores stay in the querier's active set even when their "
               "health check fails", status="superseded",
               body="A statically configured store that fails its health check is kept in the querier's active "
                    "set, so a query errors instead of silently returning partial results.")
    write_fact(repo, "DEC-B0B2", "decision", "Peers are listed in one YAML file; the legacy flags are gone",
               body="Each store peer entry has an address and a strict flag; the file is reloaded every five "
                    "minutes.", links={"supersedes": ["DEC-A0A1"]})
    parts = ["query results cache", "sidecar uploads", "compactor retention", "store gateway index cache",
             "ruler evaluation", "receive hashring", "querier deduplication", "downsampling", "bucket inspection",
             "query frontend splitting", "label matchers", "tenant limits", "object storage retries", "block upload",
             "series limits", "exemplars", "query timeouts", "health check probes", "partial response strategy",
             "store set discovery", "chunk pool", "replica labels"]
    for n, part in enumerate(parts + [f"{p} replica" for p in parts]):  # each nearer the prompt than DEC-B0B2
        write_fact(repo, f"DEC-F{n:03d}", "decision", f"The {part} has its own cache",
                   body=f"The {part} keeps a small cache of query results for each store in memory.")
    r = recall(Project(repo), "When a sidecar flaps, the querier quietly drops it from the store set and the cache "
               "ends up holding results with a hole in them. Is there a way to keep a store in the set even when "
               "its health check fails, so we get an error instead?")
    assert list(by_id(r))[:1] == ["DEC-B0B2"], why_text(describe(r))


def test_a_matched_note_brings_the_newer_note_that_revised_it(repo, fake_model):
    """The prompt matches only the old note; the note that revised it later (same heading, other words)
    is brought in its place, and the old one is a line of it (`recall.note_seeds`)."""
    p = Project(repo)
    old = log(p, "Audit freeze state\nPayments exports are paused during the PCI audit window.", "2026-01-10T10:00:00Z")
    new = log(p, "Audit freeze state\nPayments exports resumed.", "2026-02-10T10:00:00Z")
    r = recall(p, "why are exports paused during the PCI window")
    e = by_id(r)
    assert list(e) == [new], why_text(describe(r))
    assert [x[0] for x in e[new].replaces] == [old]


def test_a_later_note_repeating_the_old_value_is_not_brought(repo, fake_model):
    """A later note that only repeats the old value replaced nothing: it does not stand in."""
    p = Project(repo)
    old = log(p, "Cached configuration value\nA cached report lists cache limit 64 MB.", "2026-01-10T10:00:00Z")
    stale = log(p, "Stale report repeated\nA stale diagnostic still prints cache limit 64 MB.", "2026-02-10T10:00:00Z")
    r = recall(p, "which value does the configuration list")
    assert old in by_id(r) and stale not in by_id(r), why_text(describe(r))


def test_a_refuted_hypothesis_is_a_line_of_the_note_that_refuted_it(repo, fake_model):
    """"Tracing disproved the network-timeout hypothesis": the older note is not true any more, and is
    shown inside the refutation, not beside it (nor before it)."""
    p = Project(repo)
    old = log(p, "Temporary debugging hypothesis\nThe team temporarily suspected a network timeout in the sync client.",
              "2026-01-10T10:00:00Z")
    new = log(p, "Hypothesis refuted\nTracing disproved the network-timeout hypothesis.", "2026-01-11T10:00:00Z")
    r = recall(p, "was the temporary network timeout hypothesis for the sync client confirmed")
    e = by_id(r)
    assert list(e) == [new], why_text(describe(r))
    assert [x[0] for x in e[new].replaces] == [old]
    assert "says the older one was wrong" in describe(r)["overridden"][0]["why"]


def test_a_matched_note_brings_the_earlier_note_whose_phrase_it_repeats(repo, fake_model):
    """"The resumed work completed using flush checkpoints before acknowledging messages" speaks of the
    earlier decision to flush checkpoints before acknowledging messages: a question about the outcome
    gets both (`override.echoes`, `recall.note_seeds`); a note sharing only a word or two does not come."""
    p = Project(repo)
    decision = log(p, "Decision before interruption\nHarborSync chose to flush checkpoints before acknowledging "
                   "messages.", "2026-01-10T10:00:00Z")
    other = log(p, "Queue tuning\nThe consumer flushes the queue in batches of messages.", "2026-01-11T10:00:00Z")
    outcome = log(p, "Recovered outcome\nThe resumed work completed using flush checkpoints before acknowledging "
                  "messages.", "2026-01-13T10:00:00Z")
    r = recall(p, "how did the resumed work complete after the recovery")
    e = by_id(r)
    assert outcome in e and decision in e and other not in e, why_text(describe(r))
    order = [x.id for x in r.entries]
    assert order.index(outcome) < order.index(decision)


@pytest.mark.parametrize(("earlier", "later", "echoes"), [
    ("chose to flush checkpoints before acknowledging messages",
     "completed using flush checkpoints before acknowledging messages", True),
    ("The old workflow used npm test -- --runInBand", "Run npm test -- --maxWorkers=1", False),
    ("the billing export job runs nightly", "the billing export job failed", False),  # three words only
])
def test_echoes(earlier, later, echoes):
    assert override.echoes(earlier, later) is echoes
