"""`stele task ...`: create, list and close tasks, claim and release them, resume one.

Claim, release and resume print plain lines (agents read them); listings are tables for people, with
`--json` for agents. A lost claim is an error: exit 1 and one line naming the holder.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from .. import clock
from ..render import term
from ..render.jsonout import emit_json
from ..tasks import claims
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json

if TYPE_CHECKING:  # the commands import it: its record parser (YAML) would cost every command at import
    from ..tasks import board

Opt = typer.Option
task_app = typer.Typer(name="task", help="Tasks and atomic claims on them.", no_args_is_help=True)
app.add_typer(task_app, name="task")

IdArg = Annotated[str, typer.Argument(metavar="ID")]
AgentOpt = Annotated[str | None, Opt("--agent", help=f"Your agent name (default: ${claims.AGENT_ENV}, "
                                                         "else your user name).")]
SessionOpt = Annotated[str | None, Opt("--session", help="Your session id (default: $STELE_SESSION).")]
RemoteOpt = Annotated[bool, Opt("--remote", help="Decide it on the remote too (origin, or the only remote).")]
RemoteNameOpt = Annotated[str | None, Opt("--remote-name", metavar="NAME",
                                             help="The remote (name, URL or path) for --remote; implies it.")]


def _say(text: str) -> None:
    """Plain output for agents: never through Rich."""
    term.write(text.rstrip("\n") + "\n")


def _remote(p, remote: bool, remote_name: str | None) -> str | None:
    return claims.resolve_remote(p, remote_name) if remote or remote_name else None


def _rows_out(found: list[board.TaskRow], as_json: bool, empty: str) -> None:
    now = clock.utcnow()
    if as_json:
        emit_json({"tasks": [r.as_dict(now) for r in found]})
        return
    if not found:
        term.line(empty)
        return
    term.table(("id", "kind", "status", "claim", "title"), (
        (r.fact.id, r.fact.kind, r.fact.status, _claim_cell(r.claim, now), r.fact.title) for r in found))


def _claim_cell(claim: claims.Claim | None, now) -> str:
    if claim is None or claim.state != "held":
        return ""
    return f"{claim.holder.agent} until {clock.iso(claim.until)}" if claim.live(now) else "expired"


@task_app.command("new")
def new(
    title: Annotated[str, typer.Argument(help="One line, <= 120 chars.")],
    parent: Annotated[str | None, Opt("--parent", "-p", help="The task or container it blocks.")] = None,
    link: Annotated[list[str], Opt("--link", "-l", help="REL:ID (relates-to:DEC-4F7K); repeatable.")] = [],
    kind: Annotated[str, Opt("--kind", "-k", help="task, epic, objective or milestone.")] = "task",
    body: Annotated[str | None, Opt("--body", help="What to do and why (default: the title).")] = None,
    priority: Annotated[str | None, Opt(help="critical | high | normal | low")] = None,
    anchor: Annotated[list[str], Opt("--anchor", "-a", help="PATH, glob or PATH::Symbol; repeatable.")] = [],
    tag: Annotated[list[str], Opt("--tag", "-t", help="Repeatable.")] = [],
    allow_duplicate: Annotated[bool, Opt("--allow-duplicate",
                                         help="Create it even if an open task has the same title (a recurring task).")
                               ] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Create an open task (or container) in docs/memory/."""
    from ..tasks import board
    from .record_cmds import _written

    w = board.new_task(project(), title, kind=kind, parent=parent, links=link, body=body, priority=priority,
                       anchors=anchor, tags=tag, allow_duplicate=allow_duplicate)
    _written(w, "created", wants_json(fmt, json_))


