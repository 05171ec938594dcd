"""`stele brief QUESTION`: a short, cited briefing from the record (what the research helper runs)."""
from __future__ import annotations

from typing import Annotated

import typer

from ..errors import say
from ..render import term
from ..render.jsonout import emit_json
from .app import FormatOpt, JsonOpt, app, project, wants_json


@app.command()
def brief(
    question: Annotated[str, typer.Argument(help="What you want to know, in your own words.")],
    fmt: FormatOpt = "text",
    json_: JsonOpt = False,
) -> None:
    """Search the record several ways, walk two hops, and print a grouped briefing citing fact ids
    (under 2,000 characters). Read-only."""
    from ..errors import UsageError
    from ..retrieve.brief import brief as do_brief

    if not question.strip():
        raise UsageError("the question is empty: say what you want to know, "
                         "e.g. stele brief \"why retry twice?\"")
    result = do_brief(project(), question)
    for line in dict.fromkeys(result.warnings):
        say(line)
    if wants_json(fmt, json_):
        emit_json(result.as_dict())
        return
    from ..render.facts import brief_text

    term.write(brief_text(result))
