"""The console script. `stele hook ...` is dispatched here, before typer (and rich, and pydantic-sized
import graphs) are loaded: hooks run on every prompt, and typer alone costs ~60 ms."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["hook"]:
        from .hooks.dispatch import main as hook_main

        return hook_main(args[1:])
    from .cli import run

    return run(args)
