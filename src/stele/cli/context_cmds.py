"""`stele context` (assemble a snapshot), `context preview`, `context doctor`, and `stele snapshot list|show`
("what the agent saw"). Each: find the project, call one library function, render.

The snapshot's text is agent-facing: it is written to stdout byte for byte, never through Rich. The
budget tables around it are for people and go through `render.term`.
"""
from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from ..render import term
from ..render.jsonout import emit_json
from ..textcut import counted
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json

Opt = typer.Option
context_app = typer.Typer(no_args_is_help=False)
snapshot_app = typer.Typer(help="Stored snapshots: what each run was told.", no_args_is_help=True)
app.add_typer(context_app, name="context")
app.add_typer(snapshot_app, name="snapshot")

RecordOpt = Annotated[list[str], Opt("--record", "-r", help="A record to include by id; repeatable.")]
PromptOpt = Annotated[str | None, Opt("--prompt", "-p",
                                         help="Extra text to match records and code against.")]


@context_app.callback(invoke_without_command=True)
def context(
    ctx: typer.Context,
    task: Annotated[str | None, Opt("--task", "-t", help="The task the run works on.")] = None,
    record: RecordOpt = [],
    prompt: PromptOpt = None,
    save: Annotated[bool, Opt("--save", help="Store it in .stele/snapshots/ and print its run id.")] = False,
    session: Annotated[str | None, Opt(help="Session to log the saved snapshot to (default: "
                                               "$STELE_SESSION).")] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Always records, records named by id, ranked records, code and a knowledge briefing, within the
    snapshot budgets. Fails, naming them, when required records do not fit."""
    if ctx.invoked_subcommand is not None:
        return
    from ..snapshot.build import Request, take

    snap = take(project(), Request(task=task, records=record, prompt=prompt), save=save, session=session)
    for warning in snap.warnings:
        term.warn(warning)
    if wants_json(fmt, json_):
        emit_json(snap.as_dict())
    else:
        term.write(snap.text)
    if snap.stored:
        term.note(f"saved run {snap.run} to {snap.stored}")


@context_app.command()
def preview(
    task: Annotated[str, typer.Argument(metavar="TASK")],
    record: RecordOpt = [],
    prompt: PromptOpt = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """What claiming TASK would deliver, with its budget use; nothing is stored."""
    from ..snapshot.build import Request, take

    snap = take(project(), Request(task=task, records=record, prompt=prompt))
    if wants_json(fmt, json_):
        emit_json(snap.as_dict())
        return
    _show(snap.as_dict(), "preview (not stored)")


@context_app.command()
def doctor(
    strict: Annotated[bool, Opt("--strict", help="Warnings fail too (exit 1).")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> int:
    """Flag records that break or bloat snapshots: `always` records over budget (error), expired,
    review-overdue, oversized and near-duplicate records (warnings)."""
    from ..delivery import today
    from ..doctor.context import check
    from ..record.load import load
    from ..snapshot.model import Budgets

    p = project()
    report = check(load(p).require_valid(), Budgets.from_config(p.config), today(),
                   int(p.config["doctor.oversized_bytes"]), float(p.config["doctor.near_duplicate"]))
    if wants_json(fmt, json_):
        emit_json(report.as_dict())
    else:
        for finding in report.findings:
            term.line(str(finding))
        e, w = len(report.errors), len(report.warnings)
        term.line(f"stele context doctor: {counted(e, 'error')}, {counted(w, 'warning')}" if e or w else
                  "stele context doctor: no problems (every snapshot fits; nothing expired, oversized or "
                  "duplicated)")
    return report.exit_code(strict)


@snapshot_app.command("list")
def list_(fmt: FormatOpt = Format.text, json_: JsonOpt = False) -> None:
    """Stored runs, oldest first."""
    from ..snapshot.store import runs

    rows = list(runs(project()))
    if wants_json(fmt, json_):
        emit_json({"runs": rows})
        return
    if not rows:
        term.line("no stored snapshots yet: `stele context --save` or a task claim stores one")
        return
    # 80 columns hold a 26-character run id whole: the time to the minute, the parts as records/code/briefing
    term.table(("run", "created", "task", "r/c/b", "bytes"),
               ((r["run"], str(r.get("created", ""))[:16].replace("T", " "), r.get("task") or "",
                 "/".join(str(r.get(k, "")) for k in ("records", "code", "briefing")) if "records" in r else "",
                 r.get("bytes", r.get("error", ""))) for r in rows))


@snapshot_app.command()
def show(
    run: Annotated[str, typer.Argument(metavar="RUN", help="A run id or a unique prefix of one.")],
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """What the agent saw in RUN: its budget table, what was left out, and the exact text."""
    from ..snapshot.store import load

    data = load(project(), run)
    if wants_json(fmt, json_):
        emit_json(data)
        return
    _show(data, data.get("stored") or "")


def _limit(used: int, limit: Any) -> str:
    return f"{used} / {limit}" if limit is not None else str(used)


def _show(data: dict[str, Any], where: str) -> None:
    inputs = data.get("inputs", {})
    task = inputs.get("task") or {}
    head = [f"run {data['run']}", data.get("created", "")]
    if task:
        head.append(f"task {task['id']}")
    if inputs.get("commit"):
        head.append(f"commit {inputs['commit']}")
    term.line(" · ".join(h for h in head if h) + (f"  ({where})" if where else ""))
    for warning in data.get("warnings", []):
        term.warn(warning)
    rows = ((r["part"], _limit(r["items"], r["limit_items"]), _limit(r["bytes"], r["limit_bytes"]))
            for r in data["usage"])
    term.table(("part", "items", "bytes"), rows, title="budget use")
    if data.get("skipped"):
        term.table(("part", "left out", "why"), ((s["part"], s["key"], s["reason"]) for s in data["skipped"]),
                   title="left out by the budgets")
    term.line("what the agent saw:", style="bold")
    sys.stdout.flush()
    term.write(data.get("text", ""))
