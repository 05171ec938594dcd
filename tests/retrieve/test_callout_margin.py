"""Risk callouts only from seeds that pass with margin (issue 26, item 3): a seed that passed by coverage
alone while a strong full-text share skipped the embeddings warns only when they, asked, agree; a risk
reached causally only from seeds that passed by their cosine warns only when another seed reaches it."""
from stele.project import Project
from stele.retrieve.recall import recall
from tests.fakes import write_fact


def _record(repo):
    write_fact(repo, "DEC-0001", "decision", "Corrupt SQLite databases are detected when opened",
               body="A database that fails its integrity check when it is opened is deleted and recreated; "
                    "the history and bookmarks it held are synced back from the server.")
    write_fact(repo, "RISK-0002", "risk", "Treating a transient SQLite failure as corruption deletes good data",
               body="A disk I/O error or a locked database when opening the history store is not corruption: "
                    "deleting it loses the user's history that was never synced.",
               links={"caused-by": ["DEC-0001"]})
    write_fact(repo, "INS-0003", "instruction", "Schema migrations bump PRAGMA user_version",
               body="Every migration of a component database bumps user_version in the same transaction.")
    write_fact(repo, "CON-0004", "constraint", "The first connection to a component database runs migrations",
               body="Readers open their connections only after the writer has migrated the schema.")


def test_a_coverage_pass_the_embeddings_contradict_raises_no_risk(repo):
    """"history" and "openings" (stemmed to `open`) cover the risk past the floor; the prompt is about
    chess. Before: a RISK callout, the embeddings never asked. After: asked, they contradict it."""
    _record(repo)
    r = recall(Project(repo), "what is the history of chess openings in a few paragraphs?")
    risk = next(h for h in r.trace.candidates if h.id == "RISK-0002")
    assert risk.cosine is None and risk.coverage >= 0.35  # the case: a coverage pass, embeddings skipped
    assert r.risks == [], [x.id for x in r.risks]
    assert "contradict" in r.trace.unconfirmed["RISK-0002"]
    assert "RISK-0002" in [x.id for x in r.entries]  # still an answer: only the warning is withheld
    from stele.retrieve.explain import describe

    why = {x["id"]: x["why"] for x in describe(r)["risks_not_lifted"]}
    assert "embeddings" in why["RISK-0002"] and "contradict" in why["RISK-0002"], why


def test_a_risk_the_prompt_is_about_still_warns(repo):
    _record(repo)
    r = recall(Project(repo), "is it safe to delete the history database when opening it fails with a disk I/O error?")
    assert "RISK-0002" in [x.id for x in r.risks], ([x.id for x in r.risks], [x.id for x in r.entries])


def _drive_record(repo):
    write_fact(repo, "DEC-0011", "decision", "Copy the files off a corrupted USB stick before formatting it",
               body="When a USB stick reports corruption, image it or copy the files off first; formatting "
                    "destroys what recovery tools could still read.")
    write_fact(repo, "RISK-0012", "risk", "Release builds ship without debug symbols",
               body="The release pipeline strips symbols, so crash reports from production cannot be symbolicated.",
               links={"caused-by": ["DEC-0011"]})
    write_fact(repo, "INS-0013", "instruction", "Schema migrations bump PRAGMA user_version",
               body="Every migration of a component database bumps user_version in the same transaction.")
    write_fact(repo, "CON-0014", "constraint", "Invoices are numbered per tenant and per year")


def test_a_risk_reached_only_from_a_cosine_seed_is_listed_not_called_out(repo):
    """The static embeddings put a prompt near a fact of its domain with no word of note in common
    (DEC-0011 passes by its cosine alone); the risk it causes is reached from nothing else. It stays an
    answer, without the warning."""
    _drive_record(repo)
    r = recall(Project(repo), "my flash drive is broken and the computer wants to erase it, can I save my images "
                              "before that?")
    dec = next(h for h in r.trace.candidates if h.id == "DEC-0011")
    assert dec.coverage < 0.35 and dec.cosine is not None and dec.cosine >= 0.6  # the case: a cosine pass
    assert r.risks == [], [x.id for x in r.risks]
    assert "RISK-0012" in r.trace.withheld and "RISK-0012" in [x.id for x in r.entries]
    from stele.retrieve.explain import describe

    why = {x["id"]: x["why"] for x in describe(r)["risks_not_lifted"]}
    assert "cosine" in why["RISK-0012"], why


def test_a_risk_reached_from_a_seed_the_prompts_words_match_is_called_out(repo):
    _drive_record(repo)
    r = recall(Project(repo), "should I copy the files off a corrupted USB stick before formatting it?")
    assert [x.id for x in r.risks] == ["RISK-0012"] and r.trace.withheld == {}
