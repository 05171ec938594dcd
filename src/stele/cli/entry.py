"""The console script. `stele hook ...`, `stele recall`, `stele search`, `stele task claim` and
`stele task release` are dispatched here, before typer (and rich, and pydantic-sized import graphs)
are loaded: they run once per prompt (or, for a claim, by many racing agents at once) in a fresh
process, and typer costs ~180 ms of a ~330 ms recall on a 10k-fact record. Hooks, recall and search go
to the repository's resident server first when one runs (`cli/resident/`; off by default,
`residency.py`), which runs `here` in a forked child that has all of it imported already."""
from __future__ import annotations

import sys

# what may go to the resident server (cli/resident/policy.py holds the exact allowlist, checked on
# both sides): what runs once per prompt
RESIDENT = (["hook"], ["recall"], ["search"])
# run in this process, these read the index (and so scan the record) before anything else
SCAN_EARLY = (["hook", "prompt"], ["hook", "session-start"], ["hook", "session"], ["recall"], ["search"])


# A fresh process that answers one prompt allocates some 15,000 objects that live to its end, and the
# cyclic collector's default (a pass every 700 net allocations) walks them ~25 times: 2-7 ms of a
# ~75 ms hook (issue 34). Reference counting frees all but cycles, and a pass every GC_EVERY still
# bounds those where a hook does more (a catch-up of a large record).
GC_EVERY = 100_000


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] not in RESIDENT:
        return here(args)
    if argv is None:  # the console script: a process of its own, short-lived (not a test's, not the server's)
        import gc

        gc.set_threshold(GC_EVERY, *gc.get_threshold()[1:])
    from .resident import client

    code, root = client.delegate(args)
    if code is not None:
        if argv is None:  # the console script, answered: skip the interpreter's teardown (~2 ms)
            client.exit_now(code)
        return code
    if args[:2] in SCAN_EARLY or args[:1] in SCAN_EARLY:
        from ..errors import SteleError

        try:
            _scan_early(hook=args[:1] == ["hook"])
        except (SteleError, OSError):
            pass  # only a head start: the command meets the same problem and says it (a hook fails open)
    code = here(args)
    if root is not None and args[:1] == ["hook"]:
        client.start(root)  # for the next hook, when the setting is on
    return code


def _scan_early(hook: bool) -> None:
    """Start the record's freshness scan on another core while this process imports
    (`index/early.py`): for the commands that read the index first thing, run here. `STELE_OFF` and
    `stele pause` silence hooks only (a hook then reads nothing); `stele recall` and `search` read
    the index whatever they say."""
    if hook:
        from ..residency import off

        if off():  # every hook off: nothing read
            return
    from ..project import Project, find_root

    root = find_root()
    if root is None:
        return
    project = Project(root)
    if hook:
        from ..hooks.state import paused

        if paused(project):  # `stele pause`: the hooks read and write nothing
            return
    from ..index.sources import scan_early

    scan_early(project)


def here(args: list[str]) -> int:
    """Run the command in this process."""
    if args[:1] == ["resident-serve"] and len(args) == 2:  # started by a hook (cli/resident/client.py)
        from . import fast  # noqa: F401 (preloaded for the children; the server may not name a layer above it)
        from .resident import server

        return server.serve(args[1], here)
    if args[:1] == ["hook"]:
        from ..hooks.dispatch import main as hook_main

        return hook_main(args[1:])
    if args[:1] in (["recall"], ["search"]):
        from .fast import run as quick_run

        return quick_run(args[0], args[1:])
    if args[:2] in (["task", "claim"], ["task", "release"]):
        from .fast import run as quick_run

        return quick_run(" ".join(args[:2]), args[2:])
    from .main import run

    return run(args)
