"""The JSON API as plain functions: filters, one fact with its edges both ways, the graph, and the
status codes of bad requests."""
from __future__ import annotations

import json

import pytest

from stele.project import Project
from stele.record import edit
from stele.serve.api import MAX_PARAM_CHARS, handle


def get(repo, route: str, **params) -> tuple[int, dict]:
    query = {k: v if isinstance(v, list) else [v] for k, v in params.items()}
    r = handle(Project(repo), route, query)
    return r.status, json.loads(r.body)


@pytest.fixture
def facts(repo) -> dict[str, str]:
    p = Project(repo)
    dec = edit.remember(p, "Rate limiting runs before auth.", kind="decision", anchors=["src/auth/mw.py"],
                          tags=["auth"]).fact
    risk = edit.remember(p, "Reordering middleware lets floods reach bcrypt.", kind="risk",
                           links=[f"caused-by:{dec.id}"]).fact
    note = edit.remember(p, f"Benchmarks of bcrypt cost, see {risk.id}.", kind="note",
                           expires="2026-01-01").fact
    return {"dec": dec.id, "risk": risk.id, "note": note.id}


def test_facts_filters_by_kind_status_anchor_tag_and_words(repo, facts):
    status, data = get(repo, "/api/memory/facts")
    assert status == 200 and data["total"] == 3 and data["problems"] == []
    assert {f["id"] for f in data["facts"]} == set(facts.values())
    assert all("body" not in f for f in data["facts"])
    assert [f["id"] for f in get(repo, "/api/memory/facts", kind="risk")[1]["facts"]] == [facts["risk"]]
    assert len(get(repo, "/api/memory/facts", kind="risk,decision")[1]["facts"]) == 2
    assert len(get(repo, "/api/memory/facts", kind=["risk", "note"])[1]["facts"]) == 2
    assert [f["id"] for f in get(repo, "/api/memory/facts", anchor="src/auth")[1]["facts"]] == [facts["dec"]]
    assert [f["id"] for f in get(repo, "/api/memory/facts", tag="auth")[1]["facts"]] == [facts["dec"]]
    assert [f["id"] for f in get(repo, "/api/memory/facts", q="FLOODS bcrypt")[1]["facts"]] == [facts["risk"]]
    assert get(repo, "/api/memory/facts", q="floods nowhere")[1]["facts"] == []
    assert get(repo, "/api/memory/facts", status="retired")[1]["facts"] == []
    expired = next(f for f in data["facts"] if f["id"] == facts["note"])
    assert expired["inactive"] == "expired 2026-01-01"


def test_bad_parameters_are_400_with_a_message(repo, facts):
    status, data = get(repo, "/api/memory/facts", kind="opinion")
    assert status == 400 and "kind='opinion' is not a kind" in data["error"]
    assert get(repo, "/api/memory/facts", status="pending")[0] == 400
    status, data = get(repo, "/api/memory/facts", q="x" * (MAX_PARAM_CHARS + 1))
    assert status == 400 and "longer than 2048" in data["error"]
    assert get(repo, "/api/memory/facts", q="x" * MAX_PARAM_CHARS)[0] == 200


def test_one_fact_with_edges_both_ways(repo, facts):
    status, data = get(repo, f"/api/memory/facts/{facts['risk'].lower()}")
    assert status == 200 and data["id"] == facts["risk"] and data["body"].startswith("Reordering")
    assert data["outgoing"] == [{"rel": "caused-by", "id": facts["dec"], "kind": "decision", "causal": True,
                                 "title": "Rate limiting runs before auth."}]
    assert data["incoming"] == [{"rel": "mentions", "id": facts["note"], "kind": "note", "causal": False,
                                 "title": data["incoming"][0]["title"]}]
    status, data = get(repo, "/api/memory/facts/DEC-ZZZZ")
    assert status == 404 and "no fact with id DEC-ZZZZ" in data["error"]


def test_graph_has_every_fact_and_typed_edge(repo, facts):
    status, data = get(repo, "/api/memory/graph")
    assert status == 200 and [n["id"] for n in data["nodes"]] == sorted(facts.values())
    edges = {(e["src"], e["rel"], e["dst"], e["causal"]) for e in data["edges"]}
    assert edges == {(facts["risk"], "caused-by", facts["dec"], True),
                     (facts["note"], "mentions", facts["risk"], False)}


def test_unknown_route_is_404_and_a_broken_file_does_not_take_the_list_down(repo, facts):
    assert get(repo, "/api/memory/nothing")[0] == 404
    broken = repo / "docs/memory/notes/NOTE-BAD0-broken.md"
    broken.write_text("---\nid: NOTE-BAD0\nkind: note\n---\nno title\n")
    status, data = get(repo, "/api/memory/facts")
    assert status == 200 and len(data["facts"]) == 4
    assert any("NOTE-BAD0-broken.md" in p and "title" in p for p in data["problems"])


