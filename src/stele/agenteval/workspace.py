"""The throwaway checkouts one run works in, and what the agent changed there.

Each run gets its own `git clone --shared --no-checkout` of the repository, checked out detached at the
start commit, under a temporary folder outside the repository: the user's working tree, index, branches
and worktree list are never touched (the clone borrows the objects read-only and writes its own). Not a
linked worktree (`git worktree add`): Codex resolves a linked worktree's project settings to the main
checkout's, so the hooks installed in the worktree never ran. The arm's setup (a patch, Stele's hooks
or their absence) is committed in the clone before the run, so the diff judged afterwards is the
agent's alone. `remove` always runs (a `finally`, so Ctrl-C too).
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .. import gitrepo

_ID = ("-c", "user.name=stele eval", "-c", "user.email=stele-eval@localhost", "-c", "commit.gpgsign=false")


def create(repo: Path, start: str, dest: Path) -> Path:
    """A clone of `repo` at `dest`, checked out detached at `start` (a commit sha of `repo`)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    gitrepo.run(dest.parent, "clone", "--quiet", "--shared", "--no-checkout", str(repo), dest.name)
    gitrepo.run(dest, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", start)
    return dest


def remove(dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)


def settings(source: Path, dest: Path) -> None:
    """Stele's committed settings (`.stele/config.yaml` and `.stele/.gitignore`) in the clone as the
    user's working tree has them, when the commit lacks them (a repository that ran `stele init` and has
    not committed yet)."""
    from .. import atomic

    for name in ("config.yaml", ".gitignore"):
        if (source / name).is_file() and not (dest / name).is_file():
            atomic.write(dest / name, (source / name).read_bytes())


def apply_patch(tree: Path, patch: str) -> None:
    gitrepo.run(tree, "apply", "--whitespace=nowarn", patch)


def restore(tree: Path, paths: list[str]) -> None:
    """Put these files back as the start commit has them (those it has)."""
    tracked = set(gitrepo.ls_files(tree, "HEAD"))
    keep = [p for p in paths if p in tracked]
    if keep:
        gitrepo.run(tree, "checkout", "HEAD", "--", *keep)


def commit_all(tree: Path, message: str) -> str:
    """Everything in the tree, committed (an empty commit when nothing changed); its sha."""
    gitrepo.run(tree, "add", "-A")
    gitrepo.run(tree, *_ID, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
    return gitrepo.run(tree, "rev-parse", "HEAD").decode().strip()


@dataclass
class Change:
    paths: list[str] = field(default_factory=list)  # every file added, changed or deleted
    added: dict[str, list[str]] = field(default_factory=dict)  # path -> its added lines


def changes(tree: Path, base: str) -> Change:
    """What changed in the tree since `base`, untracked files included (they are staged to be seen)."""
    gitrepo.run(tree, "add", "-A")
    names = gitrepo.run(tree, "diff", "--cached", "--name-only", "-z", "--no-renames", base).decode()
    out = Change(paths=[p for p in names.split("\0") if p])
    patch = gitrepo.run(tree, "diff", "--cached", "--unified=0", "--no-color", "--no-ext-diff", "--no-renames",
                        base).decode("utf-8", "replace")
    current = ""
    for line in patch.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else ""
        elif line.startswith("+") and current:
            out.added.setdefault(current, []).append(line[1:])
    return out
