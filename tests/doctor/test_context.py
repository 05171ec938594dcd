"""`stele context doctor` on records built in memory: each check fires, and stays quiet when it should."""
import datetime as dt
from pathlib import Path

from stele.config import load as load_config
from stele.doctor.context import check
from stele.project import Project
from stele.record.load import Record
from stele.record.model import Fact
from stele.snapshot.assemble import record_text
from stele.snapshot.model import Budgets

ON = dt.date(2026, 11, 29)
BUDGETS = Budgets.from_config(load_config(None))


def run(*facts: Fact, near: float = 0.92) -> list[tuple[str, str, str]]:
    record = Record(Project(Path("/nonexistent")), {f.id: f for f in facts})
    return [(f.severity, f.check, f.fact) for f in check(record, BUDGETS, ON, 12288, near).findings]


def fact(fid: str, body: str, kind: str = "decision", title: str | None = None, **kw) -> Fact:
    return Fact(id=fid, kind=kind, title=title or f"{fid} title", body=body, **kw)


def test_a_clean_record_has_no_findings():
    assert run(fact("DEC-0001", "Rate limiting sits before auth."), fact("DEC-0002", "Tokens expire in an hour."),
               fact("INS-0001", "Use snake_case in public fields.", kind="instruction")) == []


def test_always_records_that_do_not_fit_are_errors_naming_each_as_a_claim_would():
    rules = [fact(f"INS-{n:04d}", "r" * 2000 + f" {n}", kind="instruction") for n in range(10)]
    fit = 16384 // len(record_text(rules[0], ON).encode())
    found = run(*rules)
    assert found == [("error", "always-budget", r.id) for r in rules[fit:]]


def test_oversized_records_are_warned():
    assert run(fact("DEC-0001", "z" * 13000), fact("DEC-0002", "small")) == [("warning", "oversized", "DEC-0001")]


def test_oversized_counts_what_the_snapshot_counts():
    """Title and body fit in 12 KiB, but the delivered text (id, kind and labels in its header) does not:
    the snapshot leaves it out, so doctor must say so."""
    body = "z" * (12288 - len("DEC-0001 title") - 1)
    edge = fact("DEC-0001", body, priority="high")
    assert len(edge.title.encode()) + 1 + len(edge.body.encode()) == 12288
    assert len(record_text(edge, ON).encode()) > 12288
    record = Record(Project(Path("/nonexistent")), {edge.id: edge})
    [finding] = check(record, BUDGETS, ON, 12288, 0.92).findings
    assert finding.check == "oversized" and "over snapshot.record_max_bytes (12288): no snapshot can carry" \
        in finding.message
    medium = fact("DEC-0002", "w" * 9000)
    assert run(medium) == []
    lower = check(Record(Project(Path("/x")), {medium.id: medium}), BUDGETS, ON, 8192, 0.92).findings
    size = len(record_text(medium, ON).encode())
    assert [f.message.split(": ")[0] for f in lower] == [
        f"DEC-0002 is {size} bytes as delivered, over doctor.oversized_bytes (8192)"]


def test_expired_and_review_overdue_are_warned_until_retired():
    found = run(fact("DEC-0001", "old", expires=dt.date(2026, 1, 1)),
                fact("DEC-0002", "stale", review_after=dt.date(2026, 6, 1)),
                fact("DEC-0003", "done with", expires=dt.date(2026, 1, 1), status="retired"),
                fact("DEC-0004", "fine", expires=dt.date(2027, 1, 1), review_after=dt.date(2027, 1, 1),
                     created=dt.date(2020, 1, 1)))  # old but not expired: still delivered, not flagged here
    assert found == [("warning", "expired", "DEC-0001"), ("warning", "review-overdue", "DEC-0002")]


def test_near_duplicates_of_one_kind_are_warned():
    text = ("Rate limiting runs in front of authentication so that request floods from one address never reach "
            "the expensive bcrypt password check in the login handler of the public API.")
    same = dict(title="Rate limiting sits before auth")
    found = run(fact("DEC-0001", text, **same), fact("DEC-0002", text, **same),
                fact("RISK-0001", text, kind="risk", **same),  # another kind: not a duplicate
                fact("DEC-0003", "Something else entirely about tokens and sessions.", **same))
    assert found == [("warning", "near-duplicate", "DEC-0002")]
    nearly = text.replace("never reach", "cannot reach")
    assert run(fact("DEC-0001", text, **same), fact("DEC-0002", nearly, **same), near=0.8) == [
        ("warning", "near-duplicate", "DEC-0002")]
    assert run(fact("DEC-0001", text, **same), fact("DEC-0002", nearly, **same), near=0.95) == []
