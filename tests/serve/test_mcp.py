"""`stele mcp`: the tool texts as plain functions, then a real MCP client over stdio against a temporary
repository, and the wire itself (nothing but JSON-RPC on stdout, even when a library prints)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest

from stele.errors import SteleError
from stele.project import Project
from stele.record import edit
from stele.record.load import load
from stele.serve.mcp import MAX_CHARS, cap, fact_text, remember_text
from tests.helpers import write_fact
from tests.untrusted_payloads import DANGEROUS

pytest.importorskip("mcp")

AWS_KEY = "AKIA" + "Z" * 16


def _facts(root: Path) -> dict[str, str]:
    p = Project(root)
    dec = edit.remember(p, "Rate limiting runs before auth, so floods never reach bcrypt.", kind="decision",
                          anchors=["src/auth.py"]).fact
    risk = edit.remember(p, "Moving the limiter behind auth lets a flood reach bcrypt and pin the CPU.",
                           kind="risk", title="Middleware order is load-bearing",
                           links=[f"caused-by:{dec.id}"]).fact
    return {"dec": dec.id, "risk": risk.id}


def test_fact_text_shows_fields_links_both_ways_and_body(repo):
    ids = _facts(repo)
    record = load(Project(repo))
    text = fact_text(record, ids["dec"])
    assert text.startswith(f"DECISION {ids['dec']}  Rate limiting runs before auth")
    assert "anchor: src/auth.py" in text
    assert f"<- caused-by {ids['risk']}: Middleware order is load-bearing" in text
    assert text.rstrip().endswith("never reach bcrypt.")
    assert f"-> caused-by {ids['dec']}: Rate limiting" in fact_text(record, ids["risk"].lower())
    with pytest.raises(SteleError, match="no fact with id DEC-ZZZZ"):
        fact_text(record, "DEC-ZZZZ")


def test_remember_text_writes_like_the_cli_and_redacts(repo):
    out = remember_text(Project(repo), f"The deploy user key is {AWS_KEY}; rotate it yearly.", kind="lesson",
                        tags=["deploy"])
    fact_id = out.split()[1]
    fact = load(Project(repo)).get(fact_id)
    assert fact.kind == "lesson" and fact.tags == ["deploy"]
    assert AWS_KEY not in (repo / fact.path).read_text() and "[REDACTED:AWS access key id]" in fact.body
    assert "redacted before writing: 1 AWS access key id " in out  # in title and body, told once
    assert AWS_KEY not in out


def test_remember_tells_the_agent_what_the_cli_tells_the_user_through_a_real_client(repo):
    """`remember` dropped what `edit.remember` returns beside the fact (the CLI prints it, and its
    `--json` has it as `similar` and `warnings`): an anchor that names nothing, a fact it nearly
    repeats. The agent is the one who can fix either."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    first = edit.remember(Project(repo), "We need two approvals for a release.", kind="constraint").fact

    async def session():
        async with stdio_client(_params(repo)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await s.call_tool("remember", {"text": "We need 2 approvals for a release.",
                                                  "kind": "constraint", "anchors": ["src/nope.py"]})

    answer = anyio.run(session)
    text = answer.content[0].text
    assert not _is_error(answer) and text.startswith("remembered CON-"), text
    new_id = text.split()[1]
    assert f"\nwarning: {new_id} is 86% similar to {first.id}: if it is one fact twice, keep one" in text, text
    assert "\nwarning: anchor 'src/nope.py': no such file in the checkout (written anyway" in text, text


def test_cap_cuts_at_a_line_and_says_so():
    text = "\n".join(f"line {i} " + "x" * 50 for i in range(2000))
    out = cap(text)
    assert len(out) <= MAX_CHARS and out.endswith("ask for less]")
    assert all(line.startswith(("line ", "[cut here")) for line in out.splitlines())
    assert cap("short") == "short"


def _is_error(result) -> bool:
    """`is_error` in mcp 2.x, `isError` in 1.x."""
    fields = getattr(type(result), "model_fields", {})
    return bool(result.is_error if "is_error" in fields else result.isError)


def _env(repo: Path) -> dict[str, str]:
    """The server's environment: this checkout's stele (sys.path), not whichever one is installed."""
    return {"PATH": os.environ["PATH"], "HOME": str(repo.parent), "STELE_TODAY": "2026-11-29",
            "PYTHONPATH": os.pathsep.join(sys.path)}


def _params(repo: Path):
    from mcp import StdioServerParameters

    env = _env(repo)
    return StdioServerParameters(command=sys.executable, args=["-m", "stele", "mcp"], cwd=str(repo), env=env)


def test_real_client_lists_tools_and_calls_them(repo):
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    ids = _facts(repo)

    async def session() -> dict:
        async with stdio_client(_params(repo)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            recalled = await s.call_tool("recall", {"prompt": "Where should the rate limiting middleware "
                                                              "go relative to auth?"})
            short = await s.call_tool("recall", {"prompt": "auth"})
            found = await s.call_tool("search", {"query": "bcrypt flood", "limit": 5})
            shown = await s.call_tool("show", {"id": ids["risk"]})
            missing = await s.call_tool("show", {"id": "DEC-ZZZZ"})
            written = await s.call_tool("remember", {
                "text": f"Key {AWS_KEY} lives in CI only.", "kind": "lesson",
                "links": [f"relates-to:{ids['dec']}"]})
            bad = await s.call_tool("remember", {"text": "x", "kind": "opinion"})
            return {"tools": tools, "recalled": recalled, "short": short, "found": found, "shown": shown,
                    "missing": missing, "written": written, "bad": bad}

    r = anyio.run(session)
    assert set(r["tools"]) == {"recall", "search", "show", "remember"}  # no tasks here: no task tools
    assert r["tools"]["recall"].annotations.model_dump(by_alias=True)["readOnlyHint"] is True
    recalled = r["recalled"].content[0].text
    assert not _is_error(r["recalled"])
    callout = (f"! RISK on your path: {ids['risk']}  Middleware order is load-bearing  "
               f"(via caused-by {ids['dec']})")
    assert callout in recalled
    assert f"DECISION {ids['dec']}  Rate limiting runs before auth" in recalled
    assert "under 25 characters" in r["short"].content[0].text
    assert {line.split()[0] for line in r["found"].content[0].text.splitlines()} == {ids["dec"], ids["risk"]}
    schemas = json.dumps([t.model_dump(mode="json") for t in r["tools"].values()])
    assert len(schemas) < 6000  # every session pays for these
    assert all("\n" not in t.description for t in r["tools"].values())
    text = r["shown"].content[0].text
    assert not _is_error(r["shown"]) and f"-> caused-by {ids['dec']}" in text
    assert _is_error(r["missing"]) and "no fact with id DEC-ZZZZ" in r["missing"].content[0].text
    assert not _is_error(r["written"]) and "redacted before writing" in r["written"].content[0].text
    new_id = r["written"].content[0].text.split()[1]
    fact = load(Project(repo)).get(new_id)
    assert fact.links == {"relates-to": [ids["dec"]]} and AWS_KEY not in (repo / fact.path).read_text()
    assert _is_error(r["bad"]) and "--kind 'opinion' is not a kind" in r["bad"].content[0].text


def test_task_tools_come_with_tasks(repo):
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from stele.tasks import board

    task = board.new_task(Project(repo), "Move the limiter into the gateway").fact
    manual = edit.remember(Project(repo), "The gateway config lives in infra/gateway.yaml.", kind="note",
                           delivery="manual").fact

    async def session() -> tuple:
        async with stdio_client(_params(repo)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            ready = await s.call_tool("task_ready", {})
            first = await s.call_tool("task_claim", {"id": task.id, "records": [manual.id]})
            after = await s.call_tool("task_ready", {})
            return names, ready, first, after

    names, ready, first, after = anyio.run(session)
    assert {"task_ready", "task_claim"} <= names
    assert ready.content[0].text == f"{task.id} [normal] Move the limiter into the gateway\n"
    assert not _is_error(first) and first.content[0].text.startswith(f"claimed {task.id} for ")
    assert "Move the limiter into the gateway" in first.content[0].text
    assert "\ncontext snapshot " in first.content[0].text and "## Records named for this run" in first.content[0].text
    assert f"[{manual.id}] note: The gateway config lives in infra/gateway.yaml." in first.content[0].text
    assert after.content[0].text.startswith("no ready tasks")


NOISY = """
import stele.record.edit as m
real = m.remember
def noisy(*a, **k):
    print("NOISE from a library")
    return real(*a, **k)
m.remember = noisy
from stele.cli.entry import main
raise SystemExit(main(["mcp"]))
"""


def test_stdout_carries_only_protocol_messages_even_when_a_library_prints(repo):
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "remember", "arguments": {"text": "Stdout belongs to the protocol."}}},
    ]
    env = _env(repo)
    proc = subprocess.Popen([sys.executable, "-c", NOISY], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=repo, env=env)
    frames = []
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:  # wait for the answer, so the call is not cut short by stdin closing
                frames.append(json.loads(proc.stdout.readline()))  # raises if anything else reached stdout
        proc.stdin.close()
        rest, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert rest == ""
    assert all(f.get("jsonrpc") == "2.0" for f in frames)
    assert {f.get("id") for f in frames} == {1, 2, 3}
    answer = next(f for f in frames if f.get("id") == 3)["result"]
    assert not answer.get("isError") and "remembered NOTE-" in answer["content"][0]["text"]
    assert "NOISE from a library" in err


