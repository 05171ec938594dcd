"""The budget rules of a snapshot, on facts built in memory (DESIGN.md section 5)."""
import datetime as dt
from dataclasses import dataclass, replace

import pytest

from stele.config import load as load_config
from stele.errors import UsageError
from stele.record.model import Fact
from stele.snapshot.assemble import (
    BudgetError,
    fit_code,
    pick_briefing,
    record_text,
    render_text,
    select_records,
    withheld_rules,
)
from stele.snapshot.model import Budgets, Snapshot

ON = dt.date(2026, 11, 29)
BUDGETS = Budgets.from_config(load_config(None))
KIB = "x" * 1023 + "\n"  # a body of exactly 1 KiB


def facts(*items: Fact) -> dict[str, Fact]:
    return {f.id: f for f in items}


def rule(n: int, body: str = KIB, **kw) -> Fact:
    return Fact(id=f"INS-{n:04d}", kind="instruction", title=f"Rule {n}", body=body, **kw)


def test_budgets_come_from_the_config_template():
    assert Budgets(records_bytes=16384, records_count=12, records_count_max=64, record_max_bytes=12288,
                              code_bytes=32768, total_bytes=49152, briefing_items=20, briefing_bytes=4096) == BUDGETS


def test_fourteen_always_records_of_one_kib_all_fit_by_raising_the_count_limit():
    record = facts(*(rule(n) for n in range(14)))
    items, skipped, limit = select_records(record, [], [], BUDGETS, ON)
    assert [i.key for i in items] == sorted(record) and limit == 14 and skipped == []
    assert all(i.part == "always" for i in items)
    assert 14 * 1024 < sum(i.size for i in items) <= 16 * 1024


def test_twenty_always_records_of_one_kib_fail_naming_the_ones_that_do_not_fit():
    record = facts(*(rule(n) for n in range(20)))
    size = len(record_text(record["INS-0000"], ON).encode())
    fit = 16384 // size
    with pytest.raises(BudgetError) as e:
        select_records(record, [], [], BUDGETS, ON)
    missing = [f"INS-{n:04d}" for n in range(fit, 20)]
    assert [fid for fid, _ in e.value.misfits] == missing
    message = str(e.value)
    assert all(fid in message for fid in missing) and "INS-0000" not in message
    assert "16384-byte record budget" in message and "\n" not in message


def test_the_count_limit_stops_at_the_configured_maximum():
    record = facts(*(rule(n, body="short\n") for n in range(66)))
    with pytest.raises(BudgetError) as e:
        select_records(record, [], [], BUDGETS, ON)
    assert [fid for fid, _ in e.value.misfits] == ["INS-0064", "INS-0065"]
    assert "past the 64-record limit" in str(e.value)


def test_one_required_record_over_12_kib_fails_even_when_alone():
    record = facts(rule(1, body="y" * 13000))
    with pytest.raises(BudgetError, match=r"INS-0001 \(13\d{3} bytes, over the 12288-byte limit for one record\)"):
        select_records(record, [], [], BUDGETS, ON)


def test_always_records_go_in_by_priority_and_only_while_current_and_active():
    record = facts(
        rule(1, body="low\n", priority="low"), rule(2, body="crit\n", priority="critical"),
        rule(3, body="high\n", priority="high"), rule(4, body="normal\n"),
        rule(5, body="expired\n", expires=dt.date(2026, 1, 1)),
        rule(6, body="overdue\n", review_after=dt.date(2026, 6, 1)),
        rule(7, body="retired\n", status="retired"), rule(8, body="a proposal\n", status="draft"),
        rule(9, body="manual\n", delivery="manual"),
        Fact(id="DEC-0001", kind="decision", title="a ranked decision", body="d\n"),
        Fact(id="DOC-0001", kind="document", title="doc", body="d\n", delivery="always", status="current"),
        Fact(id="TASK-0001", kind="task", title="task", body="t\n", delivery="always"),
    )
    items, _, _ = select_records(record, [], [], BUDGETS, ON)
    assert [i.key for i in items] == ["INS-0002", "INS-0003", "INS-0004", "INS-0001"]
    assert items[0].text == "[INS-0002] instruction: Rule 2 (priority critical)\ncrit\n"


def test_an_always_rule_left_out_by_the_calendar_is_named_never_dropped_silently():
    record = facts(rule(1, body="r\n"), rule(5, body="expired\n", expires=dt.date(2026, 1, 1)),
                   rule(6, body="overdue\n", review_after=dt.date(2026, 6, 1), priority="critical"),
                   rule(7, body="retired\n", status="retired"), rule(8, body="draft\n", status="draft"))
    warned = withheld_rules(record.values(), ON)
    assert [w.split()[1] for w in warned] == ["INS-0006", "INS-0005"]  # critical first
    assert warned[0] == ("stele: INS-0006 (instruction: Rule 6) is an `always` rule but was left out: review "
                         "overdue since 2026-06-01; `stele verify INS-0006` and a new review_after or expires "
                         "if it still holds, else `stele retire INS-0006`")
    assert withheld_rules([rule(1)], ON) == []


