"""`--as-of`: a real repository whose one decision changed over three commits, a session log written
across the same months, and the record asked as it stood at each commit and at a date between them.
Each answer holds the version of its time and nothing later: no later fact text, no later session
entry. The live index and the working tree are never touched."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from stele.project import Project
from stele.session import wal
from tests.helpers import git, invoke, write_fact

QUESTION = "which queue do the background jobs run on?"
VERSIONS = [  # (commit time, the decision's title then, a session note written a little later)
    ("2026-01-10T12:00:00Z", "Background jobs run on a Redis queue", "2026-02-01T09:00:00Z",
     "Measured the Redis queue: background jobs wait 40 ms"),
    ("2026-03-10T12:00:00Z", "Background jobs run on a RabbitMQ queue", "2026-04-01T09:00:00Z",
     "Tuned the RabbitMQ queue prefetch for background jobs to 20"),
    ("2026-06-10T12:00:00Z", "Background jobs run on a Postgres queue", "2026-07-01T09:00:00Z",
     "Vacuum settings for the Postgres queue table of background jobs"),
]
WORDS = ["Redis", "RabbitMQ", "Postgres"]


def _commit(repo, when: str, message: str, monkeypatch) -> str:
    monkeypatch.setenv("GIT_AUTHOR_DATE", when)
    monkeypatch.setenv("GIT_COMMITTER_DATE", when)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _log(repo, ts: str, text: str) -> None:
    entry = wal.new_entry("s-queue", "note", text)
    entry.ts = ts
    wal.append(Project(repo), entry)


@pytest.fixture
def history(repo, fake_model, monkeypatch):
    """Three commits of DEC-0001 (Redis, then RabbitMQ, then Postgres), a session note after each,
    and an uncommitted fourth version in the working tree."""
    shas = []
    for n, (when, title, noted, note) in enumerate(VERSIONS):
        write_fact(repo, "DEC-0001", "decision", title, f"{title}; the workers poll it. Queue of record.")
        shas.append(_commit(repo, when, f"queue v{n + 1}", monkeypatch))
        _log(repo, noted, note)
    write_fact(repo, "DEC-0001", "decision", "Background jobs run on a Kafka queue", "Kafka, uncommitted.")
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    return shas


def _recall(*args: str) -> tuple[dict, str]:
    done = invoke("recall", QUESTION, "--json", *args)
    assert done.code == 0, done.err
    data = json.loads(done.out)
    return data, json.dumps(data["entries"])


@pytest.mark.parametrize("n", [0, 1, 2])
def test_each_commit_answers_with_its_own_version(history, n):
    data, text = _recall("--as-of", history[n])
    titles = {e["id"]: e["title"] for e in data["entries"]}
    assert titles["DEC-0001"] == VERSIONS[n][1]
    assert data["as_of"]["commit"] == history[n]
    assert data["as_of"]["time"] == VERSIONS[n][0]
    for later in WORDS[n + 1:] + ["Kafka"]:  # nothing from after the commit, nor the working tree
        assert later not in text
    # each session note was written after its commit: later than the time asked, never there
    assert [e for e in data["entries"] if e["source"] == "session"] == []


def test_a_date_between_commits_takes_the_last_commit_before_it(history):
    data, text = _recall("--as-of", "2026-02-15")
    titles = {e["id"]: e["title"] for e in data["entries"]}
    assert titles["DEC-0001"] == VERSIONS[0][1]
    assert data["as_of"] == {"asked": "2026-02-15", "from": "option", "time": "2026-02-15T23:59:59Z",
                             "commit": history[0], "superseded_included": False}
    assert "RabbitMQ" not in text and "Postgres" not in text and "Kafka" not in text


def _notes(prompt: str, *args: str) -> list[str]:
    done = invoke("recall", prompt, "--json", *args)
    assert done.code == 0, done.err
    return [e["title"] for e in json.loads(done.out)["entries"] if e["source"] == "session"]


def test_session_entries_count_up_to_the_time_asked(history):
    redis = "how long do background jobs wait in the Redis queue we measured?"
    rabbit = "what prefetch did we tune for the RabbitMQ queue of background jobs?"
    assert VERSIONS[1][3] in _notes(rabbit)  # today the April note answers it
    assert VERSIONS[0][3] in _notes(redis, "--as-of", "2026-02-15")  # written 2026-02-01
    assert _notes(redis, "--as-of", history[0]) == []  # the commit of 2026-01-10 is older than the note
    assert VERSIONS[1][3] not in _notes(rabbit, "--as-of", "2026-02-15")  # April's note is in its future
    assert VERSIONS[2][3] not in _notes("vacuum settings of the Postgres queue table", "--as-of", history[1])


def test_the_live_answer_is_untouched(history):
    _recall("--as-of", history[0])
    data, text = _recall()
    assert {e["id"]: e["title"] for e in data["entries"]}["DEC-0001"] == "Background jobs run on a Kafka queue"
    assert "as_of" not in data
    assert "Kafka" in text


def test_the_window_says_what_time_it_answers_for(history):
    done = invoke("recall", QUESTION, "--as-of", "2026-04-15T00:00:00+02:00")
    assert done.code == 0, done.err
    assert f"answering as of 2026-04-14T22:00:00Z: the record at commit {history[1][:7]}" in done.out
    assert "RabbitMQ" in done.out and "Postgres" not in done.out


def test_search_takes_the_same_option(history):
    done = invoke("search", "queue background jobs", "--as-of", history[1], "--json")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert [r["title"] for r in data["results"]] == [VERSIONS[1][1]]
    assert data["as_of"]["commit"] == history[1]


def test_past_states_are_cached_by_commit_and_bounded(history, monkeypatch):
    from stele.index import asof

    monkeypatch.setattr(asof, "KEEP", 2)
    root = Project(Path.cwd())
    for sha in history:
        _recall("--as-of", sha)
    states = sorted(p.name for p in (root.index_dir / asof.CACHE).iterdir())
    assert len(states) == 2 and all(s[:12] in {h[:12] for h in history[1:]} for s in states)


@pytest.mark.parametrize("value,says", [
    ("2026-13-40", "--as-of '2026-13-40' is not a valid date"),
    ("no-such-branch", "--as-of 'no-such-branch' is neither a date nor a commit here"),
    ("2025-06-01", "--as-of '2025-06-01' is before the first commit of this branch (2026-01-10T12:00:00Z)"),
])
def test_bad_input_is_one_line_naming_the_option(history, value, says):
    for command in (("recall", QUESTION), ("search", "queue")):
        done = invoke(*command, "--as-of", value)
        assert done.code == 1
        assert done.err.strip().splitlines() == [done.err.strip()] and says in done.err, done.err


def test_a_prompt_that_names_a_past_month_is_answered_as_of_it(history):
    data, text = _recall_prompt("which queue did the background jobs run on in February 2026?")
    assert {e["id"]: e["title"] for e in data["entries"]}["DEC-0001"] == VERSIONS[0][1]
    assert data["as_of"] == {"asked": "in February 2026", "from": "prompt", "time": "2026-02-28T23:59:59Z",
                             "commit": history[0], "superseded_included": False}
    assert "RabbitMQ" not in text and "Kafka" not in text
    done = invoke("recall", "which queue did the background jobs run on in February 2026?")
    assert 'answering as of 2026-02-28T23:59:59Z' in done.out and 'asked: "in February 2026"' in done.out


def test_a_time_before_the_history_falls_back_to_today_with_history_let_in(history):
    data, _ = _recall_prompt("which queue did the background jobs run on in 2024?")
    assert data["as_of"]["time"] is None and data["as_of"]["superseded_included"]
    assert "history starts later" in data["as_of"]["note"]


def _recall_prompt(prompt: str) -> tuple[dict, str]:
    done = invoke("recall", prompt, "--json")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    return data, json.dumps(data["entries"])


def test_before_lets_superseded_facts_in_labelled(repo, fake_model):
    write_fact(repo, "DEC-0002", "decision", "Login sessions are stored in Memcached",
               "Login sessions are kept in Memcached.", status="superseded")
    write_fact(repo, "DEC-0003", "decision", "Login sessions are stored in Redis",
               "Login sessions are kept in Redis.", links={"supersedes": ["DEC-0002"]})
    now, _ = _recall_prompt("where are the login sessions stored for the web app?")
    assert [e["id"] for e in now["entries"]] == ["DEC-0003"] and "as_of" not in now
    then, _ = _recall_prompt("where were the login sessions stored before we switched?")
    assert {e["id"] for e in then["entries"]} == {"DEC-0002", "DEC-0003"}
    assert then["as_of"] == {"asked": "before we switched", "from": "prompt", "time": None, "commit": None,
                             "superseded_included": True}
    shown = invoke("recall", "where were the login sessions stored before we switched?").out
    assert "DECISION DEC-0002 [superseded]" in shown and "superseded facts are included" in shown


def test_the_http_retrieve_takes_as_of(history):
    from stele.serve.api import handle

    def get(**params: str) -> tuple[int, dict]:
        r = handle(Project(Path.cwd()), "/api/memory/retrieve", {k: [v] for k, v in params.items()})
        return r.status, json.loads(r.body)

    status, data = get(q=QUESTION, as_of=history[1])
    assert status == 200 and data["as_of"]["commit"] == history[1]
    assert {r["id"]: r["title"] for r in data["results"]}["DEC-0001"] == VERSIONS[1][1]
    assert "Postgres" not in json.dumps(data["results"]) and "Kafka" not in json.dumps(data["results"])
    status, data = get(q=QUESTION, as_of="yesterday-ish")
    assert status == 400 and data["error"].startswith("as_of 'yesterday-ish' is neither a date nor a commit")
    assert get(q=QUESTION, as_of=" ")[0] == 400
    assert "as_of" not in get(q=QUESTION)[1]


def test_the_mcp_tools_take_as_of(history):
    from stele.errors import SteleError
    from stele.serve.mcp import recall_text, search_text

    p = Project(Path.cwd())
    text = recall_text(p, QUESTION, as_of="2026-05-01")
    assert VERSIONS[1][1] in text and "answering as of 2026-05-01T23:59:59Z" in text and "Postgres" not in text
    found = search_text(p, "queue background jobs", as_of=history[0])
    assert VERSIONS[0][1] in found and found.startswith("(answering as of 2026-01-10T12:00:00Z")
    with pytest.raises(SteleError, match="--as-of '2020-01-01' is before the first commit"):
        recall_text(p, QUESTION, as_of="2020-01-01")


@pytest.mark.parametrize("text,moment", [
    ("2026-03-04", "2026-03-04T23:59:59Z"),                  # a date alone: the end of that day
    ("2026-03-04T10:00:00Z", "2026-03-04T10:00:00Z"),
    ("2026-03-04T10:00:00.000Z", "2026-03-04T10:00:00Z"),    # JavaScript's toISOString (a benchmark's asOf)
    ("2026-03-04T10:00:00+02:00", "2026-03-04T08:00:00Z"),
    ("2026-03-04T10:00", "2026-03-04T10:00:00Z"),            # no zone: UTC
    ("v1.4", None), ("abc1234", None),                       # not dates: commits to look up
])
def test_dates_are_read_as_utc_moments(text, moment):
    from stele import clock
    from stele.index.asof import parse_date

    found = parse_date(text)
    assert (clock.iso(found) if found else None) == moment


def test_an_iso_time_with_milliseconds_works_end_to_end(history):
    data, _ = _recall("--as-of", "2026-03-10T12:00:00.000Z")  # the second commit's own second
    assert data["as_of"]["commit"] == history[1]


def test_a_past_state_in_use_is_not_pruned(history, monkeypatch):
    from stele.index import asof
    from stele.index.handle import shared_lock

    monkeypatch.setattr(asof, "KEEP", 1)
    p = Project(Path.cwd())
    first = asof.prepare(p, asof.resolve(p, history[0]))
    with shared_lock(first):  # another process reading it
        asof.prepare(p, asof.resolve(p, history[1]))
        assert first.root.is_dir()
    asof.prepare(p, asof.resolve(p, history[2]))
    assert not first.root.exists() and len(list((p.index_dir / asof.CACHE).iterdir())) == 1


def test_a_session_entry_logged_later_with_an_earlier_time_is_seen(history):
    redis = "how long do background jobs wait in the Redis queue we measured?"
    assert _notes(redis, "--as-of", history[0]) == []
    _log(Path.cwd(), "2026-01-05T08:00:00Z", "Measured the Redis queue once more: jobs wait 35 ms")
    assert "Measured the Redis queue once more: jobs wait 35 ms" in _notes(redis, "--as-of", history[0])


def test_why_explains_a_past_recall(history):
    done = invoke("why", QUESTION, "--as-of", history[0], "--json")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert data["as_of"]["commit"] == history[0] and "DEC-0001" in [s["id"] for s in data["seeds"]]
    text = invoke("why", QUESTION, "--as-of", history[0]).out
    assert f"as of: 2026-01-10T12:00:00Z (commit {history[0][:7]}); --as-of {history[0]}" in text
    assert invoke("why", QUESTION, "--as-of", "nope-nope").code == 1


def test_the_prompt_hook_answers_a_past_question_as_of_its_time(history):
    from tests.helpers import hook

    payload = {"session_id": "past-1", "transcript_path": "/t", "cwd": str(Path.cwd()),
               "hook_event_name": "UserPromptSubmit",
               "prompt": "which queue did the background jobs run on in February 2026?"}
    done = hook("prompt", payload, "--harness", "claude")
    assert done.code == 0
    assert VERSIONS[0][1] in done.out and "answering as of 2026-02-28T23:59:59Z" in done.out
    assert "RabbitMQ" not in done.out and "Kafka" not in done.out