def test_replies_through_a_real_client_carry_no_hidden_or_control_character(repo):
    """A fact with tag characters, a bidi override and an escape sequence, read by an agent over MCP."""
    import re

    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from tests.helpers import write_fact
    from tests.untrusted_payloads import TAGGED

    write_fact(repo, "DEC-AAAA", "decision", "Rate limiting runs before auth" + TAGGED,
               body="Limit first \x1b]0;owned\x07, then authenticate.\u202e evil")
    raw = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\U000e0000-\U000e0fff]")

    async def session() -> list[str]:
        async with stdio_client(_params(repo)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            replies = [await s.call_tool("show", {"id": "DEC-AAAA"}),
                       await s.call_tool("recall", {"prompt": "does rate limiting run before auth?"}),
                       await s.call_tool("search", {"query": "rate limiting auth"})]
            return [r.content[0].text for r in replies]

    texts = anyio.run(session)
    assert "DEC-AAAA" in texts[0] and "<45 hidden characters>" in texts[0] and "^[]0;owned^G" in texts[0]
    assert all(not raw.search(t) for t in texts), texts


def test_a_huge_id_is_echoed_bounded_in_the_tool_error(repo):
    """`show` with a 1 MB id (an MCP argument has no command line's 128 KiB limit) answered the whole id
    back in its error, escape sequences neutralized but every character kept."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    huge = "DEC-" + "A" * 1_000_000 + "\x1b]0;owned\x07"

    async def session():
        async with stdio_client(_params(repo)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await s.call_tool("show", {"id": huge})

    answer = anyio.run(session)
    text = answer.content[0].text
    assert _is_error(answer) and "no fact with id DEC-AAAA" in text, text[:300]
    assert len(text) <= 1_000 and re.search(r"\d{3},\d{3} characters in all", text) and "\x1b" not in text, text
    assert text.endswith("`stele list` shows the ids")


@pytest.mark.slow  # ~2-3 s: 50 MB through the stdio wire and back
def test_a_50_mb_id_is_answered_fast_with_a_bounded_echo(repo):
    """A 50 MB id was redacted whole before its echo was cut: the tool answered after ~40 s. The
    message is now cut first (`errors.message`); what is left is the wire's own cost."""
    import time

    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    huge = "DEC-" + "A" * 50_000_000

    async def session():
        async with stdio_client(_params(repo)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            start = time.monotonic()
            answer = await s.call_tool("show", {"id": huge})
            return answer, time.monotonic() - start

    answer, elapsed = anyio.run(session)
    text = answer.content[0].text
    assert _is_error(answer) and "50,000," in text and len(text) <= 1_000, text[:300]
    assert elapsed < 15, elapsed  # ~2 s; ~40 s redacting it whole


def _exchange(repo, lines: list[str]) -> list[dict]:
    """Send raw lines to `stele mcp`, one answer awaited per line that should get one (all but the
    notification), and return the frames in order."""
    env = _env(repo)
    proc = subprocess.Popen([sys.executable, "-m", "stele", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=repo, env=env)
    frames = []
    try:
        for line in lines:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            if "notifications/" not in line:
                frames.append(json.loads(proc.stdout.readline()))
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    return frames


def test_every_request_gets_an_answer_and_errors_are_one_line(repo):
    """Found by probing the 1.x/2.x SDKs: no reply to a bad frame or a string `params` (the client waited
    forever), the SDK's version in serverInfo, pydantic dumps for bad arguments, titles in every schema."""
    import stele

    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    call = lambda i, params: json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})  # noqa: E731
    frames = _exchange(repo, [
        init, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        "{this is not json",
        call(4, "recall everything"),
        call(5, {"name": "recall", "arguments": {"files": 3}}),
        call(6, {"name": "remember", "arguments": {"text": "x" * (edit.MAX_BODY_BYTES + 1)}}),
    ])
    by_id = {f.get("id"): f for f in frames}
    assert by_id[1]["result"]["serverInfo"]["version"] == stele.__version__
    schemas = json.dumps([t["inputSchema"] for t in by_id[2]["result"]["tools"]])
    assert '"title": "' not in schemas and '"title": {"anyOf"' in schemas  # remember's own `title` argument stays
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[4]["error"]["code"] == -32602 and "must be an object" in by_id[4]["error"]["message"]
    bad = by_id[5]["result"]
    text = bad["content"][0]["text"]
    assert bad["isError"] and text.startswith("invalid arguments for recall:") and "prompt: field required" in text
    assert "\n" not in text and "pydantic" not in text and "http" not in text
    big = by_id[6]["result"]
    assert big["isError"] and "a fact holds at most" in big["content"][0]["text"]


def test_with_a_stele_session_set_what_recall_showed_goes_into_its_log(repo, monkeypatch):
    from stele.serve.mcp import recall_text
    from stele.session import sessions, wal

    write_fact(repo, "DEC-0001", "decision", "Rate limiting sits in front of the auth middleware")
    assert "DEC-0001" in recall_text(Project(repo), "why does rate limiting sit in front of auth?")
    assert wal.segments(Project(repo)) == []  # no session: nothing is logged
    monkeypatch.setenv(wal.SESSION_ENV, "mcp-run")
    recall_text(Project(repo), "why does rate limiting sit in front of auth?")
    [note] = [e for e in wal.read_all(Project(repo)) if sessions.event(e) == sessions.DELIVERED]
    assert note.extra["hook"] == "mcp:recall" and sessions.delivered_ids(note) == ["DEC-0001"]


def test_a_deeply_nested_request_is_answered_and_the_server_keeps_serving(repo):
    """10,000 nested brackets raised RecursionError out of the JSON parser and `stele mcp` exited."""
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    frames = _exchange(repo, [
        init, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "[" * 10_000 + "]" * 10_000,
        '{"jsonrpc": "2.0", "id": 3, "params": ' + "[" * 10_000 + "]" * 10_000 + "}",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ])
    errors = [f for f in frames if "error" in f]
    assert len(errors) == 2 and all("nested too deeply" in f["error"]["message"] for f in errors)
    assert any(f.get("id") == 2 and f["result"]["tools"] for f in frames)


def _modern_sdk() -> bool:
    try:
        from mcp.client.client import Client  # noqa: F401
        from mcp.types import LATEST_PROTOCOL_VERSION
    except ImportError:
        return False
    return LATEST_PROTOCOL_VERSION >= "2026-07-28"


@pytest.mark.skipif(not _modern_sdk(), reason="the installed MCP SDK does not speak the 2026-07-28 revision")
def test_the_2026_07_28_revision_beside_2025_11_25(repo):
    """A client of the 2026-07-28 revision finds the server by `server/discover` (no initialize) and gets
    results with `resultType`, `ttlMs` and `cacheScope`; `tools/list` is the same list every time; a client
    that starts with the initialize handshake still gets 2025-11-25."""
    from mcp import ClientSession
    from mcp.client.client import Client
    from mcp.client.stdio import stdio_client

    ids = _facts(repo)

    async def modern() -> dict:
        async with Client(_params(repo), cache=None) as c:
            first, second = await c.list_tools(), await c.list_tools()
            shown = await c.call_tool("show", {"id": ids["dec"]})
            return {"version": c.session.protocol_version, "first": first, "second": second, "shown": shown}

    async def legacy() -> str:
        async with stdio_client(_params(repo)) as (read, write), ClientSession(read, write) as s:
            return (await s.initialize()).protocol_version

    r = anyio.run(modern)
    assert r["version"] == "2026-07-28"
    tools = [t.model_dump(mode="json") for t in r["first"].tools]
    assert tools == [t.model_dump(mode="json") for t in r["second"].tools]
    assert [t["name"] for t in tools] == ["recall", "search", "show", "remember"]
    assert (r["first"].result_type, r["first"].cache_scope, r["first"].ttl_ms) == ("complete", "private", 0)
    assert r["shown"].result_type == "complete" and ids["dec"] in r["shown"].content[0].text
    assert anyio.run(legacy) == "2025-11-25"


def test_recall_filters_choose_candidates_before_ranking_through_a_real_client(repo):
    """The HTTP API's retrieve filters, through the MCP `recall` tool (one home: retrieve.filters): 31
    notes on one topic, one tagged issue 101 and one carrying a rare token, are chosen before the
    ranking cuts the window; `fts` matches whole tokens only; the schema advertises the filters."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from tests.helpers import POOL_QUESTION, pool_notes

    ids, q = pool_notes(repo), POOL_QUESTION

    async def session() -> dict:
        async with stdio_client(_params(repo)) as (read, write), ClientSession(read, write) as c:
            await c.initialize()
            listed = [[t.model_dump(mode="json") for t in (await c.list_tools()).tools] for _ in range(2)]
            calls = {"plain": {}, "issue": {"issue": "101"}, "pr": {"pr": "5"}, "fts": {"fts": "ZQXV9"},
                     "part": {"fts": "zqxv"}, "blank": {"fts": "  !! "}}
            out = {name: await c.call_tool("recall", {"prompt": q, **args}) for name, args in calls.items()}
            return {"listed": listed, **out}

    r = anyio.run(session)
    assert r["listed"][0] == r["listed"][1]
    recall_tool = next(t for t in r["listed"][0] if t["name"] == "recall")
    recall_schema = recall_tool.get("inputSchema") or recall_tool["input_schema"]  # 1.x, 2.x
    assert list(recall_schema["properties"]) == ["prompt", "files", "as_of", "issue", "pr", "path", "fts"]
    shown = {name: {i for i in ids if i in r[name].content[0].text} for name in ("plain", "issue", "fts", "part")}
    assert ids[17] not in shown["plain"] and len(shown["plain"]) >= 2  # ranked out without the filter
    assert shown["issue"] == {ids[17]}, r["issue"].content[0].text
    assert shown["fts"] == {ids[-1]}, r["fts"].content[0].text
    assert shown["part"] == set() and "passes the filters" in r["part"].content[0].text
    assert "passes the filters" in r["pr"].content[0].text
    assert _is_error(r["blank"]) and "fts holds no word" in r["blank"].content[0].text


def test_recall_text_filters_facts_by_whole_tokens(repo):
    from stele.serve.mcp import recall_text

    ids = _facts(repo)
    q = "where does rate limiting sit relative to auth?"
    assert ids["dec"] in recall_text(Project(repo), q, fts="BCRYPT floods")
    assert ids["dec"] not in recall_text(Project(repo), q, fts=ids["dec"].split("-")[1][:2])
    with pytest.raises(SteleError, match="fts holds no word"):
        recall_text(Project(repo), q, fts="--")


def test_a_message_the_sdk_cannot_read_is_answered_not_dropped(repo):
    """Each of these passed the screen and the SDK dropped it without a word, so the client waited
    forever: a batch, a request whose id is null, a float or an object, a method that is not a string,
    a message with an id and nothing else, and nesting the SDK's parser refuses (about 200 levels) but
    Python's reads."""
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    unread = [
        json.dumps([{"jsonrpc": "2.0", "id": 10, "method": "ping"}, {"jsonrpc": "2.0", "id": 11, "method": "ping"}]),
        "[]",
        json.dumps({"jsonrpc": "2.0", "id": None, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "id": 12, "method": 5}),
        json.dumps({"jsonrpc": "2.0", "id": 13}),
        '{"jsonrpc": "2.0", "id": 14, "method": "ping", "params": {"a": ' + "[" * 300 + "]" * 300 + "}}",
    ]
    lines = [init, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), *unread,
             json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})]
    proc = subprocess.Popen([sys.executable, "-m", "stele", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=repo, env=_env(repo))
    watchdog = threading.Timer(60, proc.kill)  # a dropped message would otherwise wait forever here
    watchdog.start()
    try:
        proc.stdin.write("".join(x + "\n" for x in lines))
        proc.stdin.flush()
        frames = []
        while not frames or frames[-1].get("id") != 2:  # stdin stays open until the last answer is in
            frames.append(json.loads(proc.stdout.readline()))
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        watchdog.cancel()
        proc.kill()
    errors = [f for f in frames if "error" in f]
    assert len(errors) == len(unread), frames
    assert all(f["error"]["code"] == -32600 and "\n" not in f["error"]["message"] for f in errors)
    assert [f["id"] for f in errors] == [None, None, None, None, None, 12, 13, 14]
    assert "batch" in errors[0]["error"]["message"] and "nested" in errors[-1]["error"]["message"]
    assert frames[-1]["result"]["tools"]  # and the server kept serving


def test_remember_bounds_the_whole_fact_not_only_its_text(repo):
    """The 64 KiB bound held for the text alone: 20,000 anchors through `remember` wrote a 790 KB fact,
    and `stele doctor` then took two minutes to report 20,000 broken anchors."""
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    anchors = [f"src/module_{i:05d}.py" for i in range(4000)]
    frames = _exchange(repo, [init, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                              json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                                  "name": "remember", "arguments": {"text": "Modules are generated.",
                                                                    "anchors": anchors}}})])
    result = frames[-1]["result"]
    assert result["isError"] and "a fact holds at most 65536" in result["content"][0]["text"]
    assert [p.name for p in (repo / "docs" / "memory").rglob("*.md")] == ["README.md"]  # nothing written