@task_app.command("list")
def list_(
    status: Annotated[list[str], Opt("--status", "-s", help="Repeatable (default: all open).")] = [],
    mine: Annotated[bool, Opt("--mine", help="Only tasks you hold a live claim on.")] = False,
    all_: Annotated[bool, Opt("--all", help="Include done and cancelled tasks.")] = False,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """List tasks and containers with their claims."""
    from ..record.load import load
    from ..tasks import board

    p = project()
    me = claims.Identity.current(agent, session) if mine else None
    found = board.list_tasks(p, load(p).usable(), statuses=status, mine=me, include_closed=all_)
    _rows_out(found, wants_json(fmt, json_), "no tasks match")


@task_app.command("ready")
def ready(fmt: FormatOpt = Format.text, json_: JsonOpt = False) -> None:
    """Open tasks with nothing open blocking them and nobody holding them."""
    from ..record.load import load
    from ..tasks import board

    p = project()
    _rows_out(board.ready(p, load(p).usable()), wants_json(fmt, json_), "no ready tasks")


@task_app.command("show")
def show(task_id: IdArg, fmt: FormatOpt = Format.text, json_: JsonOpt = False) -> None:
    """Show a task: status, claim, what it blocks, what blocks it, linked facts."""
    from ..render.task_text import task_text
    from ..tasks import board

    r = board.resume(project(), claims.Identity.current(), task_id, history_limit=0)
    now = clock.utcnow()
    if wants_json(fmt, json_):
        emit_json({k: v for k, v in r.as_dict(now).items() if k != "history"})
        return
    title, _, body = task_text(r, now, history=False).partition("\n")
    term.section(title, body.rstrip("\n"), subtitle=r.row.fact.path)


# `claim` and `release` run before typer is imported (entry.py -> fast.py, the one definition of their
# options: `--remote [NAME]` takes an optional value, which typer cannot express); these entries list
# them in `stele task --help` and forward anything that reaches them.
_FORWARD = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}


@task_app.command("claim", context_settings=_FORWARD)
def claim(ctx: typer.Context) -> None:
    """Claim a task, atomically: if someone else holds it, exit 1 and say who, since and until when."""
    from .fast import run

    raise typer.Exit(run("task claim", ctx.args))


@task_app.command("release", context_settings=_FORWARD)
def release(ctx: typer.Context) -> None:
    """Release your claim (a claim that was pushed to a remote is released there too)."""
    from .fast import run

    raise typer.Exit(run("task release", ctx.args))


@task_app.command("claims")
def list_claims(
    remote_arg: Annotated[str | None, typer.Argument(metavar="[REMOTE]", help="List this remote's claims "
                                                        "(name, URL or path).")] = None,
    remote: RemoteOpt = False,
    remote_name: RemoteNameOpt = None,
    all_: Annotated[bool, Opt("--all", help="Include released claims.")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """List claims of this clone (all its worktrees), or the remote's with --remote."""
    p = project()
    name = _remote(p, remote, remote_name or remote_arg)
    found = claims.remote_claims(p, name) if name else claims.local_claims(p)
    found = [c for c in found if all_ or c.state == "held"]
    now = clock.utcnow()
    if wants_json(fmt, json_):
        emit_json({"remote": name, "claims": [c.as_dict(now) for c in found]})
        return
    if not found:
        term.line("no claims" + (f" on {name}" if name else ""))
        return
    term.table(("task", "status", "holder", "since", "until", "token"), (
        (c.task, c.status(now), c.holder.describe(), clock.iso(c.since), clock.iso(c.until), str(c.token))
        for c in found))


@task_app.command("done")
def done(
    task_id: IdArg,
    note: Annotated[str | None, Opt("--note", help="What was done (appended to the task's body).")] = None,
    force: Annotated[bool, Opt("--force", help="Even if someone else holds a live claim.")] = False,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Mark a task done: its claim is released and facts that `expires-on` it are retired."""
    from ..tasks import board

    closed = board.done(project(), task_id, claims.Identity.current(agent, session), note=note, force=force)
    _closed(closed)


@task_app.command("cancel")
def cancel(
    task_id: IdArg,
    note: Annotated[str | None, Opt("--note", help="Why (appended to the task's body).")] = None,
    force: Annotated[bool, Opt("--force", help="Even if someone else holds a live claim.")] = False,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Mark a task cancelled and release its claim."""
    from ..tasks import board

    closed = board.cancel(project(), task_id, claims.Identity.current(agent, session), note=note, force=force)
    _closed(closed)


def _closed(closed: board.Closed) -> None:
    released = f"; released its claim (token {closed.released.token})" if closed.released else ""
    term.line(f"{closed.fact.id} is {closed.fact.status}{released}")
    for fact in closed.retired:
        term.line(f"retired {fact.id} {fact.title} (it expires on {closed.fact.id})")


@task_app.command("resume")
def resume(
    task_id: Annotated[str | None, typer.Argument(metavar="[ID]", help="Default: yours.")] = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """What was I doing: the task, its claim, linked decisions and risks, and its session history."""
    from ..render.task_text import task_text
    from ..tasks import board

    r = board.resume(project(), claims.Identity.current(agent, session), task_id)
    now = clock.utcnow()
    if wants_json(fmt, json_):
        emit_json(r.as_dict(now))
        return
    _say(task_text(r, now))
