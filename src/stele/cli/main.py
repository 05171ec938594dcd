"""The typer application with every command group registered, and the one place it runs.

`entry.py` comes here only for commands outside the fast path: importing this module imports typer
and every command module.
"""
from __future__ import annotations

import importlib

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
            e.show()
            return e.exit_code
    return result if isinstance(result, int) else 0
