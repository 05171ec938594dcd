"""Command checks (`check: {command: CMD, timeout: S}`): run a reviewed fact's command; a non-zero exit
is a violation.

A fact file is text anyone can put in a pull request, and running its command runs their code on the
machine that evaluates it (a developer's laptop at commit time, CI with its secrets). So a command runs
only when both hold, and otherwise is not run and the reason is said (a note, never a block):

1. The clone opted in, in its own git config: `git config stele.checkCommands true`. Only `.git/config`
   counts (`gitrepo.local_config`: not `~/.gitconfig`, not `-c`, not an include): a pull request can
   change every committed file, never that one. Off by default.
2. The fact is reviewed: its file in the working tree is byte-identical to its blob at the reviewed
   ref, and the command run is the one parsed from that blob (not from the index, not from the tree).
   It was reviewed as a fact: it lies in the memory folder that the reviewed ref's own
   `.stele/config.yaml` names (a file merged elsewhere, an example in the documentation, becomes a fact
   when a pull request points `memory_dir` at it, byte-identical all the same).
   The reviewed ref is `--base REF` when doctor has one; else `git config stele.reviewedRef REF`; else
   the remote's default branch (`origin/HEAD`, as `git clone` sets it). With none of these, nothing runs.
   A fact added or changed in the working tree, the index, or the branch under review differs from
   the reviewed ref (or is absent there) and does not run.

The command is split into words (`shlex`) and run without a shell, in the repository root, with the
environment reduced to `KEPT_ENV` (no tokens or cloud credentials reach it; PATH keeps only its
absolute entries, so an empty or relative one cannot find the program in the repository root), stdin closed, in a session
of its own so that a timeout kills everything it started. A timeout, a program that does not exist or
cannot start is the fact's problem (reported, never a block). Its output is redacted before it is
shown. Not on the hook path: the pre-edit hook never runs commands (docs/hooks.md says why).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .. import gitrepo, procs
from ..anchors import codecheck
from ..anchors.codecheck import Check, Violation
from ..errors import SteleError

OPT_IN = "stele.checkCommands"
REVIEWED_REF = "stele.reviewedRef"
DEFAULT_REF = "refs/remotes/origin/HEAD"
CONFIG = ".stele/config.yaml"
KEPT_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
OUTPUT_SHOWN = 300  # characters of a failing command's last output line


class Gate:
    """Whether this evaluation may run commands, and against which reviewed commit: asked of git once,
    the first time a fact with a command check needs it (a commit without one pays nothing)."""

    def __init__(self, root: Path, base: str | None = None) -> None:
        self.root, self.base = root, base
        self._state: tuple[str | None, str, str] | None = None

    def state(self) -> tuple[str | None, str, str]:
        """(the reviewed commit's sha or None, its name, why nothing runs when it is None)."""
        if self._state is None:
            self._state = _state(self.root, self.base)
        return self._state


def _state(root: Path, base: str | None) -> tuple[str | None, str, str]:
    if gitrepo.local_config(root, OPT_IN, boolean=True) != "true":
        return None, "", f"command checks are off in this clone (opt in: `git config {OPT_IN} true`)"
    for ref, said in ((base, f"--base {base}"), (gitrepo.local_config(root, REVIEWED_REF), REVIEWED_REF),
                      (DEFAULT_REF, "origin/HEAD")):
        if ref:
            sha = gitrepo.rev_parse(root, ref)
            if sha is not None:
                return sha, ref if ref != DEFAULT_REF else "origin/HEAD", ""
            if ref != DEFAULT_REF:
                return None, "", f"the reviewed ref {ref!r} ({said}) names no commit here"
    return None, "", (f"no reviewed ref to compare the fact with: set `git config {REVIEWED_REF} main` (or pass "
                      "--base REF, or have an origin/HEAD)")


def reviewed_commands(root: Path, fact_path: str, gate: Gate) -> tuple[list[Check], str]:
    """The command checks of the fact at `fact_path` as the reviewed ref has them, when the file in the
    working tree is identical to that version; else no checks and why they do not run."""
    reviewed, ref, why_not = gate.state()
    if reviewed is None:
        return [], why_not
    specs = [f"{reviewed}:{fact_path}", f"{reviewed}:{CONFIG}"]
    blobs = gitrepo.read_blobs(root, specs)
    blob = blobs.get(specs[0])
    memory = _memory_dir(blobs.get(specs[1]))
    if memory is None or not fact_path.startswith(memory + "/"):
        return [], (f"the fact is outside the memory folder the reviewed ref {ref} names ({memory or 'none readable'}): "
                    "a command runs only from a fact reviewed as one")
    if blob is None:
        return [], f"the fact is not on the reviewed ref {ref}: its command runs once it is merged there"
    try:
        now = (root / fact_path).read_bytes()
    except OSError:
        now = None
    if now != blob:
        return [], (f"the fact differs from its version on the reviewed ref {ref}: a command runs only "
                    "from a reviewed fact")
    from ..record import frontmatter

    try:
        meta = frontmatter.parse(blob.decode("utf-8")).meta
    except (ValueError, frontmatter.FrontmatterError):
        return [], "the fact's file does not parse"
    checks, _ = codecheck.parse(meta.get("check"))
    return [c for c in checks if c.mode == "command"], ""


def _memory_dir(config: bytes | None) -> str | None:
    """The memory folder a `.stele/config.yaml` (its bytes; None: no file, so the default) names, as a
    repository path without a trailing slash; None when it cannot be read."""
    from .. import config as config_mod

    default = str(config_mod.defaults()["memory_dir"])
    data = None
    if config is not None:
        try:
            data = config_mod.load_yaml(config.decode("utf-8"), CONFIG)
        except (UnicodeDecodeError, SteleError):
            return None
    value = data.get("memory_dir", default) if isinstance(data, dict) else default if data is None else None
    if not isinstance(value, str):
        return None
    value = value.replace("\\", "/").strip().strip("/").removeprefix("./")
    return value if value and ".." not in value.split("/") else None


def reduced_env() -> dict[str, str]:
    """`KEPT_ENV` of this process's environment, with only the absolute entries of PATH: an empty or
    relative one (`PATH=$EXTRA:$PATH` with EXTRA unset) is looked up from the repository root, where a
    pull request can put a program of the reviewed command's name."""
    env = {k: os.environ[k] for k in KEPT_ENV if k in os.environ}
    if "PATH" in env:
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if os.path.isabs(p))
    return env


def run(root: Path, check: Check, where: str) -> Violation | None:
    """Run one command check in `root`; a violation (on `where`, line 1) when it exits non-zero.
    CheckError when it cannot start or runs out of time: the fact's problem."""
    import shlex

    seconds = check.timeout or codecheck.TIMEOUT
    try:
        proc = subprocess.Popen(shlex.split(check.pattern), cwd=root, env=reduced_env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as e:
        raise codecheck.CheckError(f"could not start ({e.strerror or e})") from None
    except ValueError as e:  # shlex: the fact's parse let it through, so only a changed rule gets here
        raise codecheck.CheckError(f"could not be split into words ({e})") from None
    try:
        out, _ = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        procs.stop(proc)
        raise codecheck.CheckError(f"took longer than {seconds:g} s and was stopped; raise `timeout:` or make it "
                                   "faster") from None
    if proc.returncode == 0:
        return None
    from ..redact import redact  # only for a failing command's output

    last = next((line for line in reversed(out.decode(errors="replace").splitlines()) if line.strip()), "")
    said = f"exit {proc.returncode}" + (f": {redact(last.strip()[:OUTPUT_SHOWN]).text}" if last else "")
    return Violation(check, where, 1, said)