def test_a_broken_config_is_a_500_naming_the_file(repo, facts):
    (repo / ".stele/config.yaml").write_text("retrieval: [\n")
    status, data = get(repo, "/api/memory/facts")
    assert status == 500 and "config.yaml" in data["error"]


def _saved_snapshot(repo) -> str:
    from stele.ids import ulid
    from stele.snapshot.model import Budgets, Item, Snapshot
    from stele.snapshot.store import save

    p = Project(repo)
    snap = Snapshot(run=ulid(), created="2026-11-29T10:00:00Z",
                    inputs={"task": None, "prompt": "rate limits"},
                    budgets=Budgets.from_config(p.config), text="limit first\n",
                    items=[Item("ranked", "DEC-AAAA", "[DEC-AAAA] decision: limit first\n")])
    save(p, snap)
    return snap.run


def test_snapshots_list_and_one_run(repo):
    assert get(repo, "/api/snapshots") == (200, {"snapshots": []})
    first, second = _saved_snapshot(repo), _saved_snapshot(repo)
    status, data = get(repo, "/api/snapshots")
    assert status == 200 and [s["run"] for s in data["snapshots"]] == [second, first]  # newest first
    assert data["snapshots"][0]["records"] == 1
    status, data = get(repo, f"/api/snapshots/{first.lower()}")
    assert status == 200 and data["run"] == first and data["text"] == "limit first\n"
    assert data["parts"]["ranked"][0]["key"] == "DEC-AAAA"
    assert [row["part"] for row in data["usage"]][-1] == "briefing"
    assert get(repo, "/api/snapshots/0000000000")[0] == 404
    assert get(repo, "/api/snapshots/not-a-run!")[0] == 400
    assert get(repo, "/api/snapshots/0")[0] == 400  # both runs start with 0: ambiguous


@pytest.fixture
def logged(repo) -> dict[str, str]:
    from stele.session import sessions

    p = Project(repo)
    first = sessions.start(p, agent="claude-code", goal="Fix the flaky rate limit test").session
    sessions.log(p, first, "decision", "Pin the limiter clock in tests; ghp_" + "a" * 36 + " must not leak.",
                issue="12", paths=[str(repo / "src/auth/mw.py")])
    sessions.log(p, first, "outcome", "The rate limit test passes 200 runs in a row.", pr="34")
    other = sessions.start(p, agent="codex", goal="Write the release notes").session
    sessions.log(p, other, "note", "Release notes drafted for 2.1.")
    return {"first": first, "other": other}


def test_sessions_filter_by_issue_pr_path_and_words(repo, logged):
    status, data = get(repo, "/api/memory/sessions")
    assert status == 200 and data["total"] == 2 and data["limit"] == 20
    assert [s["id"] for s in data["sessions"]] == [logged["other"], logged["first"]]  # most recent first
    for params in ({"issue": "12"}, {"pr": "#34"}, {"path": "src/auth"}, {"q": "LIMITER clock"}):
        status, data = get(repo, "/api/memory/sessions", **params)
        assert status == 200 and [s["id"] for s in data["sessions"]] == [logged["first"]], params
    assert get(repo, "/api/memory/sessions", issue="99")[1]["sessions"] == []
    status, data = get(repo, "/api/memory/sessions", limit="100")
    assert status == 200 and data["limit"] == 32
    assert get(repo, "/api/memory/sessions", limit="0")[0] == 400
    assert get(repo, "/api/memory/sessions", limit="ten")[0] == 400


def test_one_session_and_its_blob_as_plain_text(repo, logged):
    status, data = get(repo, f"/api/memory/sessions/{logged['first']}")
    assert status == 200 and data["session"]["agent"] == "claude-code" and data["session"]["entries"] == 3
    assert [e["type"] for e in data["entries"]] == ["note", "decision", "outcome"]
    # the same view `stele session show --json` prints (session/view.py builds both)
    assert list(data) == ["session", "entries", "promoted", "delivered"]
    r = handle(Project(repo), f"/api/memory/sessions/{logged['first']}/blob", {})
    text = r.body.decode()
    assert r.status == 200 and r.content_type == "text/plain; charset=utf-8"
    assert text.startswith(f"session {logged['first']}\nagent: claude-code")
    assert "decision (issue 12, src/auth/mw.py)\nPin the limiter clock" in text
    assert "ghp_" + "a" * 36 not in text and "[REDACTED:GitHub token]" in text
    assert get(repo, "/api/memory/sessions/sess-nothing-here")[0] == 404
    assert get(repo, "/api/memory/sessions/..%2Fetc")[0] in (400, 404)
    assert handle(Project(repo), "/api/memory/sessions/bad name!/blob", {}).status == 400


