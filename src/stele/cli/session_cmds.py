"""Session memory commands: the `session` group (start, log, list, show, preamble, restart, compact)
and the top-level shorthands `note` and `promote`. Each finds the project, calls one library function
in `stele.session` (sessions, preamble, promote, archive), and renders."""
from __future__ import annotations

import sys
from collections import Counter
from typing import Annotated

import typer

from .. import textcut
from ..errors import SteleError, UsageError
from ..redact import describe
from ..render import term
from ..render.jsonout import emit_json
from ..session import sessions, wal
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json

Opt = typer.Option
session_app = typer.Typer(help="Session memory: what happened, in an append-only log per session.",
                          no_args_is_help=True)
app.add_typer(session_app, name="session")

SessionOpt = Annotated[str | None, Opt("--session", help="Session id (default: $STELE_SESSION).")]
TaskOpt = Annotated[str | None, Opt("--task", help="The task this is about (TASK-...).")]
IssueOpt = Annotated[str | None, Opt("--issue", help="Issue number.")]
PrOpt = Annotated[str | None, Opt("--pr", help="Pull request number.")]
ShaOpt = Annotated[str | None, Opt("--sha", help="Commit id.")]
PathOpt = Annotated[list[str], Opt("--path", help="A file this is about; repeatable.")]


def _text(text: str) -> str:
    return sys.stdin.read() if text == "-" else text


def _logged(entry: wal.Entry, found: Counter, as_json: bool) -> None:
    if as_json:
        emit_json({"entry": entry.as_dict(), "redacted": dict(found)})
    else:
        term.line(entry.id)
    if found:
        term.warn(f"redacted before writing: {describe(found)} (the secret text is not in the log)")


