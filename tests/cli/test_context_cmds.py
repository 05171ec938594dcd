"""`stele context`, `context preview`, `context doctor` and `stele snapshot` through the real entry point."""
import json
from pathlib import Path

from stele.project import Project
from stele.session import wal
from tests.helpers import git, invoke, write_fact

KIB = "x" * 1023  # plus the newline the record adds: a 1 KiB body


def remember(*args: str) -> str:
    r = invoke("remember", *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)["id"]


def _current_doc(body: str, title: str) -> str:
    """A document through its lifecycle: drafted, reviewed, promoted."""
    fid = remember(body, "--kind", "document", "--title", title)
    assert invoke("knowledge", "review", fid, "--note", "checked").code == 0
    assert invoke("knowledge", "promote", fid).code == 0
    return fid


def context(*args: str) -> dict:
    r = invoke("context", *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def rules(n: int) -> list[str]:
    return sorted(remember(f"{KIB}", "--kind", "instruction", "--title", f"Rule {i}") for i in range(n))


def usage(snap: dict) -> dict:
    return {row["part"]: row for row in snap["usage"]}


def test_fourteen_always_records_of_one_kib_are_all_delivered_within_16_kib(repo):
    ids = rules(14)
    snap = context()
    assert [i["key"] for i in snap["parts"]["always"]] == ids
    records = usage(snap)["records"]
    assert records["items"] == 14 and records["limit_items"] == 14
    assert 14 * 1024 < records["bytes"] <= 16 * 1024 and records["limit_bytes"] == 16384
    assert snap["stored"] is None and not (repo / ".stele/snapshots").exists()


def test_twenty_always_records_of_one_kib_fail_naming_those_that_do_not_fit(repo):
    ids = rules(20)
    r = invoke("context")
    assert r.code == 1 and r.out == ""
    size = len(f"[{ids[0]}] instruction: Rule 0\n{KIB}\n".encode())
    missing, fitting = ids[16384 // size:], ids[:16384 // size]
    assert missing and all(fid in r.err for fid in missing) and not any(fid in r.err for fid in fitting)
    assert "required records do not fit the snapshot" in r.err and len(r.err.strip().splitlines()) == 1


def test_a_stored_snapshot_is_unchanged_after_its_rules_are_edited(repo):
    rule = remember("Public API fields use snake_case.", "--kind", "instruction", "--priority", "critical")
    r = invoke("context", "--save", "--json")
    assert r.code == 0, r.err
    saved = json.loads(r.out)
    path = repo / saved["stored"]
    before = path.read_bytes()
    assert f"[{rule}] instruction: Public API fields use snake_case. (priority critical)\n" in saved["text"]
    assert invoke("edit", rule, "--body", "Public API fields use camelCase.").code == 0
    assert invoke("retire", rule, "--why", "changed our mind").code == 0
    assert path.read_bytes() == before
    shown = json.loads(invoke("snapshot", "show", saved["run"], "--json").out)
    assert shown["text"] == saved["text"] and "snake_case" in shown["parts"]["always"][0]["text"]
    assert context()["parts"]["always"] == []  # the next run gets the new state


def _project_with_code(repo: Path) -> dict:
    src = repo / "src"
    src.mkdir()
    (src / "auth.py").write_text(
        "import time\n\n\nclass RateLimiter:\n" + "".join(f"    # limiter detail {n}\n" for n in range(40)) +
        "    def check(self, addr):\n        return True\n\n\n"
        "def login(request):\n" + "".join(f"    step_{n}(request)\n" for n in range(40)) + "    return ok\n")
    (src / "billing.py").write_text("def invoice_total(lines):\n    return sum(l.amount for l in lines)\n")
    git(repo, "add", "-A")
    ids = {
        "rule": remember("Never log passwords.", "--kind", "instruction"),
        "dec": remember("Rate limiting sits before auth so floods never reach bcrypt.", "--kind", "decision",
                        "--anchor", "src/auth.py::RateLimiter.check"),
        "unrelated": remember("Invoices round half to even.", "--kind", "decision"),
        "doc": _current_doc("## Summary\n\nHow login works end to end.", "Login"),
        "draft": remember("A draft about login.", "--kind", "document", "--title", "Login draft"),
    }
    ids["task"] = remember("Make the login rate limiting configurable per route.", "--kind", "task",
                           "--title", "Configurable rate limiting for login")
    return ids


def test_a_task_snapshot_orders_records_code_and_briefing(repo):
    ids = _project_with_code(repo)
    snap = context("--task", ids["task"])
    assert snap["inputs"]["task"]["id"] == ids["task"] and "configurable per route" in snap["inputs"]["query"]
    assert [i["key"] for i in snap["parts"]["always"]] == [ids["rule"]]
    assert ids["dec"] in [i["key"] for i in snap["parts"]["ranked"]]
    code = snap["parts"]["code"]
    assert code[0]["path"] == "src/auth.py" and code[0]["anchored_by"] == [ids["dec"]]
    assert "def check(self, addr):" in code[0]["text"] and "class RateLimiter" in code[0]["text"]
    assert any("def login(request):" in c["text"] for c in code[1:])  # found by search for the task
    assert [b["key"] for b in snap["parts"]["briefing"]] == [ids["doc"]]
    text = snap["text"]
    assert text.index("## Rules for every run") < text.index("## Records related") < text.index(
        "## Code for this task") < text.index("## Knowledge briefing")
    assert usage(snap)["total"]["bytes"] <= 49152


def test_the_code_index_follows_the_working_tree(repo):
    _project_with_code(repo)
    before = context("--prompt", "refund an invoice payment")["parts"]["code"]
    assert not any("def refund" in c["text"] for c in before)
    billing = repo / "src/billing.py"
    billing.write_text(billing.read_text() + "\n\ndef refund_invoice(payment):\n    return payment.reverse()\n")
    code = context("--prompt", "refund an invoice payment")["parts"]["code"]
    assert any("def refund_invoice(payment):" in c["text"] for c in code)
    git(repo, "rm", "-q", "-f", "src/billing.py")
    code = context("--prompt", "refund an invoice payment")["parts"]["code"]
    assert not any(c["path"] == "src/billing.py" for c in code)


def test_preview_stores_nothing_and_shows_the_budget_table(repo):
    ids = _project_with_code(repo)
    r = invoke("context", "preview", ids["task"])
    assert r.code == 0, r.err
    assert "preview (not stored)" in r.out and "budget use" in r.out and "records" in r.out
    assert "## Code for this task" in r.out and not (repo / ".stele/snapshots").exists()


def test_save_logs_the_run_to_the_session_and_list_show_find_it(repo, monkeypatch):
    ids = _project_with_code(repo)
    monkeypatch.setenv("STELE_SESSION", "sess-1")
    r = invoke("context", "--task", ids["task"], "--save")
    assert r.code == 0, r.err
    run = r.err.split("saved run ")[1].split()[0]
    assert f"saved run {run} to .stele/snapshots/{run}.json" in r.err
    assert r.out.startswith("Stele context snapshot for")
    entries = [e for e in wal.read_all(Project(repo)) if e.type == "snapshot"]
    assert [(e.session, e.task, e.refs) for e in entries] == [("sess-1", ids["task"], {"run": run})]
    listed = json.loads(invoke("snapshot", "list", "--json").out)["runs"]
    assert [(x["run"], x["task"]) for x in listed] == [(run, ids["task"])]
    monkeypatch.setenv("COLUMNS", "80")
    table = invoke("snapshot", "list").out
    assert run in table and ids["task"] in table  # each whole on one line at 80 columns
    assert max(len(line) for line in table.splitlines()) <= 80
    shown = invoke("snapshot", "show", run[:10])
    assert shown.code == 0 and "budget use" in shown.out and "what the agent saw:" in shown.out
    text = json.loads(invoke("snapshot", "show", run, "--json").out)["text"]
    assert shown.out.rstrip().endswith(text.rstrip())
    assert invoke("snapshot", "show", "01XXXXXXXX").code == 1


def test_context_doctor_fails_only_when_every_claim_would(repo):
    ok = invoke("context", "doctor")
    assert ok.code == 0 and "no problems" in ok.out
    old = remember("Old rule.", "--kind", "decision", "--expires", "2026-01-01")
    warn = json.loads(invoke("context", "doctor", "--json").out)
    assert warn["errors"] == 0 and [(f["check"], f["fact"]) for f in warn["findings"]] == [("expired", old)]
    assert invoke("context", "doctor", "--strict").code == 1
    ids = rules(20)
    bad = invoke("context", "doctor")
    assert bad.code == 1 and "[always-budget]" in bad.out and ids[-1] in bad.out and "1 warnings" in bad.out


def test_unknown_ids_are_clear_errors(repo):
    ids = _project_with_code(repo)
    assert "no fact with id TASK-ZZZZ" in invoke("context", "--task", "TASK-ZZZZ").err
    r = invoke("context", "--task", ids["dec"])
    assert r.code == 2 and "is a decision, not a task" in r.err
    assert "--record DEC-ZZZZ: no fact has that id" in invoke("context", "--record", "DEC-ZZZZ").err


def test_every_claim_stores_the_snapshot_of_its_run(repo):
    ids = _project_with_code(repo)
    r = invoke("task", "claim", ids["task"], "--agent", "alice")
    assert r.code == 0, r.err
    claim_line, stored_line, *_ = r.out.splitlines()
    run = stored_line.split()[2]
    assert claim_line.startswith(f"claimed {ids['task']}")
    assert stored_line.startswith(f"context snapshot {run} stored")
    data = json.loads(invoke("snapshot", "show", run, "--json").out)
    assert data["inputs"]["task"]["id"] == ids["task"] and data["inputs"]["claim"]["agent"] == "alice"
    assert r.out.endswith(data["text"]) and "## Code for this task" in data["text"]


def test_a_claim_whose_rules_do_not_fit_fails_and_claims_nothing(repo):
    task = remember("Some work.", "--kind", "task")
    ids = rules(20)
    r = invoke("task", "claim", task, "--agent", "alice")
    assert r.code == 1 and "required records do not fit" in r.err and ids[-1] in r.err
    assert json.loads(invoke("task", "claims", "--json").out)["claims"] == []
    assert not (repo / ".stele/snapshots").exists()


def test_without_stele_init_context_sends_the_rules_and_creates_no_index(plain_repo):
    write_fact(plain_repo, "INS-AAAA", "instruction", "Log in through the limiter")
    (plain_repo / "src").mkdir()
    (plain_repo / "src/app.py").write_text("def login(request):\n    return request.user\n")
    git(plain_repo, "add", "-A")
    for _ in range(2):  # the first run must not set up what the second would then use
        r = invoke("context", "--prompt", "the login request of a user", "--json")
        assert r.code == 0, r.err
        assert "stele: no code: Stele is not set up in this repository: run `stele init`" in r.err
        parts = json.loads(r.out)["parts"]
        assert [i["key"] for i in parts["always"]] == ["INS-AAAA"] and parts["code"] == []
        assert not (plain_repo / ".stele").exists()


def test_the_session_start_hook_and_context_deliver_the_same_standing_rules(repo):
    """One predicate (`delivery.is_standing_rule`): a document marked `always` is knowledge, pulled
    through the briefing, for the hook as for a snapshot (the hook used to push it as a rule)."""
    write_fact(repo, "INS-0001", "instruction", "Open a pull request for every change", priority="low")
    write_fact(repo, "CON-0002", "constraint", "Python 3.11 is the floor", delivery="always",
               priority="critical")
    write_fact(repo, "DOC-0003", "document", "How releases are cut", "The release runbook.",
               delivery="always", status="current")
    write_fact(repo, "TASK-0004", "task", "Cut the release", delivery="always")
    write_fact(repo, "DEC-0005", "decision", "A draft decision", delivery="always", status="draft")
    snap = context()
    delivered = [i["key"] for i in snap["parts"]["always"]]
    assert delivered == ["CON-0002", "INS-0001"]
    assert [i["key"] for i in snap["parts"]["briefing"]] == ["DOC-0003"]
    r = invoke("hook", "session-start", input=json.dumps({"session_id": "s1", "source": "startup"}))
    assert r.code == 0
    hook_rules = r.out.split("Standing instructions and constraints:")[1].split("Open tasks:")[0]
    shown = [fid for fid in ("CON-0002", "INS-0001", "DOC-0003", "TASK-0004", "DEC-0005") if fid in hook_rules]
    assert shown == delivered


def test_ranked_records_and_code_must_bear_on_the_task_and_always_rules_bring_no_code(repo):
    """The relevance test of recall, piece by piece of the task: a task the record has nothing on
    gets its rules and nothing ranked; the code an `always` rule anchors comes only when it matches."""
    ids = _project_with_code(repo)
    (repo / "Makefile").write_text("verify:\n\tgo vet ./...\n\tgolangci-lint run\n")
    git(repo, "add", "-A")
    make = remember("Run make verify before pushing.", "--kind", "instruction", "--anchor", "Makefile")
    other = remember("Translate the marketing site into Portuguese and Spanish.", "--kind", "task",
                     "--title", "Translate the marketing site")
    snap = context("--task", other)
    assert sorted(i["key"] for i in snap["parts"]["always"]) == sorted([ids["rule"], make])
    assert snap["parts"]["ranked"] == [] and snap["parts"]["code"] == []
    login = context("--task", ids["task"])
    ranked = [i["key"] for i in login["parts"]["ranked"]]
    assert ids["dec"] in ranked and ids["unrelated"] not in ranked
    assert not any(c["path"] == "Makefile" for c in login["parts"]["code"])
    assert any(c["path"] == "Makefile" for c in context("--prompt", "what does make verify run?")["parts"]["code"])
