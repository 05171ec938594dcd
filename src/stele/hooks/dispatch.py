"""`stele hook EVENT [options]`: the one entry point every harness and git hook calls.

Hooks run on every prompt and every edit, so this module imports nothing heavy. The arguments a
harness passes (`EVENT --harness NAME`, `--strict`) are read by hand: argparse would cost ~10 ms of CPU
on every hook (it imports gettext, and shutil with bz2 and lzma for the help formatter's terminal
width). Anything else (`--help`, a bad harness, an option of a git hook) goes to the argparse parser,
which is also what the CLI reference documents. Each event's module is imported only when it runs.
Agent hooks fail open: any error is one line on stderr and exit 0, because a memory layer that can
block the agent is worse than none. (A git pre-commit hook in `--strict` mode may block on purpose.)
"""
from __future__ import annotations

import importlib
import sys
from types import SimpleNamespace

from ..errors import OutOfTime, debug_enabled, say
from .harness import HARNESSES

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

# event -> "module:function" under stele.hooks; the function takes the parsed args and returns an exit code
EVENTS: dict[str, str] = {
    "session-start": "session_start:main",
    "session": "session_start:main",  # the name HARNESSES.md's examples use
    "prompt": "prompt:main",
    "pre-edit": "edit:main_pre",
    "post-edit": "edit:main_post",
    "subagent-start": "session_start:main_subagent",
    "stop": "stop:main",
    "subagent-stop": "stop:main_subagent",
    "session-end": "stop:main_end",
    "guard-readonly": "guard:main",
    "pre-commit": "precommit:run",
}


class _ArgError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str):  # one line, not argparse's usage block, and no exit
            raise _ArgError(message)

    p = _Parser(prog="stele hook", description="Run one Stele hook (reads a JSON payload on "
                                "stdin for agent-harness events).")
    p.add_argument("event", help=", ".join(sorted(EVENTS)) or "(none registered)")
    p.add_argument("--harness", choices=HARNESSES,
                   help="the harness calling (detected from the payload when omitted)")
    p.add_argument("--strict", action="store_true", help="pre-commit: block instead of warning")
    return p


def _quick(argv: list[str]) -> SimpleNamespace | None:
    """The arguments as `_parser` would read them, when they are only what harnesses pass; else None."""
    if not argv or argv[0].startswith("-"):
        return None
    args = SimpleNamespace(event=argv[0], harness=None, strict=False)
    rest = iter(argv[1:])
    for a in rest:
        if a == "--strict":
            args.strict = True
        elif a == "--harness" or a.startswith("--harness="):
            name = a[len("--harness="):] if "=" in a else next(rest, None)
            if name not in HARNESSES:
                return None  # argparse says why, in its words
            args.harness = name
        else:
            return None
    return args


def main(argv: list[str]) -> int:
    try:
        quick = _quick(argv)
        args, extra = (quick, []) if quick is not None else _parser().parse_known_args(argv)
    except SystemExit:  # --help was printed
        return 0
    except _ArgError as e:
        _silent(argv)
        say(f"stele hook: {e} (usage: stele hook EVENT [--harness NAME])")
        return 2 if argv[:1] == ["guard-readonly"] else 0  # the guard fails closed
    target = EVENTS.get(args.event)
    if target is None:
        _silent(argv)
        known = ", ".join(sorted(EVENTS))
        say(f"stele hook: unknown event {args.event!r}; known: {known}")
        return 0
    args.extra = extra
    module, func = target.split(":")
    try:
        return getattr(importlib.import_module(f"{__package__}.{module}"), func)(args)
    except KeyboardInterrupt:
        return 0
    except OutOfTime as e:  # the budget's alarm: whatever was under way stops here, and the agent goes on
        say(f"stele hook {args.event}: {e} (continuing without memory)")
        return 0
    except Exception as e:  # fail open: never block the agent because of a Stele error
        if debug_enabled():
            import traceback

            traceback.print_exc()
        say(f"stele hook {args.event}: {_one_line(e)} (continuing without memory)")
        return 0


def _silent(argv: list[str]) -> None:
    """Gemini's "nothing to say" (`{}`) when the arguments could not even be parsed: with empty stdout
    Gemini would show the stderr line to the user as a message."""
    if "gemini" in argv or "--harness=gemini" in argv:
        sys.stdout.write("{}\n")


def _one_line(e: Exception) -> str:
    """A Stele error's own message (a record error's first problem), else the exception's type and text."""
    from ..errors import SteleError

    lines = str(e).splitlines() or [""]
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    return (lines[0] if isinstance(e, SteleError) else f"{type(e).__name__}: {lines[0]}") + more
