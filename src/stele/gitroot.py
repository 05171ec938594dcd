"""What marks a directory as a git repository's root, in `os` alone: `project.find_root` and the resident
client's walk (which imports nothing else on the way of a call) share this one rule.

Git's own: a `.git` directory holding `HEAD`, or a `.git` file (a linked worktree's or a submodule's
`gitdir:` pointer). An empty `.git` directory is not a repository, though it exists: Codex's Linux
sandbox leaves `/tmp/.git` behind (it creates mount targets for the folders it protects), and taking it
for one made every folder under `/tmp` part of a "repository" rooted at `/tmp`, where `stele init`
then wrote its files.
"""
from __future__ import annotations

import os


def marks_repository(directory: str) -> bool:
    """Is `directory` the root of a git repository (or of a linked worktree)?"""
    dot = os.path.join(directory, ".git")
    return os.path.isfile(os.path.join(dot, "HEAD")) or os.path.isfile(dot)
