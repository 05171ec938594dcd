"""Claims in real temporary git repositories: the compare-and-swap, leases, takeovers, fencing tokens,
worktrees of one clone, and a bare remote shared by two clones."""
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stele import gitrepo
from stele.errors import SteleError, UsageError
from stele.project import Project
from stele.tasks import claims
from stele.tasks.claims import ClaimHeld, Identity
from tests.helpers import git

T0 = dt.datetime(2026, 11, 29, 18, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
ALICE = Identity("alice", "sess-a", "host-1")
BOB = Identity("bob", "sess-b", "host-2")
BENCH = Path(__file__).resolve().parents[2] / "bench" / "claims_contention.py"


@pytest.fixture
def project(repo) -> Project:
    return Project(repo)


def test_parse_lease():
    assert claims.parse_lease("2h") == dt.timedelta(hours=2)
    assert claims.parse_lease("1h30m") == dt.timedelta(minutes=90)
    assert claims.parse_lease(" 45s ") == dt.timedelta(seconds=45)
    assert claims.parse_lease("1d") == dt.timedelta(days=1)
    for bad in ("", "2", "2x", "h", "0m", "2h-1m"):
        with pytest.raises(UsageError, match="--lease"):
            claims.parse_lease(bad)


def test_first_claim_wins_and_the_second_is_told_who_since_and_until(project):
    got = claims.claim(project, "TASK-AAAA", ALICE, 2 * HOUR, now=T0)
    assert (got.action, got.claim.token, got.previous) == ("claimed", 1, None)
    assert got.claim.until == T0 + 2 * HOUR
    with pytest.raises(ClaimHeld) as lost:
        claims.claim(project, "TASK-AAAA", BOB, HOUR, now=T0 + dt.timedelta(minutes=5))
    assert lost.value.exit_code == 1 and lost.value.claim.holder == ALICE
    assert str(lost.value) == ("TASK-AAAA is held by alice (session sess-a, host host-1) since "
                               "2026-11-29T18:00:00Z, lease until 2026-11-29T20:00:00Z (token 1)")
    assert "\n" not in str(lost.value)
    assert claims.read(project, "TASK-AAAA").holder == ALICE  # the loser changed nothing


def test_claiming_again_renews_with_the_same_token(project):
    claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0)
    again = claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0 + dt.timedelta(minutes=50))
    assert again.action == "renewed" and again.claim.token == 1
    assert again.claim.since == T0 and again.claim.until == T0 + dt.timedelta(minutes=110)


def test_an_expired_claim_is_taken_over_with_the_next_token_and_the_takeover_is_recorded(project):
    claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0)
    with pytest.raises(ClaimHeld):
        claims.claim(project, "TASK-AAAA", BOB, HOUR, now=T0 + dt.timedelta(minutes=59))
    got = claims.claim(project, "TASK-AAAA", BOB, HOUR, now=T0 + 2 * HOUR)
    assert got.action == "took over" and got.claim.token == 2 and got.claim.holder == BOB
    assert got.claim.took_over == {"agent": "alice", "session": "sess-a", "host": "host-1", "token": 1,
                                   "until": "2026-11-29T19:00:00Z"}
    assert got.previous.holder == ALICE
    history = git(project.root, "log", "--format=%s", "refs/stele/claims/TASK-AAAA").splitlines()
    assert history == ["takeover TASK-AAAA: bob from alice (token 2)", "claim TASK-AAAA: alice (token 1)"]
    # the old holder, waking up, is now the loser
    with pytest.raises(ClaimHeld, match="held by bob"):
        claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0 + 2 * HOUR)


def test_release_only_by_the_holder_unless_forced_and_tokens_keep_growing(project):
    claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0)
    with pytest.raises(SteleError, match=r"only its holder releases it .* pass --force"):
        claims.release(project, "TASK-AAAA", BOB, now=T0)
    released = claims.release(project, "TASK-AAAA", ALICE, now=T0 + HOUR / 2)
    assert released.state == "released" and released.released_by == ALICE and released.token == 1
    with pytest.raises(SteleError, match="not claimed; nothing to release"):
        claims.release(project, "TASK-AAAA", ALICE, now=T0 + HOUR)
    assert claims.claim(project, "TASK-AAAA", BOB, HOUR, now=T0 + HOUR).claim.token == 2
    forced = claims.release(project, "TASK-AAAA", ALICE, force=True, now=T0 + HOUR)
    assert forced.released_by == ALICE and forced.holder == BOB
    assert claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0 + HOUR).claim.token == 3
    assert [c.task for c in claims.local_claims(project)] == ["TASK-AAAA"]


