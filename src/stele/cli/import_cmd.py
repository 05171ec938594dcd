"""`stele import SOURCE [PATH]`: ADRs, AGENTS.md and the like as facts, written for review."""
from __future__ import annotations

from typing import Annotated

import typer

from ..render import term
from ..render.jsonout import emit_json
from ..textcut import counted
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json


@app.command("import")
def import_(
    source: Annotated[str, typer.Argument(help="adr, agents-md, claude-md, cursor-rules, copilot-instructions, "
                                               "claude-memory or codex-memories.")],
    path: Annotated[str | None, typer.Argument(help="The folder or file to read (default: where SOURCE "
                                                     "usually lives).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be written; write nothing.")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Import what a team already wrote (ADRs, AGENTS.md, rules, harness memories) as facts to review."""
    from ..record import imports

    out = imports.run(project(), source, path, dry_run=dry_run)
    if wants_json(fmt, json_):
        emit_json({"dry_run": out.dry_run,
                   "written": [{"id": f.id, "kind": f.kind, "status": f.status or "", "title": f.title,
                                "path": f.path, "source": f.source, "links": f.links} for f in out.written],
                   "changed": [f.id for f in out.changed],
                   "skipped": [{"from": w, "why": why} for w, why in out.skipped], "notes": out.notes,
                   "redacted": out.redacted.summary() if out.redacted.secrets else "", "set_up": out.set_up})
        return
    if out.set_up:
        term.line(f"{'would set Stele up here' if out.dry_run else 'set Stele up here'} as `stele init` does: "
                  + ", ".join(out.set_up))
    verb = "would write" if out.dry_run else "wrote"
    for f in out.written:
        status = f" [{f.status}]" if f.status else ""
        term.line(f"{verb} {f.id}{status} {f.path or ''}  <- {f.source[0]}")
    for f in out.changed:
        term.line(f"{'would update' if out.dry_run else 'updated'} {f.id} (links or status from this import)")
    for where, why in out.skipped:
        if not why.startswith("already imported"):  # a re-run's many of these are the last line's count
            term.note(f"skipped {where}: {why}")
    for note in out.notes:
        term.warn(note)
    if out.redacted.secrets:
        term.warn(f"{'would redact' if out.dry_run else 'redacted before writing'}: {out.redacted.summary()} "
                  "(the secret text is not in the file)")
    n = len(out.written)
    drafts = sum(1 for f in out.written if f.status == "draft")
    if out.dry_run:
        term.line(f"dry run: {counted(n, 'new fact')} ({drafts} as drafts), {len(out.skipped)} skipped; nothing "
                  "was written (the ids above are the ids a real run writes, if the record does not change first)")
    elif n or out.changed:
        also = " and .stele/" if out.set_up else ""
        term.line(f"{counted(n, 'new fact')}, {len(out.skipped)} skipped: review them (`git diff`, `stele doctor`), "
                  f"then commit docs/memory/{also} for review in a pull request")
    else:
        already = sum(1 for _, why in out.skipped if why.startswith(("already imported", "merged into")))
        other = len(out.skipped) - already
        term.line(f"nothing new: {already} already in the record" + (f", {other} skipped" if other else ""))
    if drafts and not out.dry_run:
        tags = set.intersection(*(set(f.tags[:1]) for f in out.written if f.status == "draft"))
        only = f" --tag {next(iter(tags))}" if len(tags) == 1 else ""
        term.line(f"{drafts} of them {'is a draft' if drafts == 1 else 'are drafts'}: read them, then accept them with "
                  f"`stele knowledge review --all-drafts{only} --note \"what you checked\"` and `stele knowledge "
                  f"promote --all-reviewed{only}` (one at a time: `stele knowledge review ID --note TEXT`)")
