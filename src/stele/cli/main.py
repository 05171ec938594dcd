"""The typer application with every command group registered, and the one place it runs.

`entry.py` comes here only for commands outside the fast path: importing this module imports typer
and every command module.
"""
from __future__ import annotations

import functools
import importlib

from .app import app

# Each module registers its commands on import; `stele --help` lists them in this order.
COMMAND_MODULES = ("record_cmds", "import_cmd", "demo_cmd", "install_cmd", "retrieve_cmds", "brief_cmd", "session_cmds",
                   "task_cmds", "anchor_cmds", "doctor_cmd", "export_cmd", "review_cmd", "eval_cmd", "context_cmds",
                   "knowledge_cmds", "serve_cmds", "hooks_cmds")
for _name in COMMAND_MODULES:
    importlib.import_module(f"{__package__}.{_name}")


def positional_dashes(argv: list[str]) -> list[str]:
    """An argument that starts with three dashes is text, never an option (no option is spelled so):
    a pasted `-----BEGIN ... PRIVATE KEY-----` would otherwise be parsed as options and echoed in the
    usage error. Such arguments move behind `--`, in order, so the parser takes them as positional."""
    if "--" in argv:
        head, tail = argv[: argv.index("--")], argv[argv.index("--"):]
    else:
        head, tail = argv, []
    texts = [a for a in head if a.startswith("---")]
    if not texts:
        return argv
    rest = [a for a in head if not a.startswith("---")]
    return rest + (tail or ["--"]) + texts if not tail else rest + [tail[0], *texts, *tail[1:]]


@functools.cache
def command():
    """The click command of `app`. Calling `app(...)` has typer build it anew from every command's
    signature (`get_type_hints` of ~60 functions: ~85 ms of CPU). A console-script process runs one
    command, so this changes nothing there; the test suite runs this entry point in-process some
    2,000 times (tests/helpers.py `invoke`), and built once per process they cost ~85 ms less each."""
    import typer.main

    return typer.main.get_command(app)


def run(argv: list[str]) -> int:
    import typer

    from ..errors import error_handler

    with error_handler():
        try:
            result = command()(args=positional_dashes(argv), prog_name="stele", standalone_mode=False)
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
    import io

    from ..errors import say

    show = getattr(e, "show", None)
    if callable(show):
        buf = io.StringIO()
        show(file=buf)
        say(buf.getvalue().rstrip("\n"))
    else:
        say(f"stele: {e}")
    code = getattr(e, "exit_code", 2)
    return code if isinstance(code, int) else 2