def _shown(repo: Path, fact_id: str) -> str:
    """What the `show` tool answers (its text, neutralized, as the tool wrapper does)."""
    from stele.neutralize import neutralize

    return neutralize(fact_text(load(Project(repo)), fact_id))


@pytest.mark.parametrize("payload", [p[1] for p in DANGEROUS], ids=[p[0] for p in DANGEROUS])
def test_show_marks_a_check_message_doctor_would_flag(repo, payload):
    """A fact's `check:` message reaches the agent through `show` as it does through the pre-edit hook
    (`hooks.edit.broken_text`): marked when doctor would flag it, never as a rule to follow."""
    write_fact(repo, "CON-AAAA", "constraint", "No eval in payments", "No eval.", anchors=["src/pay.py"],
               check={"forbid": "eval\\(", "message": payload})
    line = next(line for line in _shown(repo, "CON-AAAA").splitlines() if "check: forbids /eval" in line)
    assert line.startswith("[FLAGGED by stele doctor ("), line


def test_show_marks_a_flagged_fact_and_redacts_a_check_message_as_a_violation_does(repo):
    """The fact itself is marked under its label when its title or body would be flagged (as recall's
    blocks are), and a check message is shown as a violation shows it: a credential in it redacted."""
    token = "ghp_" + "x7Kq2mW9pL4vN8rT3yB6cF1hJ5dG0sZ2aE4u"
    write_fact(repo, "NOTE-BBBB", "note", "Deploy notes", DANGEROUS[0][1])
    write_fact(repo, "CON-CCCC", "constraint", "No tokens in config", "Tokens come from the vault.",
               check={"forbid": "ghp_", "message": f"a token such as {token} belongs in the vault"})
    write_fact(repo, "DEC-DDDD", "decision", "Clean", "Nothing to flag.", check={"forbid": "eval\\("})
    assert _shown(repo, "NOTE-BBBB").splitlines()[1].startswith("[FLAGGED by stele doctor (")
    shown = _shown(repo, "CON-CCCC")
    assert token not in shown and "[REDACTED:GitHub token] belongs in the vault" in shown
    assert "FLAGGED" not in _shown(repo, "DEC-DDDD")
