"""The typer application with every command group registered, and the one place it runs.

`entry.py` comes here only for commands outside the fast path: importing this module imports typer
and every command module.
"""
from __future__ import annotations

from . import (
    anchor_cmds,  # noqa: F401,E402
    brief_cmd,  # noqa: F401,E402
    context_cmds,  # noqa: F401,E402
    demo_cmd,  # noqa: F401,E402
    doctor_cmd,  # noqa: F401,E402
    hooks_cmds,  # noqa: F401,E402
    install_cmd,  # noqa: F401,E402
    knowledge_cmds,  # noqa: F401,E402
    record_cmds,  # noqa: F401  (registers commands)
    retrieve_cmds,  # noqa: F401,E402
    review_cmd,  # noqa: F401,E402
    serve_cmds,  # noqa: F401,E402
    session_cmds,  # noqa: F401,E402
    task_cmds,  # noqa: F401,E402
)
from .app import app


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
