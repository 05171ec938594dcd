"""Finishing a build in a process of its own, so that no read waits for a whole index to be built.

A read with a deadline (a hook) that finds the index far behind (deleted, or a checkout that changed
thousands of facts) does what fits in its slice, starts this process and answers from what is there.
The process (`python -m stele.index.build ROOT`, which calls `build.finish`) takes the build lock (so at most one builder runs; a second one started meanwhile waits,
finds nothing left to do and exits), carries on from what the manifest says is indexed, and exits.
It is detached from the hook (its own session, no terminal, no inherited pipes) like `git gc --auto`,
so a harness that kills the hook's process group does not kill it; if it dies anyway, the next read
carries on, since every batch it finished is committed.

`STELE_BACKGROUND=0` turns it off (the next reads then catch up slice by slice).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable

ENV = "STELE_BACKGROUND"


def enabled() -> bool:
    return os.environ.get(ENV, "").strip().lower() not in ("0", "false", "no", "off")


# Set in a call the resident server forked (serve/resident.py): asks that server to finish the build in
# a child of its own, which costs a fork instead of a new interpreter's ~300 ms of imports.
HANDOFF: Callable[[], bool] | None = None


def start(project) -> bool:
    """Start the builder for `project`; False when it is turned off or cannot be started."""
    if not enabled():
        return False
    if HANDOFF is not None and HANDOFF():
        return True
    import subprocess

    try:
        subprocess.Popen([sys.executable, "-m", "stele.index.build", str(project.root)],
                         cwd=str(project.root), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
    except OSError:
        return False
    return True
