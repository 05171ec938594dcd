"""Every git call Stele makes goes through here (gitpython is imported lazily: ~80 ms)."""
from __future__ import annotations

from pathlib import Path

from .errors import SteleError


def repo(root: Path):
    import git

    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise SteleError(f"{root} is not a git repository: run `git init` first") from None


def head_sha(root: Path, short: bool = True) -> str | None:
    """The current commit, or None in a repository with no commits yet."""
    import git

    try:
        sha = repo(root).head.commit.hexsha
    except (ValueError, git.BadName):
        return None
    return sha[:7] if short else sha


# --- claim refs ------------------------------------------------------------------------------------
# A claim record is a commit with the empty tree whose message holds the record; a ref points at it.
# Refs give compare-and-swap for free (`update-ref NEW OLD` locally, a leased push remotely), and the
# parent chain keeps every claim, takeover and release of a task as `git log` history.

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def write_record_commit(root: Path, message: str, parent: str | None, epoch: int) -> str:
    """Store `message` as a commit on the empty tree (no index, no working tree, no identity config)."""
    import io

    from gitdb import IStream

    odb = repo(root).odb
    odb.store(IStream("tree", 0, io.BytesIO(b"")))  # a no-op when the empty tree is already stored
    who = f"stele <stele@localhost> {epoch} +0000"
    head = f"tree {EMPTY_TREE}\n" + (f"parent {parent}\n" if parent else "")
    data = f"{head}author {who}\ncommitter {who}\n\n{message}".encode("utf-8")
    sha = odb.store(IStream("commit", len(data), io.BytesIO(data))).hexsha
    return sha.decode() if isinstance(sha, bytes) else sha


def read_ref_bodies(root: Path, *prefixes: str) -> list[tuple[str, str, str]]:
    """(ref name, object id, commit message body) of every ref under `prefixes`, in one git call."""
    out = repo(root).git.for_each_ref(*prefixes, format="%(refname)%00%(objectname)%00%(contents:body)%00")
    fields = out.split("\x00")
    return [(fields[i].strip(), fields[i + 1].strip(), fields[i + 2].strip())
            for i in range(0, len(fields) - 2, 3)]


def compare_and_swap_ref(root: Path, ref: str, new: str, old: str | None) -> bool:
    """Point `ref` at `new` only if it is at `old` now (None: only if it does not exist yet). False when
    another writer got there first: git's lock file and old-value check make this atomic across processes."""
    import git

    try:
        repo(root).git.update_ref(ref, new, old or "")
    except git.GitCommandError as e:
        # "cannot lock ref": it is at another value, already exists, or another writer holds its lock
        if "cannot lock ref" in str(e.stderr):
            return False
        raise SteleError(f"git update-ref {ref} failed: {_last_line(e.stderr)}") from None
    return True


def remote_names(root: Path) -> list[str]:
    return repo(root).git.remote().split()


def fetch_refs(root: Path, remote: str, src_prefix: str, dst_prefix: str) -> None:
    """Mirror the remote's refs under `src_prefix` to local refs under `dst_prefix` (pruning gone ones)."""
    import git

    try:
        repo(root).git.fetch("--quiet", "--prune", "--no-write-fetch-head", "--no-tags", remote,
                             f"+{src_prefix}*:{dst_prefix}*")
    except git.GitCommandError as e:
        raise SteleError(f"cannot fetch claims from {remote}: {_last_line(e.stderr)}; check the remote "
                         "(`git remote -v`) and your network") from None


def read_remote_ref(root: Path, remote: str, ref: str) -> tuple[str, str] | None:
    """(object id, commit message body) of `ref` on `remote`, or None when it does not exist there.
    Fetches the object without writing any local ref, so concurrent readers never fight over a lock."""
    import git

    cmd = repo(root).git
    for _ in range(5):
        try:
            found = [line.split()[0] for line in cmd.ls_remote(remote, ref).splitlines()
                     if line.split()[1:] == [ref]]
            if not found:
                return None
            sha = found[0]
            if not _has_object(cmd, sha):
                cmd.fetch("--quiet", "--no-write-fetch-head", "--no-tags", remote, ref)
        except git.GitCommandError as e:
            raise SteleError(f"cannot read claims from {remote}: {_last_line(e.stderr)}; check the remote "
                             "(`git remote -v`) and your network") from None
        if _has_object(cmd, sha):  # else the ref moved between the two calls: ask again
            return sha, cmd.cat_file("commit", sha).partition("\n\n")[2]
    raise SteleError(f"{ref} on {remote} keeps moving; try again")


def _has_object(cmd, sha: str) -> bool:
    import git

    try:
        cmd.cat_file("-e", sha)
        return True
    except git.GitCommandError:
        return False


def push_with_lease(root: Path, remote: str, sha: str | None, ref: str, expect: str | None) -> bool:
    """Point `ref` on `remote` at `sha` (None deletes it) only if it is still at `expect` (None: absent).
    Returns False when the remote moved first; the remote's ref transaction decides, so of two
    machines pushing at once exactly one wins. Pre-push hooks are skipped: this is not a code push."""
    import git

    try:
        out = repo(root).git.push("--porcelain", "--no-verify", f"--force-with-lease={ref}:{expect or ''}",
                                  remote, f"{sha or ''}:{ref}", with_extended_output=True)[1]
    except git.GitCommandError as e:
        if f":{ref}\t[rejected]" in str(e.stdout) or f":{ref}\t[remote rejected]" in str(e.stdout):
            return False  # `!<TAB>sha:ref<TAB>[rejected] (stale info)`: the lease did not hold
        raise SteleError(f"cannot push the claim to {remote}: {_last_line(e.stderr)}; check the remote "
                         "(`git remote -v`) and your access to it") from None
    return f":{ref}\t" in out


def _last_line(text: object) -> str:
    lines = [ln.strip(" '\"") for ln in str(text).strip().splitlines() if ln.strip(" '\"")]
    return lines[-1].removeprefix("stderr: ").strip(" '\"") if lines else "unknown error"


def tracked_files(root: Path) -> list[str]:
    """Every file git tracks in the working tree, repo-relative, sorted."""
    out = repo(root).git.ls_files("-z")
    return sorted(p for p in out.split("\0") if p)
