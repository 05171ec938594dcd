"""Commands over the committed record: init, remember, new, show, list, edit, link, supersede, retire,
verify. Each is: find the project, call one library function, render."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import SteleError, UsageError
from ..render import term
from ..render.jsonout import emit_json
from .app import Format, FormatOpt, JsonOpt, app, open_editor, project, wants_json

if TYPE_CHECKING:  # `edit` is also a command below
    from ..record.edit import Written

Opt = typer.Option


def _read_body(body: str | None, body_file: Path | None) -> str:
    if body is not None and body_file is not None:
        raise UsageError("give the body once: as an argument or with --body-file, not both")
    if body_file is not None:
        if str(body_file) == "-":
            return sys.stdin.read()
        try:
            return body_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"--body-file {body_file}: cannot read it ({e})") from None
    if body == "-":
        return sys.stdin.read()
    if body is None:
        raise UsageError("no body: pass the text as an argument, --body-file FILE, or - to read stdin")
    return body


def _written(w: Written, verb: str, as_json: bool) -> None:
    if as_json:
        emit_json({"id": w.fact.id, "path": w.fact.path, "redacted": dict(w.redacted),
                   "similar": [{"id": s.id, "score": round(s.score, 3), "exact": s.exact} for s in w.similar],
                   "warnings": w.warnings})
    else:
        term.line(f"{verb} {w.fact.id} {w.fact.path}")
    _told(w)


def _told(w: Written) -> None:
    for notice in w.notices():
        term.warn(notice)


def _open(copy) -> None:
    """$EDITOR on a copy the library made; the copy goes if the editor cannot run."""
    try:
        open_editor(copy.path)
    except SteleError:
        copy.discard()
        raise


@app.command()
def init() -> None:
    """Set up Stele in this git repository (idempotent)."""
    from ..record.scaffold import init as do_init

    p = project()
    written = do_init(p)
    if not written:
        term.line("Stele is already set up here; nothing changed.")
        return
    for path in written:
        term.line(f"created {p.rel(path)}")
    from ..record.imports import suggested

    found = suggested(p)
    if found:
        term.line("This repository already has decisions or agent guidance: import them for review with "
                  + ", ".join(f"`{c}`" for c in found) + " (add --dry-run to see first; docs/import.md).")
    term.line("Next: `stele remember \"...\" --kind decision`, then commit docs/memory/ and "
              ".stele/config.yaml.")


@app.command()
def remember(
    body: Annotated[str | None, typer.Argument(help="The fact's text; - reads stdin.")] = None,
    kind: Annotated[str, Opt("--kind", "-k", help="decision, risk, lesson, instruction, ...")] = "note",
    title: Annotated[str | None, Opt(help="One line, <= 120 chars (default: the body's first line).")] = None,
    anchor: Annotated[list[str], Opt("--anchor", "-a", help="PATH, glob or PATH::Symbol; repeatable.")] = [],
    link: Annotated[list[str], Opt("--link", "-l", help="REL:ID, e.g. caused-by:RISK-2M9Q; repeatable.")]
    = [],
    tag: Annotated[list[str], Opt("--tag", "-t", help="Repeatable.")] = [],
    delivery: Annotated[str | None, Opt(help="always | ranked | manual")] = None,
    priority: Annotated[str | None, Opt(help="critical | high | normal | low")] = None,
    status: Annotated[str | None, Opt(help="Default: current (draft for documents, open for tasks).")] = None,
    expires: Annotated[str | None, Opt(help="YYYY-MM-DD: stop injecting after this day.")] = None,
    review_after: Annotated[str | None, Opt(help="YYYY-MM-DD: flag for review after this day.")] = None,
    retire_when: Annotated[str | None, Opt(help="The condition that makes this fact obsolete.")] = None,
    summary: Annotated[str | None, Opt(help="One line for briefings.")] = None,
    body_file: Annotated[Path | None, Opt("--body-file", help="Read the body from a file (- for stdin).")]
    = None,
    allow_duplicate: Annotated[bool, Opt("--allow-duplicate",
                                         help="Write it even if a live fact of its kind says the same.")] = False,
    check_forbid: Annotated[list[str], Opt("--check-forbid", metavar="REGEX", help="check: no line added to the "
                                           "anchored files may match; repeatable.")] = [],
    check_require: Annotated[list[str], Opt("--check-require", metavar="REGEX", help="check: each anchored "
                                            "file must still match; repeatable.")] = [],
    enforce: Annotated[str | None, Opt(help="warn | deny: with a check, deny refuses a breaking edit.")] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Record a fact in docs/memory/ (secrets are redacted first)."""
    from ..record import edit

    text = _read_body(body, body_file)
    written = edit.remember(project(), text, kind=kind, title=title, anchors=anchor, links=link, tags=tag,
                              delivery=delivery, priority=priority, status=status, expires=expires,
                              review_after=review_after, retire_when=retire_when, summary=summary,
                              allow_duplicate=allow_duplicate, forbid=check_forbid, require=check_require,
                              enforce=enforce)
    _written(written, "remembered", wants_json(fmt, json_))