def test_retrieve_requires_q_within_2048_and_caps_the_limit(repo, facts):
    status, data = get(repo, "/api/memory/retrieve")
    assert status == 400 and "q is required" in data["error"]
    assert get(repo, "/api/memory/retrieve", q="   ")[0] == 400
    assert get(repo, "/api/memory/retrieve", q="x" * 2049)[0] == 400
    status, data = get(repo, "/api/memory/retrieve", q="where does rate limiting sit relative to auth?",
                       limit="100")
    assert status == 200 and data["limit"] == 32 and data["mode"] in ("semantic", "fts")
    assert data["retrieval"] in ("hybrid", "fts")
    assert facts["dec"] in [r["id"] for r in data["results"]]
    assert [r["id"] for r in data["risks"]] == [facts["risk"]]
    one = get(repo, "/api/memory/retrieve", q="where does rate limiting sit relative to auth?", limit="1")[1]
    assert len(one["results"]) == 1 and one["limit"] == 1


def test_retrieve_falls_back_to_prior_context_with_score_zero(repo, logged, monkeypatch):
    from stele.index import build

    def broken(*a, **k):
        raise build.IndexUnavailable("the index cannot be built here")

    monkeypatch.setattr(build, "open_index", broken)
    question = "what happened with the rate limit test lately?"
    status, data = get(repo, "/api/memory/retrieve", q=question)
    assert status == 200 and data["mode"] == "prior_context" and data["results"]
    assert all(r["score"] == 0.0 and r["source"] == "session" for r in data["results"])
    status, data = get(repo, "/api/memory/retrieve", q=question, pr="34")
    assert {r["id"] for r in data["results"]} <= {e["id"] for e in get(
        repo, f"/api/memory/sessions/{logged['first']}")[1]["entries"]}


def test_retrieve_answers_a_short_explicit_query_and_honours_fts(repo, facts):
    """`q=redis` is a question someone asked, not a prompt: the hook's 25-character gate is not applied.
    `fts=` keeps the results holding every one of its words."""
    p = Project(repo)
    cache = edit.remember(p, "Redis holds the session cache; a failover loses at most a second.", kind="decision").fact
    status, data = get(repo, "/api/memory/retrieve", q="redis")
    assert status == 200 and data["retrieval"] != "skipped" and cache.id in [r["id"] for r in data["results"]]
    status, data = get(repo, "/api/memory/retrieve", q="where does rate limiting sit relative to auth?",
                       fts="BEFORE auth")
    assert status == 200 and [r["id"] for r in data["results"]] == [facts["dec"]]
    assert get(repo, "/api/memory/retrieve", q="rate limiting and auth", fts="nowhere")[1]["results"] == []
    assert get(repo, "/api/memory/retrieve", q="rate limiting and auth", fts=" ")[0] == 400
    # whole tokens, never a substring of an id or a word
    fid = facts["dec"]
    assert get(repo, "/api/memory/retrieve", q="where does rate limiting sit relative to auth?",
               fts=fid.split("-")[1][:2])[1]["results"] == []
    assert get(repo, "/api/memory/retrieve", q="where does rate limiting sit relative to auth?",
               fts="BEFO")[1]["results"] == []


def test_retrieve_mode_says_what_ran(repo, facts, no_model):
    status, data = get(repo, "/api/memory/retrieve", q="where does rate limiting sit relative to auth?")
    assert status == 200 and (data["mode"], data["retrieval"]) == ("fts", "fts")  # not "semantic"


def test_retrieve_mode_is_semantic_when_the_embeddings_ranked(repo, fake_model):
    cfg = repo / ".stele/config.yaml"  # the floor is the bundled model's; the fake's cosines run lower
    cfg.write_text(cfg.read_text().replace("vector_floor: 0.6", "vector_floor: 0.5"))
    p = Project(repo)
    # no word in common, and close enough for the vector floor (retrieval.vector_floor) with the fake model
    dec = edit.remember(p, "Customers were charged twice per purchase.", kind="lesson").fact
    status, data = get(repo, "/api/memory/retrieve", q="billed duplicate orders")
    assert status == 200 and data["mode"] == "semantic" and dec.id in [r["id"] for r in data["results"]]


