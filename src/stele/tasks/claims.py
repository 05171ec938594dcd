"""Atomic task claims: one holder per task, decided by git's compare-and-swap on refs, no server.

Why it is shaped this way:
- A claim is a ref, `refs/stele/claims/<ID>`, pointing at a small commit whose message is the record
  (holder, since, lease, fencing token). Refs live in the git common dir, so every worktree of a clone
  sees the same claims, and `git update-ref REF NEW OLD` moves a ref only if it is still at OLD: of any
  number of processes exactly one wins. Nothing here checks and then writes.
- Across machines the same commit is pushed with `--force-with-lease`: the remote's ref update is the
  compare-and-swap, so of two clones racing for a task exactly one wins.
- Releasing writes a `released` record on top instead of deleting the ref, so the fencing token keeps
  increasing across claim, takeover, release and reclaim (a stale holder can always be fenced off), and
  `git log refs/stele/claims/<ID>` is the task's claim history, takeovers included.
- Leases are wall-clock time (not STELE_TODAY); `now` is a parameter so tests move time explicitly.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import random
import time
from collections.abc import Callable

from .. import gitrepo
from ..clock import iso, parse_time, utcnow
from ..config import duration_seconds
from ..errors import SteleError, UsageError
from ..plain import dataclass, replace
from ..project import Project

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CLAIMS_REF = "refs/stele/claims/"
REMOTE_CLAIMS_REF = "refs/stele/remote-claims/"
AGENT_ENV = "STELE_AGENT"
RECORD_VERSION = 1
ATTEMPTS = 60  # compare-and-swap retries; each lost round means someone else moved the ref
UNREAD = object()  # `claim(local=...)` not given: read the ref


def hostname() -> str:
    """This machine's name, without importing `socket` (a claim's loser pays every import)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def default_lease(project: Project) -> dt.timedelta:
    """`tasks.lease` from `.stele/config.yaml` (its parse is cached, so this costs no YAML parser)."""
    return parse_lease(str(project.config["tasks.lease"]), "tasks.lease in .stele/config.yaml")


def remote_timeout(project: Project) -> float:
    """Seconds one call to a claim's remote may take (`tasks.remote_timeout_ms`): a remote that accepts
    the connection and never answers must not hold a claim, or an agent, forever."""
    return int(project.config["tasks.remote_timeout_ms"]) / 1000


def parse_lease(text: str, flag: str = "--lease") -> dt.timedelta:
    """`2h`, `30m`, `90s`, `1d`, `1h30m` -> a positive duration (the grammar is config's)."""
    seconds, why = duration_seconds(text)
    if why:
        raise UsageError(f"{flag} {text!r}: {why}")
    return dt.timedelta(seconds=seconds)


@dataclass(frozen=True)
class Identity:
    """Who holds a claim: the agent's name, its session (if any) and the machine."""

    agent: str
    session: str | None
    host: str

    @classmethod
    def current(cls, agent: str | None = None, session: str | None = None) -> Identity:
        """From the flags, else STELE_AGENT / STELE_SESSION, else the OS user name and no session."""
        from ..session.wal import current_session

        name = (agent or os.environ.get(AGENT_ENV) or "").strip()
        if not name:
            import getpass

            try:
                name = getpass.getuser()
            except (KeyError, OSError):
                name = "agent"
        return cls(name, current_session(session), hostname())

    def owns(self, claim: Claim) -> bool:
        return claim.holder == self

    def matches(self, claim: Claim | None) -> bool:
        """`--mine`: the same agent, and the same session when this identity has one."""
        if claim is None:
            return False
        same_session = self.session is None or claim.holder.session == self.session
        return claim.holder.agent == self.agent and same_session

    def describe(self) -> str:
        where = f"session {self.session}, host {self.host}" if self.session else f"host {self.host}"
        return f"{self.agent} ({where})"

    def as_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "session": self.session, "host": self.host}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Identity:
        return cls(str(data.get("agent") or "?"), data.get("session") or None, str(data.get("host") or "?"))