def test_a_budget_error_names_the_setting_of_its_own_reason():
    with pytest.raises(BudgetError) as big:
        select_records(facts(rule(1, body="y" * 13000)), [], [], BUDGETS, ON)
    assert str(big.value).endswith("raise snapshot.record_max_bytes in .stele/config.yaml")
    with pytest.raises(BudgetError) as many:
        select_records(facts(*(rule(n, body="short\n") for n in range(66))), [], [], BUDGETS, ON)
    assert str(many.value).endswith("raise snapshot.records_count_max in .stele/config.yaml")
    with pytest.raises(BudgetError) as bytes_:
        select_records(facts(*(rule(n, body="z" * 9000) for n in range(2))), [], [], BUDGETS, ON)
    assert str(bytes_.value).endswith("raise snapshot.records_bytes in .stele/config.yaml")


def test_required_records_are_held_to_the_total_budget_too():
    tight = replace(BUDGETS, total_bytes=4000)
    with pytest.raises(BudgetError) as e:
        select_records(facts(*(rule(n, body="z" * 1500) for n in range(3))), [], [], tight, ON)
    assert [fid for fid, _ in e.value.misfits] == ["INS-0002"]
    assert "past the 4000-byte total budget" in str(e.value) and "of 4000 bytes fit" in str(e.value)
    assert str(e.value).endswith("raise snapshot.total_bytes in .stele/config.yaml")


def test_named_records_are_required_and_may_be_anything_even_inactive():
    record = facts(rule(1, body="r\n"), rule(2, body="manual\n", delivery="manual"),
                   Fact(id="DEC-0001", kind="decision", title="old", body="o\n", status="superseded"))
    items, _, _ = select_records(record, ["ins-0002", "DEC-0001", "INS-0001"], [], BUDGETS, ON)
    assert [(i.part, i.key) for i in items] == [("always", "INS-0001"), ("named", "INS-0002"),
                                                ("named", "DEC-0001")]
    assert "(status superseded)" in items[2].text
    with pytest.raises(UsageError, match="--record DEC-9999: no fact has that id"):
        select_records(record, ["DEC-9999"], [], BUDGETS, ON)


def test_ranked_records_fill_what_is_left_and_say_why_the_rest_was_left_out():
    always = [rule(n, body="r\n") for n in range(10)]
    ranked = [Fact(id=f"DEC-{n:04d}", kind="decision", title=f"d{n}", body=KIB) for n in range(5)]
    big = Fact(id="DEC-BIGG", kind="decision", title="big", body="z" * 13000)
    extra = [Fact(id="DOC-0001", kind="document", title="doc", body="d\n", status="current"),
             Fact(id="NOTE-0001", kind="note", title="manual", body="m\n", delivery="manual"),
             Fact(id="NOTE-0002", kind="note", title="expired", body="e\n", expires=dt.date(2026, 1, 1))]
    record = facts(*always, *ranked, big, *extra)
    order = ["DEC-BIGG", "DOC-0001", "NOTE-0001", "NOTE-0002", "INS-0001", *(f.id for f in ranked)]
    items, skipped, limit = select_records(record, [], order, BUDGETS, ON)
    assert limit == 12
    assert [i.key for i in items if i.part == "ranked"] == ["DEC-0000", "DEC-0001"]  # the count limit
    assert [(s.key, s.reason) for s in skipped] == [
        ("DEC-BIGG", f"{len(record_text(big, ON).encode())} bytes, over the 12288-byte limit for one record"),
        ("DEC-0002", "past the 12-record limit"), ("DEC-0003", "past the 12-record limit"),
        ("DEC-0004", "past the 12-record limit")]


def test_ranked_records_never_pass_the_byte_budget():
    ranked = [Fact(id=f"DEC-{n:04d}", kind="decision", title=f"d{n}", body="w" * 6000) for n in range(4)]
    items, skipped, _ = select_records(facts(*ranked), [], [f.id for f in ranked], BUDGETS, ON)
    assert [i.key for i in items] == ["DEC-0000", "DEC-0001"]
    assert sum(i.size for i in items) <= 16384
    assert skipped[0].reason.endswith("past the 16384-byte record budget")


@dataclass
class Chunk:
    path: str
    start: int
    end: int
    symbol: str | None
    text: str


