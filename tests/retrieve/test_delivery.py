"""The delivery rules hold in every adapter (`delivery.withheld`): a `delivery: manual` fact reaches
recall, the prompt hook, MCP and the HTTP retrieve only when its id is named; done and cancelled tasks
are not injected (a done one still comes along an edge, labelled, and `search --all` finds both);
naming a superseded fact brings the one in force."""
import json

import pytest

from stele.project import Project
from stele.retrieve.recall import recall
from stele.retrieve.search import search
from tests.fakes import write_fact
from tests.helpers import invoke

PROMPT = "how do failed card charge retries back off between attempts?"


@pytest.fixture
def shop(repo, fake_model):
    write_fact(repo, "DEC-0001", "decision", "Failed card charge retries back off between attempts",
               "Exponential backoff, at most three attempts.",
               links={"relates-to": ["TASK-0005", "TASK-0004"], "supersedes": ["DEC-0007"]})
    write_fact(repo, "INS-0002", "instruction", "Reproduce failed card charge retries and their backoff locally",
               "Run the retry harness against the sandbox.", delivery="manual")
    write_fact(repo, "TASK-0003", "task", "Card charge retries back off between failed attempts",
               status="done")
    write_fact(repo, "TASK-0004", "task", "Retry card charges from a nightly cron job", status="cancelled")
    write_fact(repo, "TASK-0005", "task", "Release the retry worker", status="done")
    write_fact(repo, "DEC-0006", "decision", "Retry a failed charge five times, one second apart",
               "The first retry policy.", status="superseded")
    write_fact(repo, "DEC-0007", "decision", "Retry a failed charge four times, doubling the wait",
               "The second retry policy.", status="superseded", links={"supersedes": ["DEC-0006"]})
    return Project(repo)


def ids(r):
    return [e.id for e in r.entries] + [x.id for x in r.risks]


def test_recall_withholds_manual_facts_and_closed_tasks_unless_named(shop):
    r = recall(shop, PROMPT)
    assert "DEC-0001" in ids(r)
    assert not {"INS-0002", "TASK-0003", "TASK-0004"} & set(ids(r))  # manual, done seed, cancelled
    done = [e for e in r.entries if e.id == "TASK-0005"]
    assert done and done[0].status == "done" and done[0].via.from_id == "DEC-0001"  # history, along an edge
    filtered = r.trace.filtered
    assert filtered["INS-0002"] == "delivery manual" and filtered["TASK-0003"] == "done"
    named = recall(shop, "and what does INS-0002 say about that?")
    assert ids(named)[0] == "INS-0002" and named.entries[0].body.startswith("Run the retry harness")


def test_search_leaves_withheld_facts_to_all(shop):
    plain = [h.id for h in search(shop, "card charge retries backoff", limit=10).results]
    every = [h.id for h in search(shop, "card charge retries backoff", limit=10, include_all=True).results]
    assert "DEC-0001" in plain and not {"INS-0002", "TASK-0003"} & set(plain)
    assert {"INS-0002", "TASK-0003"} <= set(every)


def test_naming_a_superseded_fact_brings_the_one_in_force_through_a_chain(shop):
    r = recall(shop, "DEC-0006")
    assert ids(r)[:2] == ["DEC-0006", "DEC-0001"]  # DEC-0007 replaced it, and was replaced in turn
    assert r.entries[1].body.startswith("Exponential backoff")  # delivered whole, like the named one
    assert [s.origin for s in r.trace.seeds[:2]] == ["id", "successor"]


def test_the_adapters_deliver_the_same_rules(shop, repo):
    from stele.serve.api import handle
    from stele.serve.mcp import recall_text

    hook = invoke("hook", "prompt", input=json.dumps({"session_id": "s1", "prompt": PROMPT}))
    assert hook.code == 0 and "DEC-0001" in hook.out and "INS-0002" not in hook.out
    assert "TASK-0003" not in hook.out and "TASK-0004" not in hook.out
    mcp = recall_text(shop, PROMPT)
    assert "DEC-0001" in mcp and "INS-0002" not in mcp
    data = json.loads(handle(shop, "/api/memory/retrieve", {"q": [PROMPT]}).body)
    got = [x["id"] for x in data["results"]] + [x["id"] for x in data["risks"]]
    assert "DEC-0001" in got and not {"INS-0002", "TASK-0003", "TASK-0004"} & set(got)
    named = json.loads(handle(shop, "/api/memory/retrieve", {"q": ["show me INS-0002 please"]}).body)
    assert named["results"][0]["id"] == "INS-0002"