@dataclass(frozen=True)
class Claim:
    task: str
    state: str  # held | released
    holder: Identity
    since: dt.datetime
    until: dt.datetime  # end of the lease
    token: int  # fencing token: strictly increases with every new holder of the task
    remote: str | None = None  # the remote this claim was pushed to, if any
    took_over: dict[str, Any] | None = None  # the expired claim this one replaced
    released_at: dt.datetime | None = None
    released_by: Identity | None = None
    sha: str = ""  # the commit this record is stored in
    where: str = "local"  # "local", or the remote it was read from

    def live(self, now: dt.datetime) -> bool:
        return self.state == "held" and self.until > now

    def status(self, now: dt.datetime) -> str:
        return "released" if self.state != "held" else ("held" if self.live(now) else "expired")

    def describe(self) -> str:
        """One line: who holds it, since when, until when."""
        return (f"{self.task} is held by {self.holder.describe()} since {iso(self.since)}, lease until "
                f"{iso(self.until)} (token {self.token})")

    def as_dict(self, now: dt.datetime | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "v": RECORD_VERSION, "task": self.task, "state": self.state, **self.holder.as_dict(),
            "since": iso(self.since), "until": iso(self.until), "token": self.token, "remote": self.remote,
            "took_over": self.took_over,
            "released_at": iso(self.released_at) if self.released_at else None,
            "released_by": self.released_by.as_dict() if self.released_by else None,
        }
        if now is not None:  # the `--json` view adds what is derived from the clock and the ref
            data.update(status=self.status(now), sha=self.sha, where=self.where)
        return data

    def message(self) -> str:
        """The commit message: a readable subject for `git log`, then the record as one JSON line."""
        if self.state == "released":
            subject = f"release {self.task}: {self.holder.agent} (token {self.token})"
        elif self.took_over:
            subject = (f"takeover {self.task}: {self.holder.agent} from {self.took_over['agent']} "
                       f"(token {self.token})")
        else:
            subject = f"claim {self.task}: {self.holder.agent} (token {self.token})"
        return subject + "\n\n" + json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":")) + "\n"

    @classmethod
    def parse(cls, task: str, body: str, sha: str, where: str) -> Claim:
        """A record from a commit body. An unreadable one counts as free (token 0) so it can be replaced."""
        try:
            data = json.loads(body.strip().splitlines()[-1])
            return cls(task=task, state="released" if data["state"] == "released" else "held",
                       holder=Identity.from_dict(data), since=parse_time(data["since"]),
                       until=parse_time(data["until"]), token=int(data["token"]), remote=data.get("remote"),
                       took_over=data.get("took_over"),
                       released_at=parse_time(data["released_at"]) if data.get("released_at") else None,
                       released_by=Identity.from_dict(data["released_by"]) if data.get("released_by")
                       else None,
                       sha=sha, where=where)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            epoch = dt.datetime.fromtimestamp(0, dt.UTC)
            return cls(task, "released", Identity("?", None, "?"), epoch, epoch, 0, sha=sha, where=where)


@dataclass(frozen=True)
class Claimed:
    """What `claim()` did: claimed a free task, renewed our own claim, or took over an expired one."""

    claim: Claim
    action: str  # claimed | renewed | took over
    previous: Claim | None


def claimed_line(claimed: Claimed, holder: str = "") -> str:
    """What a claim just decided says, the same in `stele task claim`, the session log and the MCP
    tool: `claimed TASK-1 [for HOLDER] until ... (token N)[; the lease of X ended ...]`."""
    c = claimed.claim
    line = f"{claimed.action} {c.task}{f' for {holder}' if holder else ''} until {iso(c.until)} (token {c.token})"
    if claimed.action == "took over" and c.took_over:
        line += f"; the lease of {c.took_over['agent']} ended {c.took_over['until']}"
    return line


class ClaimHeld(SteleError):
    """Someone else holds a live claim; the message says who, since when and until when."""

    def __init__(self, claim: Claim) -> None:
        self.claim = claim
        super().__init__(claim.describe())


def claim_ref(task: str) -> str:
    return CLAIMS_REF + task


def _tracking_prefix(project: Project, remote: str) -> str:
    """Where a remote's claims are mirrored; URLs and paths get a hash, not a path, as their name."""
    import hashlib

    known = remote in gitrepo.remote_names(project.root)
    name = remote if known else "url-" + hashlib.sha1(remote.encode()).hexdigest()[:12]
    return f"{REMOTE_CLAIMS_REF}{name}/"


