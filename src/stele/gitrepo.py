"""Every git call Stele makes goes through here, as the `git` binary through `run()`.

Plain git and nothing else: Stele used gitpython once and measured it against plain git on the jobs
where its object model should help (bench/gitpython_vs_git.py, docs/architecture.md): reading the
record at a revision, rename detection over history and commit trailers. Plain git won all three
(one `git log` or one `git cat-file --batch` answers what takes gitpython a subprocess per commit),
and its import cost ~80 ms. So the git layer is `subprocess` and git's own plumbing, one call per job
where git allows it.
"""
from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from .errors import SteleError
from .plain import dataclass


@dataclass(frozen=True)
class Outcome:
    """What a git call returned, for callers that decide by git's own words (a lost ref race)."""
    code: int
    out: bytes
    err: str

    @property
    def why(self) -> str:
        """git's own reason in one line: its first `fatal:` or `error:` line (what follows is advice,
        whose last line, "and the repository exists.", says nothing), else its last line."""
        lines = [ln.strip() for ln in self.err.strip().splitlines() if ln.strip()]
        said = next((ln for ln in lines if ln.startswith(("fatal: ", "error: "))), lines[-1] if lines else "")
        return said.removeprefix("fatal: ").removeprefix("error: ") or f"exit {self.code}"


class NoAnswer(SteleError):
    """A git call that talks to a remote ran past its time and was stopped (with all it started)."""