@app.command()
def new(
    kind: Annotated[str, typer.Argument(help="The kind of fact (its template is used).")],
    title: Annotated[str | None, Opt(help="The title (default: a placeholder to replace).")] = None,
    no_edit: Annotated[bool, Opt("--no-edit", help="Print the path instead of opening $EDITOR.")] = False,
) -> None:
    """Create a fact from its kind's template and open it in $EDITOR."""
    from ..record import edit

    p = project()
    copy = edit.open_new(p, kind, title)
    if not no_edit:
        _open(copy)
    written = edit.create(p, copy)
    term.line(written.fact.path)
    _told(written)


@app.command()
def show(
    fact_id: Annotated[str, typer.Argument(metavar="ID")],
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Show one fact with its links in both directions."""
    from ..record.load import load
    from ..render.facts import fact_lines

    record = load(project()).usable()
    fact = record.get(fact_id)
    if wants_json(fmt, json_):
        data = fact.as_dict()
        data["incoming"] = [{"rel": e.rel, "from": e.src} for e in record.graph.inc.get(fact.id, [])]
        emit_json(data)
        return
    head, *lines = fact_lines(record, fact)
    term.section(head, "\n".join(lines))


@app.command("list")
def list_(
    kind: Annotated[list[str], Opt("--kind", "-k", help="Repeatable.")] = [],
    status: Annotated[list[str], Opt("--status", "-s", help="Repeatable.")] = [],
    tag: Annotated[list[str], Opt("--tag", "-t", help="Facts with all of these tags.")] = [],
    anchor: Annotated[str | None, Opt("--anchor", help="Facts anchored to this file or folder.")] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """List facts, filtered."""
    from ..anchors.paths import about
    from ..delivery import inactive, today
    from ..kinds import KINDS
    from ..record.load import load

    for k in kind:
        if k not in KINDS:
            raise UsageError(f"--kind {k!r} is not a kind: use one of " + ", ".join(KINDS))
    record = load(project()).usable()
    facts = sorted(record.facts.values(), key=lambda f: (f.kind, f.id))
    if kind:
        facts = [f for f in facts if f.kind in kind]
    if status:
        facts = [f for f in facts if f.status in status]
    if tag:
        facts = [f for f in facts if set(tag) <= set(f.tags)]
    if anchor:
        facts = [f for f in facts if any(about(a, anchor) for a in f.anchors)]
    on = today()
    ended = {f.id: inactive(f, on) for f in facts}  # expired or review overdue: no longer injected
    if wants_json(fmt, json_):
        emit_json({"facts": [{**{k: v for k, v in f.as_dict().items() if k != "body"}, "inactive": ended[f.id]}
                             for f in facts]})
        return
    if not facts:
        term.line("no facts match")
        return
    term.table(("id", "kind", "status", "title"),
               ((f.id, f.kind, f.status if ended[f.id] in (None, f.status) else f"{f.status}, {ended[f.id]}",
                 f.title) for f in facts))


@app.command()
def edit(
    fact_id: Annotated[str, typer.Argument(metavar="ID")],
    title: Annotated[str | None, Opt(help="One line, <= 120 chars.")] = None,
    status: Annotated[str | None, Opt(help="current, draft, reviewed, ...; tasks: open, done, ...")] = None,
    delivery: Annotated[str | None, Opt(help="always | ranked | manual")] = None,
    priority: Annotated[str | None, Opt(help="critical | high | normal | low")] = None,
    summary: Annotated[str | None, Opt(help="'' clears it.")] = None,
    expires: Annotated[str | None, Opt(help="YYYY-MM-DD; '' clears it.")] = None,
    review_after: Annotated[str | None, Opt(help="YYYY-MM-DD; '' clears it.")] = None,
    retire_when: Annotated[str | None, Opt(help="'' clears it.")] = None,
    body: Annotated[str | None, Opt(help="Replace the body (- reads stdin).")] = None,
    add_anchor: Annotated[list[str], Opt("--add-anchor", help="PATH, glob or PATH::Symbol.")] = [],
    remove_anchor: Annotated[list[str], Opt("--remove-anchor", help="An anchor as written.")] = [],
    add_tag: Annotated[list[str], Opt("--add-tag", help="A tag to add.")] = [],
    remove_tag: Annotated[list[str], Opt("--remove-tag", help="A tag to remove.")] = [],
    add_link: Annotated[list[str], Opt("--add-link", help="REL:ID")] = [],
    remove_link: Annotated[list[str], Opt("--remove-link", help="REL:ID")] = [],
    check_forbid: Annotated[list[str], Opt("--check-forbid", metavar="REGEX", help="Add a check: no added "
                                           "line may match.")] = [],
    check_require: Annotated[list[str], Opt("--check-require", metavar="REGEX", help="Add a check: each "
                                            "anchored file must still match.")] = [],
    enforce: Annotated[str | None, Opt(help="warn | deny, for every check of the fact.")] = None,
    clear_checks: Annotated[bool, Opt("--clear-checks", help="Remove every check (before adding any).")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Change a fact's fields, anchors, tags or links (no options: open it in $EDITOR)."""
    from ..record import edit

    changes = edit.Changes(
        title=title, status=status, delivery=delivery, priority=priority, summary=summary, expires=expires,
        review_after=review_after, retire_when=retire_when, body=sys.stdin.read() if body == "-" else body,
        add_anchors=add_anchor, remove_anchors=remove_anchor, add_tags=add_tag, remove_tags=remove_tag,
        add_links=add_link, remove_links=remove_link, add_forbid=check_forbid, add_require=check_require,
        enforce=enforce, clear_checks=clear_checks,
    )
    p = project()
    if changes.empty():
        copy = edit.open_copy(p, fact_id)
        _open(copy)
        _written(edit.replace(p, copy), "edited", wants_json(fmt, json_))
        return
    _written(edit.edit(p, fact_id, changes), "edited", wants_json(fmt, json_))


@app.command()
def link(
    src: Annotated[str, typer.Argument(metavar="ID")],
    rel: Annotated[str, typer.Argument(metavar="REL", help="caused-by, blocks, relates-to, ...")],
    dst: Annotated[str, typer.Argument(metavar="TARGET")],
) -> None:
    """Add a typed edge: ID REL TARGET (declared on ID)."""
    from ..record import edit

    fact = edit.link(project(), src, rel, dst)
    term.line(f"linked {fact.id} {rel} {dst.upper()}")


@app.command()
def unlink(
    src: Annotated[str, typer.Argument(metavar="ID")],
    rel: Annotated[str, typer.Argument(metavar="REL")],
    dst: Annotated[str, typer.Argument(metavar="TARGET")],
) -> None:
    """Remove a typed edge declared on ID."""
    from ..record import edit

    fact = edit.unlink(project(), src, rel, dst)
    term.line(f"unlinked {fact.id} {rel} {dst.upper()}")


@app.command()
def supersede(
    old: Annotated[str, typer.Argument(metavar="OLD")],
    by: Annotated[str, Opt("--by", metavar="NEW", help="The fact that replaces OLD.")],
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Mark OLD superseded by NEW (adds `supersedes` on NEW; for knowledge, reviewed NEW becomes current)."""
    from ..record import knowledge

    old_fact, new_fact = knowledge.supersede(project(), old, by)
    if wants_json(fmt, json_):
        emit_json({"superseded": old_fact.id, "by": new_fact.id, "status": new_fact.status})
        return
    term.line(f"{new_fact.id} ({new_fact.status}) supersedes {old_fact.id}; {old_fact.id} is now superseded")


@app.command()
def retire(
    fact_id: Annotated[str, typer.Argument(metavar="ID")],
    why: Annotated[str, Opt("--why", help="Why it no longer holds (kept in the body).")],
) -> None:
    """Retire a fact that no longer holds (it stays readable, never injected)."""
    from ..record import edit

    fact = edit.retire(project(), fact_id, why)
    term.line(f"retired {fact.id}")


@app.command()
def verify(fact_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Record that a fact still holds: today's date and the current commit."""
    from ..record import edit

    fact = edit.verify(project(), fact_id)
    term.line(f"verified {fact.id} on {fact.verified} at {fact.verified_at or 'no commit yet'}")