def resolve_remote(project: Project, name: str | None) -> str:
    """The remote to push claims to: the name given, else `origin`, else the only remote."""
    if name:
        return name
    names = gitrepo.remote_names(project.root)
    if "origin" in names:
        return "origin"
    if len(names) == 1:
        return names[0]
    listed = ", ".join(names) or "none configured"
    raise UsageError(f"which remote? pass --remote-name NAME (remotes: {listed}; `git remote add` adds one)")


def _read(project: Project, prefix: str, where: str, task: str | None = None) -> list[Claim]:
    pattern = prefix + task if task else prefix
    return [Claim.parse(ref[len(prefix):], body, sha, where)
            for ref, sha, body in gitrepo.read_ref_bodies(project.root, pattern)]


def read(project: Project, task: str) -> Claim | None:
    """The local record of `task` (held, expired or released), or None if it was never claimed here."""
    found = _read(project, CLAIMS_REF, "local", task)
    return found[0] if found else None


def remote_claims(project: Project, remote: str) -> list[Claim]:
    """The remote's claim records, fetched now (and kept for `known_claims`)."""
    prefix = _tracking_prefix(project, remote)
    gitrepo.fetch_refs(project.root, remote, CLAIMS_REF, prefix, remote_timeout(project))
    return _read(project, prefix, remote)


def local_claims(project: Project) -> list[Claim]:
    return _read(project, CLAIMS_REF, "local")


def newest(*claims: Claim | None) -> Claim | None:
    """The latest record among copies of one task's claim: the highest token; on a tie the held one,
    so a live holder is never overlooked."""
    known = [c for c in claims if c is not None]
    return max(known, key=lambda c: (c.token, c.state == "held")) if known else None


def known_remote(project: Project, task: str) -> Claim | None:
    """The newest copy of `task`'s claim among the remotes' last fetched claims (no network)."""
    found = None
    for ref, sha, body in gitrepo.read_ref_bodies(project.root, REMOTE_CLAIMS_REF):
        remote, _, name = ref[len(REMOTE_CLAIMS_REF):].rpartition("/")
        if name == task:
            found = newest(found, Claim.parse(task, body, sha, remote))
    return found


def known_claims(project: Project) -> dict[str, Claim]:
    """The latest record per task, from local claims and every remote's last fetched claims (no network)."""
    latest: dict[str, Claim] = {}
    for ref, sha, body in gitrepo.read_ref_bodies(project.root, CLAIMS_REF, REMOTE_CLAIMS_REF):
        if ref.startswith(CLAIMS_REF):
            claim = Claim.parse(ref[len(CLAIMS_REF):], body, sha, "local")
        else:
            remote, _, task = ref[len(REMOTE_CLAIMS_REF):].rpartition("/")
            claim = Claim.parse(task, body, sha, remote)
        latest[claim.task] = newest(latest.get(claim.task), claim)  # type: ignore[assignment]
    return latest


def claim(project: Project, task: str, me: Identity, lease: dt.timedelta, *, now: dt.datetime | None = None,
          remote: str | None = None, local: Claim | object | None = UNREAD) -> Claimed:
    """Claim `task` for `me`. Raises ClaimHeld (naming the holder) when someone else's lease is live.
    Claiming a task you hold renews the lease; an expired claim is taken over with the next token.
    `local`: the task's local record as the caller has just read it (`read`), so it is not read twice."""
    now = (now or utcnow()).replace(microsecond=0)
    action = "claimed"
    # what the remotes last said about this task (fetched by `task claims --remote` or a remote claim):
    # a plain claim honours a teammate's live remote claim, and its token never falls behind it
    elsewhere = known_remote(project, task) if remote is None else None

    def decide(base: Claim | None, remote: str | None) -> Claim:
        nonlocal action
        if elsewhere is not None and (base is None or elsewhere.token >= base.token) \
                and elsewhere.live(now) and not me.owns(elsewhere):
            raise ClaimHeld(elsewhere)
        if base is not None and base.state == "held" and me.owns(base):
            action = "renewed"
            return replace(base, until=now + lease, remote=remote or base.remote, took_over=None)
        if base is not None and base.live(now):
            raise ClaimHeld(base)
        took_over = None
        if base is not None and base.state == "held":
            took_over = {**base.holder.as_dict(), "token": base.token, "until": iso(base.until)}
        action = "took over" if took_over else "claimed"
        floor = elsewhere.token if elsewhere is not None else 0
        return Claim(task, "held", me, now, now + lease, max(base.token if base else 0, floor) + 1, remote=remote,
                     took_over=took_over)

    new, previous = _swap(project, task, decide, remote, now, local)
    return Claimed(new, action, previous)