@session_app.command("start")
def start(
    agent: Annotated[str | None, Opt("--agent", help="Who runs it: claude-code, codex, a name.")] = None,
    thread: Annotated[str | None, Opt("--thread", help="Share history within this thread.")] = None,
    goal: Annotated[str | None, Opt("--goal", help="What the session is for (in every preamble).")] = None,
    task: TaskOpt = None,
    session: Annotated[str | None, Opt("--session", help="Adopt this id (e.g. a harness's).")] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Start a session and print its id (export it as STELE_SESSION)."""
    entry = sessions.start(project(), agent=agent, thread=thread, goal=goal, task=task, session=session)
    if wants_json(fmt, json_):
        emit_json({"session": entry.session, "entry": entry.id, "agent": entry.agent, "thread": entry.thread,
                   "goal": entry.extra.get("goal"), "task": entry.task})
        return
    term.write(entry.session + "\n")  # bare, for `export STELE_SESSION=$(stele session start)`
    term.note(f"export {wal.SESSION_ENV}={entry.session}")


@session_app.command("log")
def log(
    type_: Annotated[str, typer.Argument(metavar="TYPE", help=", ".join(wal.TYPES))],
    text: Annotated[str, typer.Argument(help="What happened; - reads stdin.")],
    task: TaskOpt = None,
    issue: IssueOpt = None,
    pr: PrOpt = None,
    sha: ShaOpt = None,
    path: PathOpt = [],
    stage: Annotated[str | None, Opt("--stage", help="For `stage` entries: the stage completed.")] = None,
    at: Annotated[str | None, Opt("--at", help="When it happened (ISO 8601 with a zone, not in the future; "
                                              "default: now).")] = None,
    session: SessionOpt = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Append an entry to the session's log (secrets are redacted first); prints its id."""
    p, found = project(), Counter[str]()
    entry = sessions.log(p, wal.require_session(session), type_, _text(text), task=task, issue=issue, pr=pr,
                         sha=sha, paths=path, stage=stage, found=found, at=at)
    _logged(entry, found, wants_json(fmt, json_))


@app.command("note")
def note(
    text: Annotated[str, typer.Argument(help="The note; - reads stdin.")],
    task: TaskOpt = None,
    issue: IssueOpt = None,
    pr: PrOpt = None,
    sha: ShaOpt = None,
    path: PathOpt = [],
    session: SessionOpt = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Log a note in the current session (shorthand for `stele session log note TEXT`)."""
    log("note", text, task=task, issue=issue, pr=pr, sha=sha, path=path, session=session, fmt=fmt,
        json_=json_)


@session_app.command("list")
def list_(
    issue: IssueOpt = None,
    pr: PrOpt = None,
    path: Annotated[str | None, Opt("--path", help="Entries about this file, folder or glob.")] = None,
    task: TaskOpt = None,
    thread: Annotated[str | None, Opt("--thread", help="Sessions of this thread.")] = None,
    q: Annotated[str | None, Opt("--q", help="Full text: entries containing every word.")] = None,
    limit: Annotated[int, Opt("--limit", help="At most this many (capped at 32).")] = sessions.DEFAULT_LIMIT,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """List sessions, most recently active first, filtered by what their entries are about."""
    filters = sessions.Filters(issue=issue, pr=pr, path=path, task=task, thread=thread, q=q)
    report = wal.ReadReport()
    listed, total = sessions.list_sessions(project(), filters, limit, report)
    wal.warn_skipped(report)
    if wants_json(fmt, json_):
        emit_json({"sessions": [x.as_dict() for x in listed], "total": total,
                   "limit": sessions.check_limit(limit)})
        return
    if not listed:
        term.line("no sessions match")
        return
    count = "matches" if filters.by_entry else "entries"
    term.table(("session", "last", "agent", "thread", count, "goal"), (
        (x.session.id, x.session.last or "", x.session.agent or "", x.session.thread or "",
         str(len(x.hits) if filters.by_entry else x.session.entries),
         textcut.one_line(x.session.goal or "", 60))
        for x in listed))
    if total > len(listed):
        term.note(f"{total - len(listed)} more; narrow the filters or raise --limit (at most 32)")


@session_app.command("show")
def show(
    ident: Annotated[str, typer.Argument(metavar="ID", help="A session id, or an entry id (S-...).")],
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Show a session's entries in order, or one entry."""
    from ..ids import SESSION_ID_RE
    from ..record.load import load
    from ..session.promote import promoted_to
    from ..session.view import session_view

    p, report = project(), wal.ReadReport()
    if SESSION_ID_RE.match(ident.upper()):
        entry = sessions.find_entry(p, ident, report)
        wal.warn_skipped(report)
        promoted = promoted_to(load(p), entry.id)
        if wants_json(fmt, json_):
            emit_json({"entry": entry.as_dict(), "promoted_to": promoted})
        else:
            _print_entry(entry, promoted, full=True)
        return
    view = session_view(p, ident, report)
    wal.warn_skipped(report)
    if wants_json(fmt, json_):
        emit_json(view.as_dict())
        return
    info = view.session
    head = [f"agent: {info.agent or '-'}  thread: {info.thread or '-'}  task: {info.task or '-'}",
            f"started: {info.started}  last: {info.last}  entries: {info.entries}  restarts: {info.restarts}"]
    if info.goal:
        head.append(f"goal: {info.goal}")
    term.section(info.id, "\n".join(head))
    for e in view.entries:
        _print_entry(e, view.promoted.get(e.id, []), full=False)


def _print_entry(e: wal.Entry, promoted: list[str], full: bool) -> None:
    from ..render.session_text import entry_parts
    from ..session.author import agent_of, host_of

    who, label, tail = entry_parts(e)
    tail += [f"promoted to {i}" for i in promoted]
    # what the agent was given is listed whole: it is the answer to "what did the agent see"
    text = e.text if full or sessions.event(e) == sessions.DELIVERED else textcut.one_line(e.text, 100)
    term.line(f"{e.ts}  {e.id}{f' ({who})' if who else ''}  {label}  {text}" + (f"  ({', '.join(tail)})" if tail else ""))
    if full:
        term.line(f"session: {e.session}  agent: {agent_of(e) or '-'}  thread: {e.thread or '-'}"
                  + (f"  host: {host_of(e)}" if host_of(e) else ""))


@session_app.command("preamble")
def preamble(
    session: SessionOpt = None,
    thread: Annotated[str | None, Opt("--thread", help="Every session of this thread.")] = None,
    fidelity: Annotated[str | None, Opt("--fidelity", help="compact | summary:high | summary:medium | "
                                           "summary:low | truncate")] = None,
    task: Annotated[str | None, Opt("--task", help="Take the task's fidelity from this task.")] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Print the history an agent gets before a prompt: goal, completed stages, steering."""
    from ..session.preamble import for_scope

    if session and thread:
        raise UsageError("give --session or --thread, not both")
    p = project()
    if not thread:
        session = wal.require_session(session)
        if not wal.segments(p, session):
            raise UsageError(f"no session {session} in {p.rel(p.wal_dir)}/: `stele session list` shows "
                             "sessions")
    report = wal.ReadReport()
    result = for_scope(p, session=session, thread=thread, fidelity=fidelity, task=task, report=report)
    wal.warn_skipped(report)
    if wants_json(fmt, json_):
        emit_json(result.as_dict())
        return
    term.write(result.render())  # agent-facing: plain and byte-stable, never through Rich


@session_app.command("restart")
def restart(
    reason: Annotated[str | None, Opt("--reason", help="Why the iteration starts over.")] = None,
    session: SessionOpt = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Start a new iteration: clear the stage history, keep goal, steering and visit counts."""
    entry = sessions.restart(project(), wal.require_session(session), reason)
    if wants_json(fmt, json_):
        emit_json({"entry": entry.as_dict()})
    else:
        term.line(entry.id)


@session_app.command("compact")
def compact(
    older_than: Annotated[float, Opt("--older-than", metavar="DAYS", help="Archive logs idle this long "
                                     "(0: all).")] = 7,
    session: SessionOpt = None,
    dry_run: Annotated[bool, Opt("--dry-run", help="Say what would move; move nothing.")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Move idle session logs, whole, into gzipped archive segments (verified; no line is lost)."""
    from ..session.archive import compact as do_compact

    if older_than < 0:
        raise UsageError(f"--older-than {older_than}: give a number of days, 0 or more")
    done = do_compact(project(), older_than, session, dry_run)
    if wants_json(fmt, json_):
        emit_json({"archived": [a.as_dict() for a in done], "dry_run": dry_run})
        return
    verb = "would archive" if dry_run else "archived"
    for a in done:
        term.line(f"{verb} {a.session}: {textcut.counted(a.lines, 'line')}, {textcut.counted(a.bytes, 'byte')} -> "
                  f"{textcut.counted(a.gz_bytes, 'byte')} "
                  f"in {a.segment}")
    if not done:
        term.line("nothing to archive")


@session_app.command("sync")
def sync(
    push_only: Annotated[bool, Opt("--push", help="Only ship this clone's new lines.")] = False,
    pull_only: Annotated[bool, Opt("--pull", help="Only fetch the team's new lines.")] = False,
    verify: Annotated[bool, Opt("--verify", help="Check every segment this clone wrote is still on the "
                                "store; send lost ones again from the local log.")] = False,
    approve: Annotated[bool, Opt("--approve", help="Sync with the store the config names from now on "
                                 "(recorded in .git/config; needed once, and again when it changes).")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Ship this clone's session lines to the team store (session.store) and fetch the team's."""
    from ..index import teamsync
    from ..session.remote import approve as approve_store
    from ..session.remote import configured

    if push_only and pull_only:
        raise UsageError("--push and --pull together are a plain sync: give neither")
    proj = project()
    remote = configured(proj)
    if remote is None:
        raise SteleError(f"{proj.rel(proj.config_path)}: `session.store` is not set, so session memory "
                         "stays in this clone; set it to s3://BUCKET/PREFIX (docs/sessions.md)")
    if verify and pull_only:
        raise UsageError("--verify checks what this clone pushed: give it without --pull")
    if approve:
        approve_store(proj, remote)
    result = teamsync.command(proj, remote, push=not pull_only, pull=not push_only, verify=verify)
    for problem in result.problems:
        term.warn(problem)
    if result.redacted:
        term.warn(f"redacted before shipping: {describe(result.redacted)}")
    if wants_json(fmt, json_):
        emit_json({"store": remote.url, **result.as_dict()})
        return
    if approve:
        term.line(f"approved: this clone syncs session memory with {remote.where()} (.git/config)")
    term.line(f"{remote.url}: pushed {textcut.counted(result.pushed_lines, 'line')} in "
              f"{textcut.counted(len(result.pushed), 'segment')}, pulled {textcut.counted(result.pulled_lines, 'line')} in "
              f"{textcut.counted(len(result.pulled), 'segment')}"
              + (f", re-sent {textcut.counted(result.resent_lines, 'line')} in "
                 f"{textcut.counted(len(result.resent), 'segment')} the store had lost" if result.resent else ""))


@app.command("promote")
def promote(
    entry_id: Annotated[str, typer.Argument(metavar="S-ID", help="The session entry to promote.")],
    kind: Annotated[str, Opt("--kind", "-k", help="lesson, decision, risk, ...")],
    title: Annotated[str | None, Opt(help="One line, <= 120 chars (default: the first line).")] = None,
    anchor: Annotated[list[str], Opt("--anchor", "-a", help="Besides the entry's paths; repeatable.")] = [],
    link: Annotated[list[str], Opt("--link", "-l", help="REL:ID; repeatable.")] = [],
    tag: Annotated[list[str], Opt("--tag", "-t", help="Repeatable.")] = [],
    again: Annotated[bool, Opt("--again", help="Promote an entry that already became a fact.")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Turn a session entry into a committed fact whose `source` records the entry."""
    from ..session.promote import promote as do_promote

    done = do_promote(project(), entry_id, kind, title=title, anchors=anchor, links=link, tags=tag,
                      again=again)
    fact = done.written.fact
    if wants_json(fmt, json_):
        emit_json({"id": fact.id, "path": fact.path, "source": fact.source,
                   "redacted": dict(done.written.redacted)})
    else:
        term.line(f"promoted {done.entry.id} to {fact.id} {fact.path}")
        term.note("review it, then commit it: the fact becomes project truth through the pull request")
    if done.written.redacted:
        term.warn(f"redacted before writing: {done.written.redaction_summary}")