# A call to a remote never waits on a person: git is told not to prompt, and runs in a session of its
# own with stdin closed, so neither git, its credential helper nor ssh can open the terminal to ask.
_NETWORK_ENV = {"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}


def call(root: Path, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
         timeout: float | None = None) -> Outcome:
    """`git ARGS` in `root`, whatever its exit status. `timeout` (seconds) is for calls that reach a
    remote: past it, git and everything it started (a remote helper, ssh) are killed and NoAnswer is
    raised. A remote that accepts the connection and never answers would otherwise hold the command
    forever."""
    argv = ["git", "-c", "core.quotePath=false", *args]
    try:
        if timeout is None:
            proc = subprocess.run(argv, cwd=root, input=input, capture_output=True,
                                  env={**os.environ, **env} if env else None)
            return Outcome(proc.returncode, proc.stdout, proc.stderr.decode(errors="replace"))
        return _bounded(root, argv, input, {**os.environ, **(env or {}), **_NETWORK_ENV}, timeout)
    except FileNotFoundError:
        raise SteleError("git is not installed or not on PATH: install git first") from None
    except NotADirectoryError:
        raise SteleError(f"{root} is not a directory") from None


def _bounded(root: Path, argv: list[str], input: bytes | None, env: dict[str, str], timeout: float) -> Outcome:
    proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.PIPE if input else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except BaseException:  # the time ran out, or Ctrl-C: nothing it started outlives the command
        from . import procs

        procs.stop(proc)
        if sys.exc_info()[0] is not subprocess.TimeoutExpired:
            raise
        raise NoAnswer(f"`git {argv[3]}` gave no answer in {timeout:g} s and was stopped") from None
    return Outcome(proc.returncode, out, err.decode(errors="replace"))


def run(root: Path, *args: str, input: bytes | None = None, ok: Iterable[int] = (0,)) -> bytes:
    """`git ARGS` in `root`; a failure becomes one SteleError line quoting git's own complaint."""
    done = call(root, *args, input=input)
    if done.code not in tuple(ok):
        raise SteleError(f"`git {' '.join(args)}` failed: {done.why}")
    return done.out


def rev_parse(root: Path, ref: str) -> str | None:
    """The full sha `ref` names, or None when it names no commit."""
    out = run(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", ok=(0, 1, 128)).decode().strip()
    return out or None


def local_config(root: Path, key: str, boolean: bool = False) -> str | None:
    """`key` from this repository's own config file (`.git/config`) only: not the user's or the
    system's, not `-c`/GIT_CONFIG_* overrides, not included files; None when unset. `boolean`
    normalises git's spellings of a boolean (yes/on/1) to `true`/`false`; a value git cannot read as one
    is None."""
    args = ["config", "--local", "--no-includes", "--get"] + (["--type=bool"] if boolean else []) + [key]
    done = call(root, *args, env={"GIT_CONFIG_PARAMETERS": "", "GIT_CONFIG_COUNT": "0"})
    return done.out.decode(errors="replace").strip() if done.code == 0 else None


def head_sha(root: Path) -> str | None:
    """The current commit, short, or None in a repository with no commits yet."""
    sha = rev_parse(root, "HEAD")
    return sha[:7] if sha else None


def require_commit(root: Path, ref: str, flag: str) -> str:
    sha = rev_parse(root, ref)
    if sha is None:
        raise SteleError(f"{flag} {ref!r} names no commit here: fetch it (CI: `fetch-depth: 0`) or check "
                         "the name")
    return sha


def merge_base(root: Path, a: str, b: str) -> str:
    out = run(root, "merge-base", a, b, ok=(0, 1)).decode().strip()
    if not out:
        raise SteleError(f"{a} and {b} share no history; compare with a two-dot range A..B instead")
    return out


def hooks_dir(root: Path) -> Path:
    """Where git looks for hooks: `core.hooksPath` when set, else the (common) git dir's hooks/."""
    out = run(root, "rev-parse", "--git-path", "hooks").decode().strip()
    path = Path(out)
    return path if path.is_absolute() else (root / path)


def is_tracked(root: Path, path: Path) -> bool:
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return bool(run(root, "ls-files", "-z", "--", rel.as_posix()).strip(b"\0"))


# --- listing and reading files -------------------------------------------------------------------

def ls_files(root: Path, ref: str | None = None) -> list[str]:
    """Files at `ref`, or (None) the working tree's tracked and untracked-but-not-ignored files."""
    if ref is not None:
        return sorted(tree_blobs(root, ref))
    out = run(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({p for p in out.decode("utf-8", "replace").split("\0") if p})


def stage(root: Path, paths: list[str]) -> None:
    """`git add` these paths, deletions included (a path git never tracked must exist)."""
    if paths:
        run(root, "add", "-A", "--", *paths)


def ever_existed(root: Path, path: str) -> bool:
    """Did any commit of any ref ever hold `path` (a file, or anything under a folder)?"""
    out = call(root, "log", "--all", "-1", "--format=%H", "--", path)
    return out.code != 0 or bool(out.out.strip())  # no history to ask (no commit yet): assume it did


def changed_paths(root: Path) -> set[str]:
    """Paths that differ from HEAD in the working tree or the index, or are untracked."""
    out = call(root, "status", "--porcelain", "-z", "--untracked-files=all")
    if out.code != 0:
        return set()
    fields = out.out.decode("utf-8", "replace").split("\0")
    found, skip = set(), False
    for f in fields:
        if skip:  # the source path of a rename
            skip = False
            continue
        if len(f) > 3:
            found.add(f[3:])
            skip = f[0] in "RC"
    return found


def tree_blobs(root: Path, ref: str, under: str = "") -> dict[str, str]:
    """path -> blob id of every file at `ref` (below the folder `under`), from one `git ls-tree`.
    Reading blobs by id is what makes a whole record at a revision cheap: `REV:path` specs make
    `git cat-file` walk the tree once per file (3.3 s of CPU for 10k facts; by id, 0.2 s)."""
    args = ["ls-tree", "-r", "-z", "--full-tree", ref] + (["--", under] if under else [])
    found = {}
    for entry in run(root, *args).decode("utf-8", "replace").split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if path and len(parts) == 3 and parts[1] == "blob":
            found[path] = parts[2]
    return found


def read_blobs(root: Path, specs: list[str]) -> dict[str, bytes | None]:
    """Object names (a blob id, `REV:path`, or `:path` for the index) -> content, None when missing or
    not a blob; one `git cat-file` for all."""
    specs = [s for s in dict.fromkeys(specs) if "\n" not in s]
    if not specs:
        return {}
    out = run(root, "cat-file", "--batch", input="".join(s + "\n" for s in specs).encode())
    found: dict[str, bytes | None] = {}
    pos = 0
    for spec in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end]
        pos = end + 1
        if header.endswith((b" missing", b" ambiguous")):
            found[spec] = None
            continue
        _, kind, size = header.split()
        found[spec] = out[pos:pos + int(size)] if kind == b"blob" else None
        pos += int(size) + 1
    return found


# --- diffs with line numbers ---------------------------------------------------------------------

@dataclass(frozen=True)
class FileDiff:
    """One file's change. Ranges are 1-based inclusive (start, end); a pure insertion or deletion is a
    point (n, n - 1) after line n - 1 on that side. `binary` diffs have no ranges: the whole file counts."""
    path: str
    old_path: str | None
    status: str  # A (added), M, D (deleted: `path` is the old path), R (renamed), T, B (binary)
    new_ranges: tuple[tuple[int, int], ...] = ()
    old_ranges: tuple[tuple[int, int], ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path,) if not self.old_path or self.old_path == self.path else (self.path, self.old_path)

    def touches(self, new_span: tuple[int, int] | None, old_span: tuple[int, int] | None) -> bool:
        """Does this change touch a definition at `new_span` (new side) or `old_span` (old side)?"""
        if self.status == "B":
            return True
        return _hits(self.new_ranges, new_span) or _hits(self.old_ranges, old_span)


def _hits(ranges: tuple[tuple[int, int], ...], span: tuple[int, int] | None) -> bool:
    if span is None:
        return False
    lo, hi = span
    for start, end in ranges:
        if end < start:  # a point between lines start-1 and start: inside only if both are in the span
            if lo < start <= hi:
                return True
        elif start <= hi and end >= lo:
            return True
    return False


_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def diff(root: Path, *, staged: bool = False, ref: str | None = None,
         paths: Iterable[str] = ()) -> list[FileDiff]:
    """The change as files with changed line ranges: `staged` (index vs HEAD), or `ref` vs the working
    tree (`ref` may be a range `A..B` or `A...B`). Renames are followed (`-M`)."""
    args = ["diff", "-M", "--unified=0", "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/",
            "--dst-prefix=b/"]
    if staged:
        args.append("--cached")
    if ref:
        args.append(ref)
    return parse_diff(run(root, *args, "--", *paths))


def parse_diff(patch: bytes) -> list[FileDiff]:
    files: list[FileDiff] = []
    cur: dict | None = None

    def flush() -> None:
        if cur is not None:
            path = cur["new"] if cur["status"] != "D" else cur["old"]
            old = cur["old"] if cur["status"] in ("R", "M", "T", "B") and cur["old"] != path else None
            files.append(FileDiff(path, old, cur["status"], tuple(cur["n"]), tuple(cur["o"])))

    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            flush()
            a, b = _header_paths(line[len(b"diff --git "):].decode("utf-8", "replace"))
            cur = {"old": a, "new": b, "status": "M", "n": [], "o": []}
        elif cur is None:
            continue
        elif line.startswith(b"@@"):
            m = _HUNK.match(line)
            if m:
                o_start, o_len, n_start, n_len = (int(g) if g is not None else 1 for g in m.groups())
                cur["o"].append((o_start, o_start + o_len - 1) if o_len else (o_start + 1, o_start))
                cur["n"].append((n_start, n_start + n_len - 1) if n_len else (n_start + 1, n_start))
        elif line.startswith(b"new file mode"):
            cur["status"] = "A"
        elif line.startswith(b"deleted file mode"):
            cur["status"] = "D"
        elif line.startswith(b"rename from "):
            cur["status"], cur["old"] = "R", _unquote(line[12:].decode("utf-8", "replace"))
        elif line.startswith(b"rename to "):
            cur["new"] = _unquote(line[10:].decode("utf-8", "replace"))
        elif line.startswith(b"Binary files "):
            cur["status"] = "B" if cur["status"] in ("M", "R") else cur["status"]
        elif line.startswith((b"--- ", b"+++ ")) and line[4:] != b"/dev/null":
            cur["old" if line[0] == 45 else "new"] = _unquote(line[4:].decode("utf-8", "replace"))[2:]
    flush()
    return files


def _header_paths(text: str) -> tuple[str, str]:
    """`a/x b/x` (possibly quoted) -> ("x", "x"); exact for unquoted names without ` b/` inside."""
    if text.startswith('"'):
        end = text.index('"', 1)
        while text[end - 1] == "\\":
            end = text.index('"', end + 1)
        a, rest = _unquote(text[: end + 1]), text[end + 2:]
        return a[2:], _unquote(rest)[2:]
    a, _, b = text.partition(" b/")
    return a[2:], _unquote(b)


def _unquote(text: str) -> str:
    """Undo git's C-style quoting of a path (`"tab\\there"`)."""
    if not (len(text) >= 2 and text.startswith('"') and text.endswith('"')):
        return text
    raw = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1", "replace").decode("utf-8", "replace")


# --- history: renames and trailers ----------------------------------------------------------------

def renames(root: Path) -> dict[str, tuple[str, str]]:
    """old path -> (new path, short sha or "uncommitted"), for every rename git can see: staged and
    unstaged changes against HEAD first, then history, newest first (so the latest rename wins)."""
    found: dict[str, tuple[str, str]] = {}
    if rev_parse(root, "HEAD") is None:
        return found
    pending = run(root, "diff", "-M", "--name-status", "-z", "HEAD").decode("utf-8", "replace").split("\0")
    _collect_renames(pending, "uncommitted", found)
    log = run(root, "log", "-M", "--diff-filter=R", "--name-status", "-z", "--format=%x01%h", "HEAD")
    for chunk in log.decode("utf-8", "replace").split("\x01")[1:]:
        sha, _, rest = chunk.partition("\n")
        _collect_renames(rest.lstrip("\0\n").split("\0"), sha.strip("\0\n "), found)
    return found


def _collect_renames(fields: list[str], where: str, found: dict[str, tuple[str, str]]) -> None:
    i = 0
    while i < len(fields):
        status = fields[i].strip()
        if status.startswith(("R", "C")) and i + 2 < len(fields):
            if status.startswith("R"):
                found.setdefault(fields[i + 1], (fields[i + 2], where))
            i += 3
        else:
            i += 2 if status else 1


def recently_changed(root: Path, commits: int = 200) -> list[str]:
    """Files that are untracked, changed but not committed, or changed in the last `commits` commits,
    most recent first (where code that moved is most likely to be)."""
    found = [p for p in run(root, "ls-files", "-z", "--others", "--exclude-standard")
             .decode("utf-8", "replace").split("\0") if p]
    if rev_parse(root, "HEAD") is not None:
        found += [p for p in run(root, "diff", "--name-only", "-z", "HEAD").decode("utf-8", "replace").split("\0")
                  if p]
        log = run(root, "log", f"-n{commits}", "--format=", "--name-only", "-z", "--diff-filter=AMR", "HEAD")
        found += [p.strip("\n") for p in log.decode("utf-8", "replace").split("\0") if p.strip("\n")]
    return list(dict.fromkeys(found))


def trailers(root: Path, rev_range: str, key: str) -> list[tuple[str, str]]:
    """(short sha, value) of every `KEY: value` trailer in the commits of `rev_range`."""
    out = run(root, "log", f"--format=%h%x01%(trailers:key={key},valueonly,separator=%x02)%x00", rev_range)
    found = []
    for record in out.decode("utf-8", "replace").split("\0"):
        sha, _, values = record.strip("\n").partition("\x01")
        found += [(sha, v.strip()) for v in values.split("\x02") if v.strip()]
    return found


# --- claim refs ------------------------------------------------------------------------------------
# A claim record is a commit with the empty tree whose message holds the record; a ref points at it.
# Refs give compare-and-swap for free (`update-ref NEW OLD` locally, a leased push remotely), and the
# parent chain keeps every claim, takeover and release of a task as `git log` history.

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_LOCK_RE = re.compile(r"Unable to create '([^']+\.lock)': File exists")


def write_record_commit(root: Path, message: str, parent: str | None, epoch: int,
                        objects: Path | None = None) -> str:
    """Store `message` as a commit on the empty tree (no index, no working tree, no identity config):
    `git hash-object` writes exactly these bytes, so the record's sha depends on nothing else.
    `objects`: the repository's object folder, to see that the empty tree is already stored (one git
    call fewer for every racing claimer)."""
    who = f"stele <stele@localhost> {epoch} +0000"
    head = f"tree {EMPTY_TREE}\n" + (f"parent {parent}\n" if parent else "")
    data = f"{head}author {who}\ncommitter {who}\n\n{message}".encode()
    # the empty tree is built into git, but a push or fsck wants it stored: writing it is a no-op after
    # once, and while it is a loose object a stat says so (once a gc packs it, git is asked every time)
    if objects is None or not (objects / EMPTY_TREE[:2] / EMPTY_TREE[2:]).is_file():
        run(root, "hash-object", "-t", "tree", "-w", "--stdin", input=b"")
    return run(root, "hash-object", "-t", "commit", "-w", "--stdin", input=data).decode().strip()


def delete_ref(root: Path, ref: str, old: str) -> bool:
    """Delete `ref` only if it still points at `old` (a compare-and-swap, like `compare_and_swap_ref`);
    False when it has moved on."""
    return call(root, "update-ref", "-d", ref, old).code == 0


def read_ref_bodies(root: Path, *prefixes: str) -> list[tuple[str, str, str]]:
    """(ref name, object id, commit message body) of every ref under `prefixes`, in one git call."""
    out = run(root, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(contents:body)%00", *prefixes)
    fields = out.decode("utf-8", "replace").split("\x00")
    return [(fields[i].strip(), fields[i + 1].strip(), fields[i + 2].strip())
            for i in range(0, len(fields) - 2, 3)]


@dataclass(frozen=True)
class Swap:
    """The answer of one compare-and-swap: `won`, or lost with the lock file that stood in the way
    (None when the ref had simply moved on)."""
    won: bool
    lock: Path | None = None


def compare_and_swap_ref(root: Path, ref: str, new: str, old: str | None) -> Swap:
    """Point `ref` at `new` only if it is at `old` now (None: only if it does not exist yet). Lost when
    another writer got there first: git's lock file and old-value check make this atomic across
    processes. A lost swap names the lock file git could not create, if that was why."""
    done = call(root, "update-ref", ref, new, old or "")
    if done.code == 0:
        return Swap(True)
    if "cannot lock ref" in done.err or "Unable to create" in done.err:
        m = _LOCK_RE.search(done.err)
        return Swap(False, Path(m.group(1)) if m else None)
    raise SteleError(f"git update-ref {ref} failed: {done.why}")


STALE_LOCK_SECONDS = 5.0  # git holds a ref lock for milliseconds; a lock this old lost its writer


def wait_or_recover_lock(lock: Path, within: Path) -> None:
    """A ref lock that stands in the way: wait until it is STALE_LOCK_SECONDS old, then take it away,
    so a writer killed inside `git update-ref` blocks the ref for seconds, not until someone deletes
    the file by hand. Only locks under `within` (Stele's own refs) are touched; any other lock is
    one clear error naming it.

    Safe against taking a live lock: the lock is renamed aside (atomic) and put back when the file
    renamed is not the one judged stale (a new writer took the name meanwhile). A lock renamed aside
    is named `*.lock` so git never reads it as a ref."""
    try:
        lock.resolve().relative_to(within.resolve())
    except (ValueError, OSError):
        raise SteleError(f"{lock} blocks the update: if no git process is running, a crashed one left it; "
                         "delete it and try again") from None
    try:
        judged = lock.stat()
    except FileNotFoundError:
        return  # its writer finished
    age = time.time() - judged.st_mtime
    if age < STALE_LOCK_SECONDS:
        time.sleep(min(STALE_LOCK_SECONDS - age, 0.05) + random.uniform(0, 0.01))
        return  # the caller re-reads the ref: a live writer has usually landed by now
    aside = lock.with_name(f"{lock.name[:-5]}.stale-{os.getpid()}-{random.getrandbits(32):08x}.lock")
    try:
        os.rename(lock, aside)
    except FileNotFoundError:
        return
    moved = aside.stat()
    if (moved.st_ino, moved.st_mtime_ns) != (judged.st_ino, judged.st_mtime_ns):
        try:  # not the stale file: a writer took the lock between the look and the rename; give it back
            os.link(aside, lock)
        except FileExistsError:
            pass
    aside.unlink(missing_ok=True)


def remote_names(root: Path) -> list[str]:
    return run(root, "remote").decode().split()


def _no_answer(remote: str, e: NoAnswer, doing: str, more: str = "") -> SteleError:
    return SteleError(f"cannot {doing} {remote}: {e}{more}; check the remote (`git remote -v`) and your "
                      "network, or raise tasks.remote_timeout_ms in .stele/config.yaml")


def fetch_refs(root: Path, remote: str, src_prefix: str, dst_prefix: str, timeout: float | None = None) -> None:
    """Mirror the remote's refs under `src_prefix` to local refs under `dst_prefix` (pruning gone ones)."""
    try:
        done = call(root, "fetch", "--quiet", "--prune", "--no-write-fetch-head", "--no-tags", remote,
                    f"+{src_prefix}*:{dst_prefix}*", timeout=timeout)
    except NoAnswer as e:
        raise _no_answer(remote, e, "fetch claims from") from None
    if done.code:
        raise SteleError(f"cannot fetch claims from {remote}: {done.why}; check the remote "
                         "(`git remote -v`) and your network")


def read_remote_ref(root: Path, remote: str, ref: str, timeout: float | None = None) -> tuple[str, str] | None:
    """(object id, commit message body) of `ref` on `remote`, or None when it does not exist there.
    Fetches the object without writing any local ref, so concurrent readers never fight over a lock.
    `timeout` bounds each call to the remote (NoAnswer past it)."""
    def unreachable(done: Outcome) -> SteleError:
        return SteleError(f"cannot read claims from {remote}: {done.why}; check the remote "
                          "(`git remote -v`) and your network")

    try:
        for _ in range(5):
            listed = call(root, "ls-remote", remote, ref, timeout=timeout)
            if listed.code:
                raise unreachable(listed)
            found = [line.split()[0] for line in listed.out.decode().splitlines() if line.split()[1:] == [ref]]
            if not found:
                return None
            sha = found[0]
            if not _has_object(root, sha):
                fetched = call(root, "fetch", "--quiet", "--no-write-fetch-head", "--no-tags", remote, ref,
                               timeout=timeout)
                if fetched.code:
                    raise unreachable(fetched)
            if _has_object(root, sha):  # else the ref moved between the two calls: ask again
                body = run(root, "cat-file", "commit", sha).decode("utf-8", "replace")
                return sha, body.partition("\n\n")[2]
    except NoAnswer as e:
        raise _no_answer(remote, e, "read claims from") from None
    raise SteleError(f"{ref} on {remote} keeps moving; try again")


def _has_object(root: Path, sha: str) -> bool:
    return call(root, "cat-file", "-e", sha).code == 0


# How a push that lost a race is reported: the client's lease check (`[rejected] (stale info)`), or
# the remote's own ref transaction finding the ref moved (`[remote rejected] (failed to update ref)`,
# `cannot lock ref ...: is at X but expected Y`). Any other `[remote rejected]` reason (a hook that
# declined, a hidden or protected ref, a read-only remote) is a refusal: retrying cannot win it.
_PUSH_STATUS = re.compile(r":(?P<ref>\S+)\t\[(?P<what>remote rejected|rejected)\](?: \((?P<why>[^)\n]*)\)?)?")
_LOST_RACE = re.compile(r"failed to update ref|lock|expected|stale|old value|fetch first|non-fast-forward",
                        re.IGNORECASE)


def push_with_lease(root: Path, remote: str, sha: str | None, ref: str, expect: str | None,
                    timeout: float | None = None) -> bool:
    """Point `ref` on `remote` at `sha` (None deletes it) only if it is still at `expect` (None: absent).
    Returns False when the remote moved first; the remote's ref transaction decides, so of two
    machines pushing at once exactly one wins. A remote that refuses the push for any other reason
    (a hook declined it) is a SteleError quoting its reason: no retry could win. Pre-push hooks are
    skipped: this is not a code push."""
    try:
        done = call(root, "push", "--porcelain", "--no-verify", f"--force-with-lease={ref}:{expect or ''}",
                    remote, f"{sha or ''}:{ref}", timeout=timeout)
    except NoAnswer as e:
        raise _no_answer(remote, e, "push the claim to", " (it may have landed there: `stele task claims "
                         "--remote` shows)") from None
    out = done.out.decode("utf-8", "replace")
    if done.code == 0:
        return f":{ref}\t" in out
    status = next((m for m in _PUSH_STATUS.finditer(out) if m["ref"] == ref), None)
    if status is not None:
        why = status["why"] or ""
        if status["what"] == "rejected" or _LOST_RACE.search(why):
            return False  # `!<TAB>sha:ref<TAB>[rejected] (stale info)`: the lease did not hold
        said = [ln.removeprefix("remote:").strip() for ln in done.err.splitlines() if ln.startswith("remote:")]
        said = [ln for ln in said if ln]
        raise SteleError(f"{remote} refused the push of {ref}: {why or 'remote rejected'}"
                         + (f" ({said[0]})" if said else "")
                         + "; the remote must accept pushes to refs/stele/* (docs/tasks.md, \"Across machines\")")
    raise SteleError(f"cannot push the claim to {remote}: {done.why}; check the remote "
                     "(`git remote -v`) and your access to it")


# --- the record's history -------------------------------------------------------------------------

def commit_time(root: Path, sha: str) -> str:
    """The committer date of `sha`, strict ISO 8601 with its offset (`2026-03-04T10:00:00+01:00`)."""
    return run(root, "show", "-s", "--format=%cI", sha).decode().strip()


def last_commit_before(root: Path, moment: str, ref: str = "HEAD") -> str | None:
    """The newest commit on `ref`'s first-parent history committed at or before `moment` (any date git
    reads; Stele passes `2026-03-04T10:00:00Z`), or None when there is none (no commits yet, or all of
    them are later). First parent: a merged branch's own commits are not what the branch held then."""
    out = run(root, "rev-list", "-1", "--first-parent", f"--before={moment}", ref, "--", ok=(0, 128))
    return out.decode().strip() or None


def first_commit(root: Path, ref: str = "HEAD") -> str | None:
    """The oldest commit on `ref`'s first-parent history (None with no commits yet)."""
    out = run(root, "rev-list", "--first-parent", "--reverse", ref, "--", ok=(0, 128)).decode()
    return out.split("\n", 1)[0].strip() or None


# --- freshness: what changed a file since a commit or a time (anchors/drift.py) -----------------------

def head_id(git_dir: Path, common_dir: Path) -> str | None:
    """HEAD's full sha read from the files git keeps it in, without running git (a hook asks on every
    call, and a cache keyed by it must cost no process); None when it cannot be told this way (no
    commit yet, an unusual ref store): the caller then treats every cached answer as unknown."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if re.fullmatch(r"[0-9a-f]{40,64}", head) else None
        ref = head[4:].strip()
        for base in (git_dir, common_dir):
            loose = base / ref
            if loose.is_file():
                sha = loose.read_text(encoding="utf-8").strip()
                return sha if re.fullmatch(r"[0-9a-f]{40,64}", sha) else None
        packed = common_dir / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                sha, _, name = line.partition(" ")
                if name == ref and re.fullmatch(r"[0-9a-f]{40,64}", sha):
                    return sha
    except (OSError, UnicodeDecodeError):
        pass
    return None


@dataclass(frozen=True)
class Change:
    """One commit's change to one path: its blobs before and after (40 zeros: absent)."""
    sha: str
    time: int  # committer time, epoch seconds
    before: str
    after: str


def path_changes(root: Path, path: str, since_commit: str | None = None, since_time: str | None = None
                 ) -> list[Change] | None:
    """The commits on HEAD's history that changed `path`, oldest first: after `since_commit`
    (`since_commit..HEAD`), else committed after `since_time` (ISO; a bare date from its midnight), in
    one `git log --raw`. None when
    git cannot answer (not a repository, `since_commit` unknown here: a shallow clone, a rebase).
    `since_commit` is a fact's `verified_at`, text from a pull request: after `--end-of-options`, so
    `--output=PATH` is a revision git does not know, never an option that writes a file."""
    # git reads a bare date as that day at the current time of day: from its midnight, so a fact
    # written on a day sees the commits of that whole day, whatever the hour it is checked at
    when = f"{since_time}T00:00:00" if since_time and len(since_time) == 10 else since_time
    since = [f"--since={when}"] if when and not since_commit else []
    done = call(root, "log", "--format=%x00%H %ct", "--raw", "--no-abbrev", "--no-renames", "--reverse",
                *since, "--end-of-options", f"{since_commit}..HEAD" if since_commit else "HEAD", "--", path)
    if done.code != 0:
        return None
    out = []
    for chunk in done.out.decode("utf-8", "replace").split("\0")[1:]:
        head, *rest = chunk.splitlines()
        sha, _, when = head.partition(" ")
        for line in rest:
            meta, _, name = line.partition("\t")
            parts = meta.split()
            if name == path and len(parts) >= 4 and parts[0].startswith(":"):
                out.append(Change(sha, int(when or 0), parts[2], parts[3]))
                break
    return out