def test_claims_are_shared_by_every_worktree_of_a_clone(project):
    git(project.root, "commit", "-q", "--allow-empty", "-m", "base")
    other = project.root.parent / "other-worktree"
    git(project.root, "worktree", "add", "-q", "-b", "other", str(other))
    wt = Project(other)
    assert wt.git_common_dir == project.git_common_dir
    claims.claim(wt, "TASK-AAAA", ALICE, HOUR, now=T0)
    with pytest.raises(ClaimHeld, match="held by alice"):
        claims.claim(project, "TASK-AAAA", BOB, HOUR, now=T0)
    assert (project.git_common_dir / "refs/stele/claims/TASK-AAAA").is_file()


def test_an_unreadable_record_counts_as_free(project):
    tree = git(project.root, "hash-object", "-w", "-t", "tree", "/dev/null").strip()
    text = f"tree {tree}\nauthor x <x@y> 0 +0000\ncommitter x <x@y> 0 +0000\n\nnot a claim\n"
    junk = subprocess.run(["git", "hash-object", "-w", "--stdin", "-t", "commit"], cwd=project.root,
                          check=True, capture_output=True, text=True, input=text).stdout.strip()
    git(project.root, "update-ref", "refs/stele/claims/TASK-AAAA", junk)
    got = claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0)
    assert got.claim.token == 1 and got.previous.sha == junk


def test_sixteen_processes_over_two_worktrees_exactly_one_winner_per_round():
    """The acceptance run with few rounds; `bench/claims_contention.py` runs the full 1000."""
    result = _bench("--rounds", "6", "--workers", "16", "--worktrees", "2")
    assert (result["ok_rounds"], result["broken"], result["places"]) == (6, [], 2)


# --- across machines: two clones of one bare remote ---------------------------------------------------

@pytest.fixture
def clones(tmp_path) -> tuple[Project, Project]:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", str(bare), name)
    return Project(tmp_path / "a"), Project(tmp_path / "b")


def test_two_clones_one_remote_the_second_is_told_who_holds_it(clones):
    a, b = clones
    won = claims.claim(a, "TASK-AAAA", ALICE, HOUR, now=T0, remote="origin")
    assert won.claim.remote == "origin"
    with pytest.raises(ClaimHeld) as lost:
        claims.claim(b, "TASK-AAAA", BOB, HOUR, now=T0, remote="origin")
    assert lost.value.claim.holder == ALICE and lost.value.claim.token == 1
    assert claims.read(b, "TASK-AAAA") is None  # the loser wrote nothing locally
    listed = claims.remote_claims(b, "origin")
    assert [(c.task, c.holder.agent, c.where) for c in listed] == [("TASK-AAAA", "alice", "origin")]
    assert claims.known_claims(b)["TASK-AAAA"].holder == ALICE  # after a fetch, known without network

    # the holder's release goes to the remote by itself (the claim remembers where it was pushed)
    claims.release(a, "TASK-AAAA", ALICE, now=T0 + HOUR / 2)
    assert claims.claim(b, "TASK-AAAA", BOB, HOUR, now=T0 + HOUR, remote="origin").claim.token == 2
    # a's next claim consults the remote even without being asked, and loses to b
    with pytest.raises(ClaimHeld, match="held by bob"):
        claims.claim(a, "TASK-AAAA", ALICE, HOUR, now=T0 + HOUR)


def test_a_remote_takeover_of_an_expired_claim(clones):
    a, b = clones
    claims.claim(a, "TASK-AAAA", ALICE, HOUR, now=T0, remote="origin")
    got = claims.claim(b, "TASK-AAAA", BOB, HOUR, now=T0 + 2 * HOUR, remote="origin")
    assert got.action == "took over" and got.claim.token == 2
    with pytest.raises(ClaimHeld, match="held by bob"):
        claims.claim(a, "TASK-AAAA", ALICE, HOUR, now=T0 + 2 * HOUR)


