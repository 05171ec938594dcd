"""The `stele` command line: thin typer adapters over the library, one module per command group.

Each command reads top to bottom as the data flow: find the project, load, act, render. Errors are
SteleError subclasses, turned into one line and an exit code by `errors.error_handler`.
"""
from __future__ import annotations

from .app import app
from . import record_cmds  # noqa: F401  (registers commands)
from . import demo_cmd  # noqa: F401,E402
from . import install_cmd  # noqa: F401,E402
from . import retrieve_cmds  # noqa: F401,E402
from . import brief_cmd  # noqa: F401,E402
from . import session_cmds  # noqa: F401,E402
from . import task_cmds  # noqa: F401,E402
from . import anchor_cmds  # noqa: F401,E402
from . import doctor_cmd  # noqa: F401,E402
from . import review_cmd  # noqa: F401,E402
from . import context_cmds  # noqa: F401,E402
from . import knowledge_cmds  # noqa: F401,E402
from . import serve_cmds  # noqa: F401,E402
from . import hooks_cmds  # noqa: F401,E402


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
