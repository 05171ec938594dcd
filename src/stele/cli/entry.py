"""The console script. `stele hook ...`, `stele recall`, `stele search`, `stele task claim` and
`stele task release` are dispatched here, before typer (and rich, and pydantic-sized import graphs)
are loaded: they run once per prompt (or, for a claim, by many racing agents at once) in a fresh
process, and typer costs ~180 ms of a ~330 ms recall on a 10k-fact record."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
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