def forget(project: Project, claimed: Claim) -> bool:
    """Undo a first claim on `claimed.task` that should never have been (the task turned out not to
    be claimable): its ref is deleted if it still points at this claim, so no trace of it is left.
    Local claims only; False when someone else's record has landed on top meanwhile."""
    return gitrepo.delete_ref(project.root, claim_ref(claimed.task), claimed.sha)


def release(project: Project, task: str, me: Identity, *, force: bool = False, now: dt.datetime | None = None,
            remote: str | None = None) -> Claim:
    """End `me`'s claim on `task` (anyone's with `force`). A claim that was pushed to a remote is
    released there too. Returns the `released` record."""
    now = (now or utcnow()).replace(microsecond=0)

    def decide(base: Claim | None, remote: str | None) -> Claim:
        if base is None or base.state != "held":
            raise SteleError(f"{task} is not claimed; nothing to release")
        if not me.owns(base) and not force:
            raise SteleError(f"{base.describe()}: only its holder releases it (you are {me.describe()}); "
                             "pass --force to release it anyway")
        return replace(base, state="released", released_at=now, released_by=me)

    return _swap(project, task, decide, remote, now)[0]


def _swap(project: Project, task: str, decide: Callable[[Claim | None, str | None], Claim],
          remote: str | None, now: dt.datetime, known: Claim | object | None = UNREAD
          ) -> tuple[Claim, Claim | None]:
    """Read the current record, let `decide` build the next one (or raise), and install it with a
    compare-and-swap. Losing a race re-reads and decides again, so a loser ends in `decide` raising
    ClaimHeld with the winner's record: it is answered as soon as the winner's ref has moved.

    Once a task's claim has been pushed to a remote, every later claim and release goes there too
    (other machines may be watching it). With a remote, the remote is swapped first and the local ref
    only follows a won push: a local ref never shows a claim that another machine could still beat,
    so what a loser is told is the truth."""
    root, ref = project.root, claim_ref(task)
    lost = 0
    while True:
        local = read(project, task) if known is UNREAD else known
        known = UNREAD  # a lost swap reads the ref again
        assert local is None or isinstance(local, Claim)
        remote = remote or (local.remote if local is not None else None)
        theirs = _read_remote(project, remote, task) if remote else None
        base = newest(local, theirs)
        new = decide(base, remote)
        parent = base.sha if base else None
        sha = gitrepo.write_record_commit(root, new.message(), parent, int(now.timestamp()),
                                          objects=project.git_common_dir / "objects")
        new = replace(new, sha=sha, where="local")
        if remote is None:
            swap = gitrepo.compare_and_swap_ref(root, ref, sha, local.sha if local else None)
            if swap.won:
                return new, base
        elif gitrepo.push_with_lease(root, remote, sha, ref, theirs.sha if theirs else None,
                                     remote_timeout(project)):
            swap = gitrepo.compare_and_swap_ref(root, ref, sha, local.sha if local else None)
            if swap.won:
                return new, base
            # A local-only claim landed in between: it wins here, so give the remote back.
            gitrepo.push_with_lease(root, remote, theirs.sha if theirs else None, ref, sha,
                                    remote_timeout(project))
        else:
            swap = gitrepo.Swap(False)
        if swap.lock is not None and read(project, task) == local:
            # Nobody moved the ref, yet its lock is taken: a writer is mid-update (it lands in
            # milliseconds) or one was killed holding it. Wait for it to move or to go stale.
            gitrepo.wait_or_recover_lock(swap.lock, project.git_common_dir / "refs" / "stele")
            continue
        lost += 1
        if lost >= ATTEMPTS:
            raise SteleError(f"could not settle the claim on {task} after {ATTEMPTS} attempts (heavy "
                             "contention); try again")
        time.sleep(random.uniform(0, 0.002) * min(lost, 10))  # back off; the winner is mid-write


def _read_remote(project: Project, remote: str, task: str) -> Claim | None:
    found = gitrepo.read_remote_ref(project.root, remote, claim_ref(task), remote_timeout(project))
    return Claim.parse(task, found[1], found[0], remote) if found else None
