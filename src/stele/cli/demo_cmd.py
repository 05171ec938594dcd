"""`stele demo`: a throwaway repository built from the bundled example, and what Stele does on it."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import app


@app.command()
def demo(
    keep: Annotated[Path | None, typer.Option("--keep", help="Build the demo repository here and keep it.")]
    = None,
) -> None:
    """Build a throwaway git repo from the bundled example record and show what Stele does with it."""
    from .demo import run

    run(keep)
