"""`stele knowledge draft|review|promote|supersede|export|distill`: thin over `stele.record.knowledge`
(and `stele.session.distill`)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..render import term
from ..render.jsonout import emit_json
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json

Opt = typer.Option
knowledge_app = typer.Typer(help="Knowledge documents: draft -> reviewed -> current -> superseded.",
                            no_args_is_help=True)
app.add_typer(knowledge_app, name="knowledge")
IdArg = Annotated[str, typer.Argument(metavar="ID")]


def _done(fact, verb: str, as_json: bool, **extra) -> None:
    if as_json:
        emit_json({"id": fact.id, "status": fact.status, "path": fact.path, **extra})
    else:
        term.line(f"{verb} {fact.id} ({fact.status}) {fact.path}")


@knowledge_app.command()
def draft(
    title: Annotated[str, typer.Argument(help="One line, <= 120 characters.")],
    body: Annotated[str | None, Opt(help="The text (- reads stdin; default: a skeleton).")] = None,
    body_file: Annotated[Path | None, Opt("--body-file", help="Read the text from a file.")] = None,
    anchor: Annotated[list[str], Opt("--anchor", "-a", help="Repeatable.")] = [],
    tag: Annotated[list[str], Opt("--tag", "-t", help="Repeatable.")] = [],
    link: Annotated[list[str], Opt("--link", "-l", help="REL:ID; repeatable.")] = [],
    summary: Annotated[str | None, Opt(help="One line for briefings.")] = None,
    allow_duplicate: Annotated[bool, Opt("--allow-duplicate",
                                         help="Draft it even if a live document says the same.")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Start a knowledge document as a draft (edit it with `stele edit`, then review it)."""
    from ..record import knowledge
    from .record_cmds import _read_body

    text = _read_body(body, body_file) if body is not None or body_file is not None else None
    written = knowledge.draft(project(), title, text, anchors=anchor, tags=tag, links=link, summary=summary,
                              allow_duplicate=allow_duplicate)
    _done(written.fact, "drafted", wants_json(fmt, json_))
    if written.redacted:
        term.warn(f"redacted before writing: {written.redaction_summary}")


IdsArg = Annotated[list[str] | None, typer.Argument(metavar="ID", show_default=False)]
TagOpt = Annotated[str | None, Opt("--tag", "-t", help="With --all-drafts / --all-reviewed: only facts with this tag.")]


def _done_all(facts: list, verb: str, as_json: bool, one: bool) -> None:
    if one:
        _done(facts[0], verb, as_json)
    elif as_json:
        emit_json({"facts": [{"id": f.id, "status": f.status, "path": f.path} for f in facts]})
    else:
        for fact in facts:
            term.line(f"{verb} {fact.id} ({fact.status}) {fact.path}")
        term.line(f"{verb} {len(facts)} facts")


@knowledge_app.command()
def review(
    fact_ids: IdsArg = None,
    note: Annotated[str, Opt("--note", "-m", help="What you checked (kept in the file).")] = "",
    all_drafts: Annotated[bool, Opt("--all-drafts", help="Every draft in the record (read them first).")] = False,
    tag: TagOpt = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Mark drafts reviewed, with a note (an edit afterwards clears the review)."""
    from ..record import knowledge

    facts = knowledge.review_all(project(), fact_ids or [], note, drafts=all_drafts, tag=tag)
    _done_all(facts, "reviewed", wants_json(fmt, json_), one=len(fact_ids or []) == 1 and not all_drafts)


@knowledge_app.command()
def promote(
    fact_ids: IdsArg = None,
    all_reviewed: Annotated[bool, Opt("--all-reviewed", help="Every reviewed draft in the record.")] = False,
    tag: TagOpt = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Make reviewed drafts current: briefings list them from now on."""
    from ..record import knowledge

    facts = knowledge.promote_all(project(), fact_ids or [], reviewed=all_reviewed, tag=tag)
    _done_all(facts, "promoted", wants_json(fmt, json_), one=len(fact_ids or []) == 1 and not all_reviewed)


@knowledge_app.command(hidden=True)
def supersede(
    old: Annotated[str, typer.Argument(metavar="OLD")],
    by: Annotated[str | None, Opt("--by", metavar="NEW", help="The reviewed draft that replaces OLD.")] = None,
    with_: Annotated[str | None, Opt("--with", metavar="NEW", hidden=True)] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Replace current OLD with reviewed NEW: an alias of `stele supersede OLD --by NEW`."""
    from ..errors import UsageError
    from ..record import knowledge

    if (by is None) == (with_ is None):
        raise UsageError("give the replacement once: `stele supersede OLD --by NEW`")
    old_fact, new_fact = knowledge.supersede(project(), old, by or with_ or "")
    if wants_json(fmt, json_):
        emit_json({"current": new_fact.id, "superseded": old_fact.id})
    else:
        term.line(f"{new_fact.id} is current and supersedes {old_fact.id}")


@knowledge_app.command()
def export(
    fact_id: IdArg,
    path: Annotated[Path, typer.Argument(metavar="PATH", help="The file to write (outside docs/memory/).")],
    force: Annotated[bool, Opt("--force", help="Replace PATH if it exists.")] = False,
) -> None:
    """Write a document as a plain Markdown file."""
    from ..record import knowledge

    term.line(f"exported to {knowledge.export(project(), fact_id, path, force)}")


@knowledge_app.command()
def distill(
    task: Annotated[str, typer.Argument(metavar="TASK")],
    title: Annotated[str | None, Opt(help="Default: the task's title.")] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Draft a document from a finished task: its session history, linked facts and files, as sources."""
    from ..session.distill import distill

    written = distill(project(), task, title)
    _done(written.fact, "distilled", wants_json(fmt, json_), source=written.fact.source)
