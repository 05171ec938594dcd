"""`stele eval`'s library: case files read strictly, checks scored as the maintainers' runner scores
them, every case over one open index, and each miss explained in `stele why`'s terms."""
import json
import re

import pytest

from stele.errors import SteleError
from stele.project import Project
from stele.record.load import load
from stele.retrieve import evaluate
from stele.retrieve.evaluate import Case, check, load_cases
from tests.helpers import invoke, write_fact


@pytest.fixture
def shop(repo, fake_model):
    write_fact(repo, "DEC-AGHA", "decision", "Payment retries back off exponentially, at most 3 attempts",
               "Retry a failed charge with jittered backoff.", links={"caused-by": ["LSN-WGV9"]})
    write_fact(repo, "LSN-WGV9", "lesson", "A customer was billed twice during a gateway outage",
               "Immediate retries double-charged cards.")
    write_fact(repo, "RISK-V34N", "risk", "Retry storms overload the payment gateway",
               "Without backoff a gateway blip turns into a flood.", links={"caused-by": ["DEC-AGHA"]})
    write_fact(repo, "INS-0001", "instruction", "Old rule about invoices", "Gone.", status="retired")
    write_fact(repo, "DEC-0002", "decision", "Invoices are immutable once issued",
               "Corrections are new invoices.", anchors=["src/billing.py"])
    (repo / "src").mkdir()
    (repo / "src/billing.py").write_text("def issue(): pass\n")
    return repo


def test_the_starter_never_expects_what_the_ranker_keeps_out(shop):
    write_fact(shop, "COMP-PAY1", "component", "The payment gateway client and its retry loop",
               "Wraps the gateway's HTTP API with retries and idempotency keys.")
    write_fact(shop, "DEC-AGH2", "decision", "Charges carry an idempotency key per order attempt",
               "Each charge request sends a key built from the order id and attempt number.",
               links={"part-of": ["COMP-PAY1"], "relates-to": ["INS-MAN1"]})
    write_fact(shop, "INS-MAN1", "instruction", "Read the gateway runbook before touching retries",
               "The runbook lists the gateway's rate limits.", delivery="manual")
    cases = load_cases(evaluate.write_starter(Project(shop))).cases
    expected = {i for c in cases for i in c.expect + c.expect_top}
    assert expected and not expected & {"COMP-PAY1", "INS-MAN1", "INS-0001"}
    report = evaluate.run(Project(shop), load_cases(Project(shop).memory_dir / "eval.yaml"))
    assert all(r.ok for r in report.cases), [r.as_dict() for r in report.cases if not r.ok]


def test_the_starter_draws_cases_from_real_session_prompts(shop):
    from stele.session import sessions

    sid = sessions.start(Project(shop), agent="claude-code").session
    sessions.log_delivered(Project(shop), sid, "prompt", ["RISK-V34N", "DEC-0002"], "claude-code",
                           prompt="the gateway fell over after a blip, why did we hammer it?")
    sessions.log_edit(Project(shop), sid, ["src/billing.py"], "claude-code")
    sessions.log_delivered(Project(shop), sid, "prompt", ["LSN-WGV9"], "claude-code", prompt="short")
    text = evaluate.starter_text(Project(shop))
    assert "from the prompts of this repository's sessions" in text
    cases = [c for c in load_cases(write_cases(shop, text)).cases if c.id.startswith("asked-")]
    assert [(c.prompt, c.expect) for c in cases] == [
        ("the gateway fell over after a blip, why did we hammer it?", ["DEC-0002"])]  # delivered, then used


def write_cases(repo, text):
    path = repo / "cases.yaml"
    path.write_text(text)
    return path


def test_checks_match_the_runner_on_every_rule():
    out = {"entries": [{"id": "A"}, {"id": "B"}, {"id": "C"}, {"id": "D"}], "risks": [{"id": "R"}]}
    assert check(Case("x", "walk", expect=["A", "R"], expect_top=["R", "B"]), out) == []
    assert check(Case("x", "walk", expect_top=["D"]), out) == ["D not in top 3"]
    assert check(Case("x", "risk", callout=["A"], no_callout=["R"]), out) == [
        "A not in risk callout", "R wrongly in risk callout"]
    assert check(Case("x", "lifecycle", absent=["C"], below=[("A", "B"), ("C", "Z")]), out) == [
        "C should be absent", "A ranked above B", "C ranked above Z"]
    assert check(Case("x", "offtopic"), {"entries": [], "risks": []}) == []
    assert check(Case("x", "offtopic", max_window=5), out)[0].startswith("offtopic prompt raised")
    assert check(Case("x", "short"), {"entries": [{"id": "A"}], "risks": []}) == [
        "short prompt should inject nothing, got ['A']"]
    assert check(Case("x", "lexical"), {"entries": [{"id": str(n)} for n in range(21)], "risks": []}) == [
        "returned 21 entries, more than 20"]


def test_a_case_file_runs_in_one_process_over_one_open_index(shop, monkeypatch):
    from stele.index import build

    opened = []
    real = build.open_index
    monkeypatch.setattr(build, "open_index", lambda *a, **k: opened.append(1) or real(*a, **k))
    path = write_cases(shop, """
today: 2026-11-29
queries:
  - {id: walk-1, type: walk, prompt: "why do payment retries back off exponentially?", expect: [DEC-AGHA, LSN-WGV9]}
  - {id: risk-1, type: risk, prompt: "why do payment retries back off exponentially?", callout: [RISK-V34N]}
  - {id: anchor-1, type: anchor, files: [src/billing.py], expect: [DEC-0002]}
  - {id: life-1, type: lifecycle, prompt: "the old rule about invoices that was retired", absent: [INS-0001]}
  - {id: short-1, type: short, prompt: "fix it"}
  - {id: miss-1, type: lexical, prompt: "invoices are immutable once issued, corrections", expect_top: [LSN-WGV9]}
""")
    report = evaluate.run(Project(shop), load_cases(path))
    assert len(opened) == 1
    assert [r.case.id for r in report.cases if not r.ok] == ["miss-1"]
    assert report.passed == 5 and report.by_type()["walk"] == {"passed": 1, "total": 1}
    miss = report.cases[-1]
    assert miss.fails == ["LSN-WGV9 not in top 3"] and miss.why and miss.why[0].startswith("LSN-WGV9:")
    data = report.as_dict()
    assert set(data) >= {"passed", "total", "by_type", "mean_window", "cases"}
    assert data["total"] == 6 and json.dumps(data)


