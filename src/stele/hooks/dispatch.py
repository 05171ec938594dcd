"""`stele hook EVENT [options]`: the one entry point every harness and git hook calls.

Hooks run on every prompt and every edit, so this module imports nothing heavy: argparse from the
standard library parses the few options, and each event's module is imported only when it runs.
Agent hooks fail open: any error is one line on stderr and exit 0, because a memory layer that can
block the agent is worse than none. (A git pre-commit hook in `--strict` mode may block on purpose.)
"""
from __future__ import annotations

import argparse
import importlib

from ..errors import debug_enabled, say
from .harness import HARNESSES

# event -> "module:function" under stele.hooks; the function takes the parsed args and returns an exit code
EVENTS: dict[str, str] = {
    "session-start": "session_start:main",
    "session": "session_start:main",  # the name HARNESSES.md's examples use
    "prompt": "prompt:main",
    "pre-edit": "edit:main_pre",
    "post-edit": "edit:main_post",
    "stop": "stop:main",
    "subagent-stop": "stop:main_subagent",
    "session-end": "stop:main_end",
    "guard-readonly": "guard:main",
    "pre-commit": "precommit:run",
}


class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not argparse's usage block, and no exit
        raise _ArgError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="stele hook", description="Run one Stele hook (reads a JSON payload on "
                                "stdin for agent-harness events).")
    p.add_argument("event", help=", ".join(sorted(EVENTS)) or "(none registered)")
    p.add_argument("--harness", choices=HARNESSES,
                   help="the harness calling (detected from the payload when omitted)")
    p.add_argument("--strict", action="store_true", help="pre-commit: block instead of warning")
    return p


def main(argv: list[str]) -> int:
    try:
        args, extra = _parser().parse_known_args(argv)
    except SystemExit:  # --help was printed
        return 0
    except _ArgError as e:
        say(f"stele hook: {e} (usage: stele hook EVENT [--harness NAME])")
        return 2 if argv[:1] == ["guard-readonly"] else 0  # the guard fails closed
    target = EVENTS.get(args.event)
    if target is None:
        known = ", ".join(sorted(EVENTS))
        say(f"stele hook: unknown event {args.event!r}; known: {known}")
        return 0
    args.extra = extra
    module, func = target.split(":")
    try:
        return getattr(importlib.import_module(f"{__package__}.{module}"), func)(args)
    except KeyboardInterrupt:
        return 0
    except Exception as e:  # fail open: never block the agent because of a Stele error
        if debug_enabled():
            import traceback

            traceback.print_exc()
        say(f"stele hook {args.event}: {_one_line(e)} (continuing without memory)")
        return 0


def _one_line(e: Exception) -> str:
    """A Stele error's own message (a record error's first problem), else the exception's type and text."""
    from ..errors import SteleError

    lines = str(e).splitlines() or [""]
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    return (lines[0] if isinstance(e, SteleError) else f"{type(e).__name__}: {lines[0]}") + more
