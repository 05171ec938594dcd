"""`stele hook EVENT [options]`: the one entry point every harness and git hook calls.

Hooks run on every prompt and every edit, so this module imports nothing heavy: argparse from the
standard library parses the few options, and each event's module is imported only when it runs.
Agent hooks fail open: any error is one line on stderr and exit 0, because a memory layer that can
block the agent is worse than none. (A git pre-commit hook in `--strict` mode may block on purpose.)
"""
from __future__ import annotations

import argparse
import importlib
import sys

# event -> "module:function" under stele.hooks; the function takes the parsed args and returns an exit code
EVENTS: dict[str, str] = {
    "pre-commit": "precommit:run",
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="stele hook", description="Run one Stele hook (reads a JSON payload on "
                                "stdin for agent-harness events).")
    p.add_argument("event", help=", ".join(sorted(EVENTS)) or "(none registered)")
    p.add_argument("--harness", choices=("claude", "codex", "gemini", "cursor", "copilot"),
                   help="the harness calling (detected from the payload when omitted)")
    p.add_argument("--strict", action="store_true", help="pre-commit: block instead of warning")
    return p


def main(argv: list[str]) -> int:
    try:
        args, extra = _parser().parse_known_args(argv)
    except SystemExit as e:  # argparse already printed its usage line
        return 0
    target = EVENTS.get(args.event)
    if target is None:
        print(f"stele hook: unknown event {args.event!r}; known: {', '.join(sorted(EVENTS))}", file=sys.stderr)
        return 0
    args.extra = extra
    module, func = target.split(":")
    try:
        return getattr(importlib.import_module(f"{__package__}.{module}"), func)(args)
    except KeyboardInterrupt:
        return 0
    except Exception as e:  # fail open: never block the agent because of a Stele error
        from ..errors import debug_enabled

        if debug_enabled():
            import traceback

            traceback.print_exc()
        print(f"stele hook {args.event}: {type(e).__name__}: {e} (continuing without memory)", file=sys.stderr)
        return 0
