"""`stele mcp` and `stele serve`: the two long-running adapters, each a thin start of a library server."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from .app import app

RootOpt = Annotated[Path | None, typer.Option("--root", help="The repository (default: the working "
                                                 "directory's).")]


@app.command("mcp")
def mcp_(root: RootOpt = None) -> None:
    """Serve the project memory over MCP on stdin/stdout (for harnesses that cannot run hooks)."""
    from ..project import find
    from ..serve.mcp import serve

    serve(find(root))


@app.command()
def serve(
    port: Annotated[int, typer.Option("--port", "-p", help="0 picks a free port.")] = 7411,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on; anything but loopback lets "
                                      "other machines read the memory.")] = "127.0.0.1",
    root: RootOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not log requests on stderr.")] = False,
) -> None:
    """Serve a read-only JSON API and a web page of the project memory (Ctrl-C stops it)."""
    from ..errors import SteleError, UsageError
    from ..project import find
    from ..render import term
    from ..serve.server import WebServer, is_loopback

    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: use 1-65535, or 0 for a free port")
    p = find(root)
    try:
        server = WebServer(p, host, port, quiet=quiet)
    except OSError as e:
        raise SteleError(f"cannot listen on {host}:{port} ({e.strerror or e}): pick another --port, or stop "
                         "what uses it") from None
    if not is_loopback(host):
        term.warn(f"listening on {host}: anyone who can reach this machine can read the project memory "
                  "(read-only, no login)")
    term.line(f"Stele: {p.root} at {server.url} (Ctrl-C stops it)")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # the normal way to stop it: not an error
        term.line("stopped")
    finally:
        server.server_close()
