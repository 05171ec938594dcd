"""`stele task ...` through the real entry point, in real temporary git repositories."""
import json
import os
import subprocess
import sys

import pytest

from stele import config
from tests.helpers import git, invoke


def task(*args: str) -> str:
    r = invoke("task", "new", *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)["id"]


def ids(*args: str) -> list[str]:
    r = invoke("task", *args, "--json")
    assert r.code == 0, r.err
    return [t["id"] for t in json.loads(r.out)["tasks"]]


def test_new_list_ready_show(repo):
    epic = task("Auth hardening", "--kind", "epic")
    redis = task("Set up redis", "--parent", epic)
    limit = task("Rate limit login", "--parent", epic, "--priority", "high")
    assert invoke("link", redis, "blocks", limit).code == 0
    assert ids("list") == [limit, epic, redis]
    assert ids("ready") == [redis]
    table = invoke("task", "ready")
    assert table.code == 0 and "Set up redis" in table.out and "Rate limit" not in table.out
    shown = json.loads(invoke("task", "show", limit, "--json").out)
    assert shown["blocks"] == [epic] and [p["id"] for p in shown["related"]["blocks"]] == [epic]
    assert shown["blocked_by"] == [redis] and [c["id"] for c in shown["related"]["blockers"]] == [redis]
    human = invoke("task", "show", epic)
    assert human.code == 0 and "Set up redis" in human.out and "Rate limit login" in human.out
    assert invoke("task", "show", "TASK-ZZZZ").code == 1


def test_claim_conflict_is_exit_1_and_one_line_naming_the_holder(repo):
    t = task("Contended")
    won = invoke("task", "claim", t, "--agent", "alice", "--lease", "30m")
    first = won.out.splitlines()[0]  # the claim line; the run's context snapshot follows it
    assert won.code == 0 and first.startswith(f"claimed {t} until ") and first.endswith("(token 1)")
    lost = invoke("task", "claim", t, "--agent", "bob")
    assert lost.code == 1 and lost.out == ""
    assert lost.err.count("\n") == 1
    assert lost.err.startswith(f"stele: {t} is held by alice (host ") and " since 20" in lost.err
    assert " lease until 20" in lost.err and "(token 1)" in lost.err
    assert ids("list", "--mine", "--agent", "alice") == [t] and ids("list", "--mine", "--agent", "bob") == []
    assert ids("ready") == []
    listed = json.loads(invoke("task", "claims", "--json").out)
    got = [(c["task"], c["agent"], c["status"], c["token"]) for c in listed["claims"]]
    assert got == [(t, "alice", "held", 1)]

    assert invoke("task", "release", t, "--agent", "bob").code == 1
    released = invoke("task", "release", t, "--agent", "alice")
    assert released.code == 0 and released.out == f"released {t} (token 1)\n"
    again = invoke("task", "claim", t, "--agent", "bob", "--json")
    data = json.loads(again.out)
    assert (data["action"], data["claim"]["agent"], data["claim"]["token"]) == ("claimed", "bob", 2)
    assert invoke("task", "claim", t, "--lease", "soon").code == 2


