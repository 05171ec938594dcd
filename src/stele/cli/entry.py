"""The console script. `stele hook ...`, `stele recall`, `stele search`, `stele task claim` and
`stele task release` are dispatched here, before typer (and rich, and pydantic-sized import graphs)
are loaded: they run once per prompt (or, for a claim, by many racing agents at once) in a fresh
process, and typer costs ~180 ms of a ~330 ms recall on a 10k-fact record. Hooks, recall and search go
to the repository's resident server first (`serve/resident.py`), which runs `here` in a forked child
that has all of it imported already."""
from __future__ import annotations

import sys

# what the resident server answers (serve/resident.py): what runs once per prompt, and the claims many
# agents race for
RESIDENT = (["hook"], ["recall"], ["search"], ["task", "claim"], ["task", "release"])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] not in RESIDENT and args[:2] not in RESIDENT:
        return here(args)
    from ..serve import resident

    code, root = resident.delegate(args)
    if code is not None:
        if argv is None:  # the console script, answered: skip the interpreter's teardown (~2 ms)
            resident.exit_now(code)
        return code
    code = here(args)
    if root is not None and args[:1] == ["hook"]:
        resident.start(root)  # for the next hook
    return code


def here(args: list[str]) -> int:
    """Run the command in this process."""
    if args[:1] == ["resident-serve"] and len(args) == 2:  # started by a hook (serve/resident.py)
        from ..serve import resident_server
        from . import fast  # noqa: F401 (preloaded for the children; the server may not name a layer above it)

        return resident_server.serve(args[1], here)
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
