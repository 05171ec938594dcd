"""The typer application with every command group registered, and the one place it runs.

`entry.py` comes here only for commands outside the fast path: importing this module imports typer
and every command module.
"""
from __future__ import annotations

import importlib
import sys

from .app import app

# Each module registers its commands on import; `stele --help` lists them in this order.
COMMAND_MODULES = ("record_cmds", "demo_cmd", "install_cmd", "retrieve_cmds", "brief_cmd", "session_cmds",
                   "task_cmds", "anchor_cmds", "doctor_cmd", "review_cmd", "eval_cmd", "context_cmds",
                   "knowledge_cmds", "serve_cmds", "hooks_cmds")
for _name in COMMAND_MODULES:
    importlib.import_module(f"{__package__}.{_name}")


def run(argv: list[str]) -> int:
    import typer

    from ..errors import error_handler

    with error_handler():
        try:
            result = app(args=argv, prog_name="stele", standalone_mode=False)
        except typer.Exit as e:
            return e.exit_code
        except typer.Abort:
            raise KeyboardInterrupt from None
        except typer.TyperException as e:  # typer's (vendored click) usage errors: exit 2
            return _usage_error(e)
    return result if isinstance(result, int) else 0


def _usage_error(e: Exception) -> int:
    """Click's own message and exit code where the error has them (its usage errors do; typer's public
    base class, the only one typer exports, does not promise them)."""
    show = getattr(e, "show", None)
    if callable(show):
        show()
    else:
        print(f"stele: {e}", file=sys.stderr)
    code = getattr(e, "exit_code", 2)
    return code if isinstance(code, int) else 2
