"""recall, search, why, rebuild through the real entry point."""
import json

import pytest

from tests.factfiles import backdate
from tests.fakes import write_fact
from tests.helpers import invoke


@pytest.fixture
def record(repo, fake_model):
    write_fact(repo, "DEC-AGHA", "decision", "Payment retries back off exponentially, at most 3 attempts",
               "Retry a failed charge with jittered backoff.", links={"caused-by": ["RISK-V34N"]},
               anchors=["src/pay/retry.py"])
    write_fact(repo, "RISK-V34N", "risk", "Synchronised bursts prolong an outage", "Waves keep it saturated.")
    write_fact(repo, "DEC-AK5X", "decision", "Retry failed payments 5 times with a fixed delay",
               status="superseded")
    write_fact(repo, "DEC-NEWW", "decision", "Payment retries use the new policy",
               links={"supersedes": ["DEC-AK5X"]})
    return repo


def test_recall_json_is_the_contract(record, resident):
    r = invoke("recall", "--format", "json", "how do payment retries back off after a failure?")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["mode"] == "hybrid" and data["entries"][0]["id"] == "DEC-AGHA"
    assert data["risks"][0] == {"id": "RISK-V34N", "title": "Synchronised bursts prolong an outage",
                                "via": {"from": "DEC-AGHA", "rel": "caused-by", "hops": 1}, "drift": None}
    assert all("drift" in e for e in data["entries"])  # null, or how the anchored code changed since verified
    by_file = json.loads(invoke("recall", "--json", "--file", "src/pay/retry.py").out)
    assert by_file["entries"][0]["id"] == "DEC-AGHA"


def test_recall_text_is_what_an_agent_reads(record, resident):
    r = invoke("recall", "how do payment retries back off after a failure?")
    assert r.code == 0 and r.err == ""
    assert ("! RISK on your path: RISK-V34N  Synchronised bursts prolong an outage  (via caused-by DEC-AGHA)"
            in r.out)
    assert "DECISION DEC-AGHA  Payment retries back off" in r.out
    assert "starting set" in r.out and "not everything" in r.out
    assert "\x1b[" not in r.out
    assert invoke("recall", "ok").out == "nothing to recall (mode: skipped)\n"


def test_search_is_plain_hybrid_search_with_filters(record, resident):
    data = json.loads(invoke("search", "--json", "payment retries").out)
    assert data["mode"] == "hybrid" and list(data["results"][0]) == ["id", "kind", "title", "score"]
    found = [x["id"] for x in data["results"]]
    assert "DEC-AK5X" not in found and "RISK-V34N" not in json.dumps(
        invoke("search", "--json", "--kind", "decision", "payment retries").out)
    everything = json.loads(invoke("search", "--json", "--all", "retry payments fixed").out)["results"]
    everything = [x["id"] for x in everything]
    assert everything.index("DEC-AK5X") > everything.index("DEC-NEWW")  # superseded ranks below its successor
    assert len(json.loads(invoke("search", "--json", "--limit", "1", "payment").out)["results"]) == 1
    assert invoke("search", "--kind", "nope", "x").code == 2


def test_why_explains_seeds_walk_scores_and_callout(record):
    r = invoke("why", "how do payment retries back off after a failure?")
    assert r.code == 0, r.err
    assert "seeds:" in r.out and "DEC-AGHA" in r.out and "bm25 #1" in r.out
    assert "lifted RISK-V34N" in r.out and "kind +3" in r.out
    data = json.loads(invoke("why", "--json", "how do payment retries back off after a failure?").out)
    assert data["risks"][0]["id"] == "RISK-V34N" and data["seeds"][0]["origin"] == "text"


def test_rebuild_reports_what_it_indexed(record):
    r = invoke("rebuild")
    assert r.code == 0 and "indexed 4 items (4 embedded)" in r.out
    data = json.loads(invoke("rebuild", "--json").out)
    assert data["items"] == 4 and data["vectors"] is True and data["skipped"] == []


def test_damaged_index_files_cost_one_line_on_stderr(record):
    backdate(record)  # no refresh to heal the damage before the read sees it
    invoke("rebuild")
    (rows,) = (record / ".stele/index/vectors").glob("*/rows.i8")
    rows.write_bytes(b"garbage")
    r = invoke("recall", "--json", "zzz nothing in the record matches these words at all")
    assert r.code == 0 and json.loads(r.out)["mode"] == "no_match"  # embedded again; nothing passed the floors
    assert len(r.err.splitlines()) == 1 and "vectors the index names" in r.err
    (record / ".stele/index/catalog.sqlite").write_bytes(b"garbage" * 50)
    r = invoke("recall", "--json", "how do payment retries back off after a failure?")
    assert r.code == 0 and json.loads(r.out)["mode"] == "hybrid"  # rebuilt
    assert len(r.err.splitlines()) == 1 and "rebuilding" in r.err


def test_an_uninitialised_repository_is_told_to_run_init(plain_repo):
    r = invoke("recall", "--json", "how do payment retries back off after a failure?")
    assert r.code == 0 and json.loads(r.out)["mode"] == "prior_context" and "stele init" in r.err
    assert invoke("search", "payments").code == 1 and invoke("rebuild").code == 1
    assert not (plain_repo / ".stele").exists()


def test_a_named_id_that_does_not_exist_is_said_in_recall_and_why(record):
    r = invoke("recall", "what about DEC-ZZZZ")
    assert "DEC-ZZZZ is named, but no fact or session entry has that id" in r.err
    r = invoke("why", "what about DEC-ZZZZ and the rate limiter")
    assert "warning: stele: DEC-ZZZZ is named, but no fact" in r.out