def test_sessions_with_an_empty_q_is_a_400_like_the_cli(repo, facts):
    status, data = get(repo, "/api/memory/sessions", q="")
    assert status == 400 and "q is empty" in data["error"]
    assert get(repo, "/api/memory/sessions")[0] == 200


def test_a_config_change_counts_from_the_next_request(repo, facts):
    """One Project for the server's whole life, as `stele serve` holds it: the config is read again."""
    p = Project(repo)
    question = {"q": ["where does rate limiting sit relative to auth?"]}
    assert [r["id"] for r in json.loads(handle(p, "/api/memory/retrieve", question).body)["risks"]] == [
        facts["risk"]]
    config = repo / ".stele/config.yaml"
    config.write_text(config.read_text().replace("max_callouts: 5", "max_callouts: 0"))
    assert json.loads(handle(p, "/api/memory/retrieve", question).body)["risks"] == []


def test_graph_nodes_carry_a_short_title(repo, facts):
    long = edit.remember(Project(repo), "Retries back off exponentially with full jitter, at most three attempts "
                         "per charge.", kind="decision").fact
    nodes = {n["id"]: n for n in get(repo, "/api/memory/graph")[1]["nodes"]}
    assert nodes[facts["dec"]]["label"] == "Rate limiting runs..."  # 28 characters at most, cut at a word
    label = nodes[long.id]["label"]
    assert len(label) <= 28 and label.endswith("...") and nodes[long.id]["title"].startswith(label[:-3])


def test_deliveries_by_session_and_turn_with_the_prompt_redacted(repo, facts):
    from stele.session import sessions

    p = Project(repo)
    sid = sessions.start(p, agent="claude-code").session
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    sessions.log_delivered(p, sid, "session-start", [facts["dec"]], "claude-code")
    sessions.log_delivered(p, sid, "prompt", [facts["risk"], facts["dec"]], "claude-code",
                           prompt=f"why is auth after the limiter? my token is {token}")
    sessions.log_delivered(p, sid, "pre-edit", [facts["risk"]], "claude-code")
    sessions.log_delivered(p, sid, "prompt", [facts["note"]], "claude-code", prompt="and what does bcrypt cost us?")
    status, data = get(repo, "/api/memory/deliveries")
    assert status == 200 and [s["session"]["id"] for s in data["sessions"]] == [sid]
    turns = data["sessions"][0]["turns"]
    assert [(t["turn"], [d["hook"] for d in t["deliveries"]]) for t in turns] == [
        (0, ["session-start"]), (1, ["prompt", "pre-edit"]), (2, ["prompt"])]
    assert turns[1]["prompt"] == "why is auth after the limiter? my token is [REDACTED:GitHub token]"
    assert turns[1]["deliveries"][0]["ids"] == [facts["risk"], facts["dec"]]
    assert data["titles"][facts["risk"]] == "Reordering middleware lets floods reach bcrypt."
    assert token not in json.dumps(data)


def test_retrieve_filters_before_ranking(repo):
    """31 notes on one topic, one of them tagged with issue 101 and one carrying a rare token: the
    filters choose the candidates before the ranking cuts them (they used to be applied to the
    ranked window, which the other notes filled)."""
    from tests.helpers import POOL_QUESTION, pool_notes

    ids, q = pool_notes(repo), POOL_QUESTION
    status, data = get(repo, "/api/memory/retrieve", q=q, issue="101", limit="3")
    assert status == 200 and [r["id"] for r in data["results"] if r["source"] == "session"] == [ids[17]], data
    status, data = get(repo, "/api/memory/retrieve", q=q, fts="zqxv9", limit="3")
    assert status == 200 and [r["id"] for r in data["results"]] == [ids[-1]], data


def test_agent_eval_runs_list_and_one(repo):
    from tests.agenteval.sample import stored_run

    assert get(repo, "/api/eval/agent") == (200, {"runs": []})
    run = stored_run(Project(repo))
    status, data = get(repo, "/api/eval/agent")
    assert status == 200 and [r["run"] for r in data["runs"]] == [run] == ["20251202T000000Z-claude"]
    assert data["runs"][0]["difference"] == {"value": 1.0, "interval": [0.2059, 1.0], "paired": {
        "pairs": 3, "with_only": 3, "without_only": 0, "value": 1.0, "interval": [1.0, 1.0]}}
    status, one = get(repo, f"/api/eval/agent/{run}")
    assert status == 200 and one["overall"]["injected"] == {"CON-6E8B": 3} and "| con-6e8b |" in one["report"]
    assert get(repo, "/api/eval/agent/..%2Fetc")[0] == 404
    assert get(repo, "/api/eval/agent/20990101T000000Z-claude")[0] == 404
