"""Finishing a build in a process of its own, so that no read waits for a whole index to be built.

A read with a deadline (a hook) that finds the index far behind (deleted, or a checkout that changed
thousands of facts) does what fits in its slice, starts this process and answers from what is there.
The process (`python -m stele.index.build ROOT`, which calls `build.finish`) waits for its turn at
the build lock, carries on from what the manifest says is indexed (or, after an update that ran to its
end, does only what that update left: vectors, merges), and exits. A builder started while another is
still waiting for its turn exits at once (`QUEUE_LOCK`): that one reads the catalog when its turn
comes, so it does the work of both, and at most two builders exist at a time.
It is detached from the hook (its own session, no terminal, no inherited pipes) like `git gc --auto`,
so a harness that kills the hook's process group does not kill it; if it dies anyway, the next read
carries on, since every batch it finished is committed.

`STELE_BACKGROUND=0` turns it off (the next reads then catch up slice by slice).
"""
from __future__ import annotations

import os
import sys

ENV = "STELE_BACKGROUND"


def enabled() -> bool:
    return os.environ.get(ENV, "").strip().lower() not in ("0", "false", "no", "off")


def start(project) -> bool:
    """Start the builder for `project`; False when it is turned off or cannot be started."""
    if not enabled():
        return False
    import subprocess

    try:
        subprocess.Popen([sys.executable, "-m", "stele.index.build", str(project.root)],
                         cwd=str(project.root), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
    except OSError:
        return False
    return True