def test_code_fits_in_order_once_each_within_its_budget():
    a = Chunk("src/a.py", 1, 10, "check", "def check():\n    return 1\n")
    overlap = Chunk("src/a.py", 5, 20, None, "dup")
    big = Chunk("src/b.py", 1, 400, None, "b" * 3000)
    small = Chunk("src/c.py", 1, 2, None, "x = '```'")
    items, skipped = fit_code([(a, ["DEC-0001"]), (overlap, []), (big, []), (small, [])], 1000)
    assert [i.key for i in items] == ["src/a.py:1-10", "src/c.py:1-2"]
    assert items[0].text == "src/a.py:1-10 check (anchored by DEC-0001)\n```\ndef check():\n    return 1\n```\n"
    assert items[1].text.startswith("src/c.py:1-2\n````\n")  # the fence outgrows backticks in the code
    assert [s.key for s in skipped] == ["src/b.py:1-400"]
    assert sum(i.size for i in items) <= 1000


def test_the_briefing_lists_only_current_documents_within_20_items_and_4_kib():
    docs = [Fact(id=f"DOC-{n:04d}", kind="document", title=f"Doc {n}", body=f"Summary {n}. More.\n",
                 status="current", created=dt.date(2026, 1, 1) + dt.timedelta(days=n)) for n in range(25)]
    others = [Fact(id="DOC-DRFT", kind="document", title="draft", body="d.\n", status="draft"),
              Fact(id="DOC-SUPR", kind="document", title="old", body="o.\n", status="superseded"),
              Fact(id="DOC-REVW", kind="document", title="reviewed", body="r.\n", status="reviewed")]
    record = facts(*docs, *others)
    items, skipped = pick_briefing(record, ["DOC-0003"], BUDGETS, ON)
    assert len(items) == 20 and items[0].key == "DOC-0003" and items[1].key == "DOC-0024"  # matched, then newest
    assert items[0].text == "- [DOC-0003] Doc 3: Summary 3.\n"
    assert not {"DOC-DRFT", "DOC-SUPR", "DOC-REVW"} & {i.key for i in items}
    assert [s.reason for s in skipped] == ["5 more current documents, past the 20-item briefing budget"]
    long = facts(*(replace(d, summary="s" * 290) for d in docs[:20]))
    items, skipped = pick_briefing(long, [], BUDGETS, ON)
    assert sum(i.size for i in items) <= 4096 and len(items) == 13 and len(skipped) == 7


def test_the_text_has_the_parts_in_order_and_is_stable():
    record = facts(rule(1, body="Use snake_case.\n", priority="critical"),
                   Fact(id="DEC-0001", kind="decision", title="Limit first", body="Rate limit before auth.\n"),
                   Fact(id="DOC-0001", kind="document", title="Login", body="How login works.\n",
                        status="current"))
    items, skipped, limit = select_records(record, [], ["DEC-0001"], BUDGETS, ON)
    code, _ = fit_code([(Chunk("src/a.py", 3, 4, "login", "def login():\n    pass"), ["DEC-0001"])], 32768)
    brief, _ = pick_briefing(record, [], BUDGETS, ON)
    snap = Snapshot(run="01TEST", created="2026-11-29T00:00:00Z", budgets=BUDGETS, records_limit=limit,
                    code_limit=32768, items=items + code + brief, skipped=skipped,
                    inputs={"task": {"id": "TASK-0001", "title": "Fix login", "status": "open"}})
    rules = "[INS-0001] instruction: Rule 1 (priority critical)\nUse snake_case.\n"
    related = "[DEC-0001] decision: Limit first\nRate limit before auth.\n"
    chunk = "src/a.py:3-4 login (anchored by DEC-0001)\n```\ndef login():\n    pass\n```\n"
    doc = "- [DOC-0001] Login: How login works.\n"
    records = len(rules) + len(related)
    assert render_text(snap) == (
        "Stele context snapshot for TASK-0001: Fix login\n"
        f"Fixed for this run. Records: 2 ({records} of 16384 bytes); code: 1 chunk ({len(chunk)} of 32768 bytes); "
        f"briefing: 1 item ({len(doc)} of 4096 bytes).\n"
        f"\n## Rules for every run (critical first)\n\n{rules}"
        f"\n## Records related to this task\n\n{related}"
        f"\n## Code for this task\n\n{chunk}"
        f"\n## Knowledge briefing (current documents; read one in full with `stele show ID`)\n\n{doc}")
    usage = {row["part"]: row for row in snap.usage()}
    assert usage["records"] == {"part": "records", "items": 2, "bytes": records, "limit_items": 12,
                                "limit_bytes": 16384}
    assert usage["total"]["bytes"] == records + len(chunk) and usage["briefing"]["bytes"] == len(doc)
