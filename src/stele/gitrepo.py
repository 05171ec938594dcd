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


def tracked_files(root: Path) -> list[str]:
    """Every file git tracks in the working tree, repo-relative, sorted."""
    out = repo(root).git.ls_files("-z")
    return sorted(p for p in out.split("\0") if p)