def test_claim_names_records_for_its_run_even_manual_ones(repo):
    t = task("Needs the staging notes")
    manual = json.loads(invoke("remember", "Staging is reset every Monday at 06:00 UTC.", "--kind", "note",
                               "--delivery", "manual", "--json").out)["id"]
    other = json.loads(invoke("remember", "The payments sandbox rejects amounts over 10k.", "--kind", "fyi",
                              "--delivery", "manual", "--json").out)["id"]
    r = invoke("task", "claim", t, "--record", manual.lower(), other, "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert [i["key"] for i in data["snapshot"]["parts"]["named"]] == [manual, other]
    assert set(data["elapsed_ms"]) == {"claim_ms", "snapshot_ms"}
    assert invoke("task", "release", t).code == 0
    repeated = invoke("task", "claim", t, "-r", manual, "-r", other)
    assert repeated.code == 0 and "## Records named for this run" in repeated.out
    assert invoke("task", "release", t).code == 0
    missing = invoke("task", "claim", t, "--record", "DEC-ZZZZ")
    assert missing.code == 2 and "--record DEC-ZZZZ: no fact has that id" in missing.err
    assert json.loads(invoke("task", "claims", "--json").out)["claims"] == []  # nothing was claimed


def test_the_claim_warns_about_an_always_rule_it_leaves_out(repo):
    t = task("Anything")
    rule = json.loads(invoke("remember", "Never push to main directly.", "--kind", "instruction",
                             "--review-after", "2026-01-01", "--json").out)["id"]
    r = invoke("task", "claim", t, "--json")
    warnings = json.loads(r.out)["snapshot"]["warnings"]
    assert r.code == 0 and any(w.startswith(f"stele: {rule} (instruction: ") and "review overdue" in w
                               for w in warnings)
    assert invoke("task", "release", t).code == 0
    text = invoke("task", "claim", t)
    assert f"{rule} (instruction: Never push to main directly.) is an `always` rule but was left out" \
        in text.err


def test_a_claim_never_loads_typer_or_rich(repo):
    code = ("import sys\nfrom stele.cli.entry import main\n"
            "try:\n    main(['task', 'claim', 'TASK-ZZZZ'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('typer', 'rich', 'click', 'git') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo)
    assert r.stdout.strip() == "[]", r.stderr
    assert "no fact with id TASK-ZZZZ" in r.stderr
    assert git(repo, "for-each-ref", "refs/stele/") == ""  # the claim on a task that is not there is undone


# A racing loser in a fresh process, as 16 agents run it: it read the ref while the task was free (the
# first read is made to see nothing), so it writes its record and loses the swap to the holder.
RACING_LOSER = """
import sys
from stele.tasks import claims
real, calls = claims.read, []
def read(project, task):
    calls.append(task)
    return None if len(calls) == 1 else real(project, task)
claims.read = read
from stele.cli.entry import main
try:
    main(['task', 'claim', sys.argv[1], '--agent', 'late'])
except SystemExit as e:
    print('exit', e.code)
heavy = ('yaml', 'stele.record.load', 'stele.record.frontmatter', 'stele.tasks.board', 'stele.snapshot.build',
         'stele.index.build', 'tantivy', 'dataclasses', '_strptime')
print(sorted(m for m in heavy if m in sys.modules), len(calls))
"""


def test_a_racing_loser_is_answered_without_the_record_parser_the_board_or_the_index(repo):
    t = task("Raced")
    assert invoke("task", "claim", t, "--agent", "first").code == 0  # its snapshot builds the index
    config.load(repo / ".stele/config.yaml")  # caches the parsed config there: no YAML parser after that
    r = subprocess.run([sys.executable, "-c", RACING_LOSER, t], capture_output=True, text=True, cwd=repo)
    assert r.stdout.splitlines() == ["exit 1", "[] 2"], r.stderr  # lost the swap, then read who won
    assert r.stderr.startswith(f"stele: {t} is held by first (host ")


def test_claims_on_what_is_not_an_open_task_leave_no_claim(repo):
    epic, t = task("Auth", "--kind", "epic"), task("Finished")
    assert invoke("task", "done", t).code == 0
    gone = invoke("task", "claim", "TASK-ZZZZ")
    assert gone.code == 1 and gone.err.startswith("stele: no fact with id TASK-ZZZZ in docs/memory/")
    done = invoke("task", "claim", t)
    assert done.code == 1 and f"{t} is done; reopen it first" in done.err
    container = invoke("task", "claim", epic)
    assert container.code == 1 and f"{epic} is an epic, a container" in container.err
    assert git(repo, "for-each-ref", "refs/stele/") == ""  # each was decided and undone, or refused first
    assert invoke("task", "claim", "not-an-id").code == 1


def test_agent_and_session_from_the_environment(repo, monkeypatch):
    t = task("Env")
    monkeypatch.setenv("STELE_AGENT", "claude-code")
    monkeypatch.setenv("STELE_SESSION", "sess-1")
    assert invoke("task", "claim", t).code == 0
    claim = json.loads(invoke("task", "claims", "--json").out)["claims"][0]
    assert (claim["agent"], claim["session"]) == ("claude-code", "sess-1")
    assert ids("list", "--mine") == [t]
    resumed = invoke("task", "resume")
    assert resumed.code == 0 and resumed.out.startswith(f"{t}: Env\n")
    assert "claim: held by claude-code (session sess-1" in resumed.out
    assert "sess-1 claim: claimed" in resumed.out
    data = json.loads(invoke("task", "resume", "--json").out)
    assert data["id"] == t and [h["type"] for h in data["history"]] == ["claim", "snapshot"]


def test_done_and_cancel(repo):
    t = task("Ship it")
    fyi = json.loads(invoke("remember", "Old gateway still routes /v1.", "--kind", "fyi",
                            "--link", f"expires-on:{t}", "--json").out)["id"]
    assert invoke("task", "claim", t, "--agent", "alice").code == 0
    assert invoke("task", "done", t, "--agent", "bob").code == 1
    r = invoke("task", "done", t, "--agent", "alice", "--note", "shipped")
    assert r.code == 0 and f"{t} is done; released its claim (token 1)" in r.out and f"retired {fyi}" in r.out
    assert json.loads(invoke("show", fyi, "--json").out)["status"] == "retired"
    c = task("Never mind")
    assert invoke("task", "cancel", c).code == 0
    assert ids("list") == [] and ids("list", "--status", "cancelled") == [c]
    assert ids("list", "--all") == [t, c] or ids("list", "--all") == [c, t]


def test_concurrent_cli_processes_one_winner(repo):
    """Real `stele task claim` processes started together: one exit 0, the rest exit 1 naming it."""
    t = task("Raced by processes")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-m", "stele", "task", "claim", t, "--agent", f"agent-{i}"],
                              cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(4)]
    results = [(p.wait(timeout=60), p.stdout.read(), p.stderr.read()) for p in procs]
    winners = [i for i, (code, _, _) in enumerate(results) if code == 0]
    assert len(winners) == 1, results
    for i, (code, _, err) in enumerate(results):
        if i != winners[0]:
            assert code == 1 and err.startswith(f"stele: {t} is held by agent-{winners[0]} "), err


@pytest.fixture
def two_clones(tmp_path, repo, monkeypatch):
    """`repo` (with one task) pushed to a bare remote, and a second clone of it."""
    t = task("Shared across machines")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "task")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(bare), "second")
    return repo, tmp_path / "second", t


