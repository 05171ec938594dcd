"""A claim and its run's snapshot: decided first, the snapshot for the winner only, withdrawn when the
snapshot fails, named records delivered even when `manual` (real git repositories)."""
import datetime as dt

import pytest

from stele import clock
from stele.errors import SteleError, UsageError
from stele.project import Project
from stele.record.load import find_one
from stele.snapshot import claim as claim_mod
from stele.snapshot.store import runs
from stele.tasks import claims
from stele.tasks.claims import ClaimHeld, Identity
from tests.helpers import write_fact

ALICE = Identity("alice", "sess-a", "host-1")
BOB = Identity("bob", "sess-b", "host-2")
HOUR = dt.timedelta(hours=1)


@pytest.fixture
def project(repo) -> Project:
    write_fact(repo, "TASK-AAAA", "task", "Add the rate limiter", status="open")
    write_fact(repo, "INS-AAAA", "instruction", "Run the linters before you commit")
    write_fact(repo, "NOTE-AAAA", "note", "The staging database is reset on Mondays", delivery="manual")
    return Project(repo)


def test_the_winner_gets_a_stored_snapshot_with_the_named_manual_record(project):
    run = claim_mod.claim(project, "TASK-AAAA", ALICE, lease=HOUR, records=["note-aaaa"])
    assert run.claimed.action == "claimed" and run.claimed.claim.token == 1
    parts = {i.key: i.part for i in run.snapshot.items}
    assert parts == {"INS-AAAA": "always", "NOTE-AAAA": "named"}
    assert run.snapshot.inputs["records"] == ["NOTE-AAAA"] and run.snapshot.inputs["claim"]["token"] == 1
    assert [r["run"] for r in runs(project)] == [run.snapshot.run]
    assert run.claim_ms > 0 and run.snapshot_ms > 0


def test_a_loser_is_answered_without_loading_the_record_or_building_a_snapshot(project, monkeypatch):
    claim_mod.claim(project, "TASK-AAAA", ALICE, lease=HOUR)

    def forbidden(*args, **kwargs):
        raise AssertionError("a loser must not pay for this")

    monkeypatch.setattr("stele.tasks.board.load", forbidden)
    monkeypatch.setattr("stele.snapshot.build.take", forbidden)
    monkeypatch.setattr("stele.tasks.board.find_one", forbidden)  # a latecomer reads only the claim ref
    with pytest.raises(ClaimHeld, match="TASK-AAAA is held by alice"):
        claim_mod.claim(project, "TASK-AAAA", BOB, lease=HOUR)
    assert len(list(runs(project))) == 1


def test_a_snapshot_that_fails_withdraws_the_claim(project, repo):
    write_fact(repo, "INS-BBBB", "instruction", "Huge rule", body="x" * 13000)
    with pytest.raises(claim_mod.Withdrawn) as failed:
        claim_mod.claim(project, "TASK-AAAA", ALICE, lease=HOUR)
    assert "INS-BBBB" in str(failed.value) and "record_max_bytes" in str(failed.value)
    assert str(failed.value).endswith("so TASK-AAAA was not claimed (nothing was written)")
    assert failed.value.exit_code == 1
    assert claims.read(project, "TASK-AAAA") is None  # no claim and no release: it never happened
    wal = "".join(p.read_text() for p in (repo / ".stele").rglob("*.jsonl"))
    assert "TASK-AAAA" not in wal


def test_a_renewal_whose_snapshot_fails_keeps_the_claim(project, repo):
    claim_mod.claim(project, "TASK-AAAA", ALICE, lease=HOUR)
    write_fact(repo, "INS-BBBB", "instruction", "Huge rule", body="x" * 13000)
    with pytest.raises(SteleError, match="INS-BBBB"):
        claim_mod.claim(project, "TASK-AAAA", ALICE, lease=HOUR)
    assert claims.read(project, "TASK-AAAA").live(clock.utcnow())


def test_an_unknown_named_record_fails_before_anything_is_claimed(project):
    with pytest.raises(UsageError, match=r"--record DEC-ZZZZ: no fact has that id .* nothing was claimed"):
        claim_mod.claim(project, "TASK-AAAA", ALICE, lease=HOUR, records=["DEC-ZZZZ"])
    assert claims.read(project, "TASK-AAAA") is None


def test_find_one_reads_the_file_named_after_the_id_and_only_if_it_holds_that_id(project, repo):
    assert find_one(project, "task-aaaa").title == "Add the rate limiter"
    assert find_one(project, "TASK-ZZZZ") is None
    odd = repo / "docs/memory/tasks/renamed-by-hand.md"
    (repo / "docs/memory/tasks/TASK-AAAA.md").rename(odd)
    assert find_one(project, "TASK-AAAA") is None  # found only by a full load
    assert claim_mod.claim(project, "TASK-AAAA", ALICE, lease=HOUR).claimed.claim.task == "TASK-AAAA"