def test_the_case_files_today_is_pinned(shop):
    write_fact(shop, "DEC-0003", "decision", "Quarterly invoices are batched on the first Monday",
               "Batched.", expires="2026-12-15")
    path = write_cases(shop, """
today: 2027-01-10
queries:
  - {id: expired, type: lifecycle, prompt: "when are quarterly invoices batched?", absent: [DEC-0003]}
""")
    assert evaluate.run(Project(shop), load_cases(path)).passed == 1
    path.write_text(path.read_text().replace("2027-01-10", "2026-12-01").replace("absent", "expect"))
    assert evaluate.run(Project(shop), load_cases(path)).passed == 1


@pytest.mark.parametrize("text,message", [
    ("queries: nope", "expected a list of cases"),
    ("queries:\n  - {prompt: hi}", "case 1: `id` is missing"),
    ("queries:\n  - {id: a, prompt: hi, expcet: [X]}", "case 1 (a): unknown key 'expcet'"),
    ("queries:\n  - {id: a, prompt: hi, expect: X}", "case 1 (a): `expect` must be a list of ids"),
    ("queries:\n  - {id: a, prompt: hi}\n  - {id: a, prompt: ho}", "case 2: the id 'a' is used twice"),
    ("queries:\n  - {id: a}", "case 1 (a): give a `prompt`"),
    ("today: someday\nqueries: []", "today 'someday' is not a date"),
    ("queries: [\n", "invalid YAML"),
    ("quries: []", "unknown top-level key 'quries'"),
])
def test_a_bad_case_file_is_one_line_naming_the_case_and_key(tmp_path, text, message):
    path = tmp_path / "cases.yaml"
    path.write_text(text)
    with pytest.raises(SteleError, match=re.escape(message)) as e:
        load_cases(path)
    assert "\n" not in str(e.value)


def test_the_starter_cases_come_from_the_record_and_pass_on_it(shop):
    path = evaluate.write_starter(Project(shop))
    cases = load_cases(path)
    ids = {c.id for c in cases.cases}
    assert {"anchor-dec-0002", "offtopic-1"} <= ids
    assert {c.type for c in cases.cases} == {"paraphrase", "walk", "anchor", "offtopic"}
    assert any(i.startswith("body-dec-") for i in ids) and any(i.startswith("body-risk-") for i in ids)
    titles = {f.title.lower() for f in load(Project(shop)).facts.values()}
    assert not [c.prompt for c in cases.cases if c.prompt.lower() in titles]  # 100% by construction, no more
    assert path.read_text().startswith("# Cases for `stele eval")
    with pytest.raises(SteleError, match="already exists"):
        evaluate.write_starter(Project(shop))
    report = evaluate.run(Project(shop), cases)
    assert all(r.ok for r in report.cases if r.case.type != "offtopic"), [r.as_dict() for r in report.cases]
    assert invoke("doctor").code == 0  # the starter file beside the facts is not read as one


def test_a_miss_found_by_search_names_its_one_reason(shop):
    path = write_cases(shop, """
today: 2026-11-29
queries:
  - {id: weak-1, type: paraphrase, prompt: "are invoices ever printed on paper for the weather office?", expect: [LSN-WGV9]}
""")
    why = evaluate.run(Project(shop), load_cases(path)).cases[0].why
    assert any(line.startswith("LSN-WGV9: found by search, not a seed: ") for line in why), why
    assert not any("not a seed: not a seed" in line for line in why), why


def test_a_session_case_is_warned_of_a_risk_it_was_only_listed_once(repo):
    """`stele eval`'s session cases follow the prompt hook's rule (`retrieve.delivered`): a risk an
    earlier prompt listed is called out once when a follow-up puts it on the path, then never again,
    and is not listed again either way (tests/hooks/test_warned.py runs the same through the hook)."""
    from tests.helpers import write_sample_record

    write_sample_record(repo)
    write_fact(repo, "LSN-0040", "lesson", "Login endpoint load test with bcrypt cost twelve",
               "The login endpoint load test at bcrypt cost twelve topped out at 40 requests a second "
               "per core: throughput is bound by bcrypt.", links={"relates-to": ["RISK-0007"]})
    path = write_cases(repo, """
queries:
  - {id: listed, type: session, session: s, expect: [RISK-0007], no_callout: [RISK-0007],
     prompt: "What did the login endpoint load test with bcrypt cost twelve show about throughput?"}
  - {id: warned, type: session, session: s, callout: [RISK-0007],
     prompt: "How is the rate limiter bucket refilled, and why does it run before auth?"}
  - {id: again, type: session, session: s, absent: [RISK-0007],
     prompt: "How is the rate limiter bucket refilled, and why does it run before auth?"}
""")
    report = evaluate.run(Project(repo), load_cases(path))
    assert [(r.case.id, r.fails) for r in report.cases if not r.ok] == []
    assert report.cases[1].window.count("RISK-0007") == 1