def test_remote_claims_between_two_clones(two_clones, monkeypatch):
    first, second, t = two_clones
    won = invoke("task", "claim", t, "--agent", "alice", "--remote")
    assert won.code == 0 and won.out.splitlines()[0].endswith("pushed to origin"), won.err
    monkeypatch.chdir(second)
    lost = invoke("task", "claim", t, "--agent", "bob", "--remote")
    assert lost.code == 1 and lost.err.startswith(f"stele: {t} is held by alice ")
    listed = json.loads(invoke("task", "claims", "--remote", "--json").out)
    assert listed["remote"] == "origin" and [c["agent"] for c in listed["claims"]] == ["alice"]
    named = json.loads(invoke("task", "claims", "origin", "--json").out)
    assert named["remote"] == "origin" and [c["agent"] for c in named["claims"]] == ["alice"]
    assert invoke("task", "claims", "--json").out.count('"task"') == 0  # nothing claimed in this clone
    assert ids("ready") == []  # the fetched remote claim counts

    monkeypatch.chdir(first)
    assert invoke("task", "release", t, "--agent", "alice").code == 0  # released on origin too
    monkeypatch.chdir(second)
    again = invoke("task", "claim", t, "--agent", "bob", "--remote", "origin")  # what users type
    assert again.code == 0 and "(token 2)" in again.out and "pushed to origin" in again.out
    released = invoke("task", "release", t, "--agent", "bob", "--remote", "origin")
    assert released.code == 0 and released.out == f"released {t} (token 2); pushed to origin\n"
    third = invoke("task", "claim", t, "--agent", "bob", "--remote-name", "origin")
    assert third.code == 0 and "(token 3)" in third.out


def test_registering_the_task_and_knowledge_commands_loads_no_record_parser():
    # every command module is imported for every command: what they import at the top, all commands pay
    code = ("import sys, stele.cli.main\n"
            "print(sorted(m for m in ('yaml', 'stele.tasks.board', 'stele.record.knowledge') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


@pytest.mark.parametrize("command", [("task", "new"), ("knowledge", "draft")])
def test_a_repeated_title_is_refused_with_a_flag_that_exists(repo, command):
    """`task new` and `knowledge draft` pointed to --allow-duplicate, which they did not have: a
    recurring task could not be created."""
    title = "Rotate the staging certificates"
    assert invoke(*command, title).code == 0
    again = invoke(*command, title)
    assert again.code == 1 and "--allow-duplicate" in again.err
    assert invoke(*command, title, "--allow-duplicate").code == 0
