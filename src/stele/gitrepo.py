"""Every git call Stele makes goes through here.

Two ways in: gitpython (imported lazily: ~80 ms) where its object model helps, and the `git` binary
through `run()` for everything on the commit path. The pre-commit hook must stay far under 300 ms and
may not import gitpython, and one `git diff -U0` or one `git cat-file --batch` answers more than a
hundred gitpython calls would.
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from .errors import SteleError
from .plain import dataclass


def repo(root: Path):
    import git

    try:
        return git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise SteleError(f"{root} is not a git repository: run `git init` first") from None


def run(root: Path, *args: str, input: bytes | None = None, ok: Iterable[int] = (0,)) -> bytes:
    """`git ARGS` in `root`; a failure becomes one SteleError line quoting git's own complaint."""
    try:
        proc = subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=root, input=input,
                              capture_output=True)
    except FileNotFoundError:
        raise SteleError("git is not installed or not on PATH: install git first") from None
    if proc.returncode not in tuple(ok):
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        raise SteleError(f"`git {' '.join(args)}` failed: {why[-1] if why else f'exit {proc.returncode}'}")
    return proc.stdout


def rev_parse(root: Path, ref: str) -> str | None:
    """The full sha `ref` names, or None when it names no commit."""
    out = run(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", ok=(0, 1, 128)).decode().strip()
    return out or None


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
    if ref is None:
        out = run(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    else:
        out = run(root, "ls-tree", "-r", "-z", "--name-only", ref)
    return sorted({p for p in out.decode("utf-8", "replace").split("\0") if p})


def read_blobs(root: Path, specs: list[str]) -> dict[str, bytes | None]:
    """`REV:path` (or `:path` for the index) -> content, None when missing; one `git cat-file` for all."""
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


def write_record_commit(root: Path, message: str, parent: str | None, epoch: int) -> str:
    """Store `message` as a commit on the empty tree (no index, no working tree, no identity config)."""
    import io

    from gitdb import IStream

    odb = repo(root).odb
    odb.store(IStream("tree", 0, io.BytesIO(b"")))  # a no-op when the empty tree is already stored
    who = f"stele <stele@localhost> {epoch} +0000"
    head = f"tree {EMPTY_TREE}\n" + (f"parent {parent}\n" if parent else "")
    data = f"{head}author {who}\ncommitter {who}\n\n{message}".encode()
    sha = odb.store(IStream("commit", len(data), io.BytesIO(data))).hexsha
    return sha.decode() if isinstance(sha, bytes) else sha


def read_ref_bodies(root: Path, *prefixes: str) -> list[tuple[str, str, str]]:
    """(ref name, object id, commit message body) of every ref under `prefixes`, in one git call.
    Through `run`, not gitpython (~80 ms to import): the session-start hook reads the claims."""
    out = run(root, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(contents:body)%00", *prefixes)
    fields = out.decode("utf-8", "replace").split("\x00")
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