def test_two_clones_racing_through_one_bare_remote():
    result = _bench("--remote", "--clones", "2", "--workers", "2", "--rounds", "5")
    assert (result["ok_rounds"], result["broken"], result["mode"]) == (5, [], "remote")


def test_an_unreachable_remote_is_one_clear_error(project):
    with pytest.raises(SteleError, match=re.escape("cannot read claims from /nonexistent/remote.git")):
        claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0, remote="/nonexistent/remote.git")
    assert claims.read(project, "TASK-AAAA") is None


def test_resolve_remote(clones, project):
    a, _ = clones
    assert claims.resolve_remote(a, None) == "origin"
    assert claims.resolve_remote(a, "upstream") == "upstream"
    with pytest.raises(UsageError, match="--remote-name NAME"):
        claims.resolve_remote(project, None)


def _bench(*args: str) -> dict:
    out = subprocess.run([sys.executable, str(BENCH), *args, "--json"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def _lock(project: Project, age: float) -> Path:
    """A ref lock as a writer killed inside `git update-ref` leaves it, `age` seconds old."""
    lock = project.git_common_dir / "refs/stele/claims/TASK-AAAA.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    then = time.time() - age
    os.utime(lock, (then, then))
    return lock


def test_a_stale_claim_lock_is_recovered_and_the_claim_goes_through(project):
    lock = _lock(project, gitrepo.STALE_LOCK_SECONDS + 1)
    got = claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0)
    assert got.claim.token == 1 and not lock.exists()
    assert list(lock.parent.iterdir()) == [lock.parent / "TASK-AAAA"]  # nothing left aside


def test_a_fresh_lock_is_waited_out_never_taken_at_once(project, monkeypatch):
    monkeypatch.setattr(gitrepo, "STALE_LOCK_SECONDS", 0.4)
    lock = _lock(project, 0)
    start = time.monotonic()
    claims.claim(project, "TASK-AAAA", ALICE, HOUR, now=T0)
    assert time.monotonic() - start >= 0.35 and not lock.exists()


def test_a_lock_taken_again_between_the_look_and_the_rename_is_given_back(tmp_path, monkeypatch):
    within = tmp_path / "refs" / "stele"
    lock = within / "claims" / "TASK-AAAA.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    os.utime(lock, (0, 0))
    real_rename = os.rename

    def racing_rename(src, dst):  # a live writer replaces the stale lock just before we move it
        Path(src).unlink()
        Path(src).write_text("live")
        real_rename(src, dst)

    monkeypatch.setattr(gitrepo.os, "rename", racing_rename)
    gitrepo.wait_or_recover_lock(lock, within)
    assert lock.read_text() == "live" and sorted(p.name for p in lock.parent.iterdir()) == ["TASK-AAAA.lock"]


def test_a_lock_outside_stele_refs_is_named_not_touched(tmp_path):
    lock = tmp_path / "packed-refs.lock"
    lock.write_text("")
    os.utime(lock, (0, 0))
    with pytest.raises(SteleError, match=r"packed-refs\.lock blocks the update: .* delete it"):
        gitrepo.wait_or_recover_lock(lock, tmp_path / "refs" / "stele")
    assert lock.exists()


def test_a_plain_claim_honours_a_known_remote_claim(clones):
    """Clone A claimed on the remote; clone B listed the remote claims (so B knew alice held it), then a
    plain `task claim` by bob exited 0, and after a local claim and release `task ready` listed it."""
    a, b = clones
    claims.claim(a, "TASK-AAAA", ALICE, HOUR, now=T0, remote="origin")
    claims.remote_claims(b, "origin")  # `stele task claims --remote`: b now knows
    with pytest.raises(ClaimHeld, match="held by alice") as held:
        claims.claim(b, "TASK-AAAA", BOB, HOUR, now=T0 + HOUR / 2)
    assert "since" in str(held.value) and claims.read(b, "TASK-AAAA") is None
    # once alice's lease has run out, bob's local claim takes a token past hers
    late = claims.claim(b, "TASK-AAAA", BOB, HOUR, now=T0 + 2 * HOUR)
    assert late.claim.token == 2
