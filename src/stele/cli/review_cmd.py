"""`stele review [RANGE]`: the record's changes between two revisions, for people reviewing them."""
from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import typer

from ..render import term
from ..render.jsonout import emit_json
from .app import JsonOpt, app, project


class ReviewFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


@app.command()
def review(
    range_: Annotated[Optional[str], typer.Argument(
        metavar="[BASE..HEAD]", help="Two revisions (A...B: from their merge base); default: the PR base or "
        "main...HEAD.")] = None,
    fmt: Annotated[ReviewFormat, typer.Option(
        "--format", help="markdown suits PR comments and job summaries.")] = "text",
    json_: JsonOpt = False,
) -> None:
    """Summarise what changed in the record: added, edited, superseded, retired, anchors, violations."""
    from ..doctor.review import review as run
    from ..render import review as render

    result = run(project(), range_)
    if json_ or fmt == ReviewFormat.json:
        emit_json(result.as_dict())
    elif fmt == ReviewFormat.markdown:
        term.write(render.markdown(result))
    else:
        for line in render.text(result).splitlines():
            term.line(line)
