"""The typer application and the options every data command shares."""
from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from .. import __version__

app = typer.Typer(
    name="stele",
    help="Git-native project memory for coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Format(str, Enum):
    text = "text"
    json = "json"


FormatOpt = Annotated[Format, typer.Option("--format", help="Output format.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Shorthand for --format json.")]


def wants_json(fmt: Format, json_flag: bool) -> bool:
    return json_flag or fmt == Format.json


def _version(value: bool) -> None:
    if value:
        typer.echo(f"stele {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool | None, typer.Option("--version", callback=_version, is_eager=True,
                                                    help="Print the version and exit.")] = None,
) -> None:
    """Git-native project memory for coding agents: decisions, risks and lessons as reviewed Markdown,
    pushed into the agent's context before it answers."""


def open_editor(path) -> None:
    """Run $VISUAL / $EDITOR (else vi) on `path`, the way git does."""
    import os
    import shlex
    import subprocess

    from ..errors import SteleError

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        code = subprocess.call([*shlex.split(editor), str(path)])
    except OSError as e:
        raise SteleError(f"cannot run the editor {editor!r} ({e}); set $EDITOR, or use --no-edit") from None
    if code != 0:
        raise SteleError(f"the editor {editor!r} exited with {code}; nothing else was changed")


def project():
    """The project of the working directory (one place, so tests can rely on cwd)."""
    from ..project import find

    return find()
