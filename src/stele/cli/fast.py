"""`stele recall`, `stele search` and `stele task claim`, parsed with argparse before typer is imported.

Agents and evaluation harnesses run recall and search once per prompt in a fresh process. Through
typer a recall on a 10k-fact record cost ~330 ms, of which ~180 ms was typer itself (it imports
pydantic to coerce parameters); the library call costs ~150 ms. A claim is raced by many agents at
once, and a loser should be told who won in the time a few git calls take, not in typer's. So
`entry.py` sends these commands here, and the typer app only lists them in `stele --help` (see
`cli/retrieve_cmds.py`, `cli/task_cmds.py`). This module is the one definition of their options; it
must not import typer.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

from ..errors import say
from ..render import term
from ..render.jsonout import emit_json


def _parser(name: str, description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"stele {name}", description=description)
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p.add_argument("--json", action="store_true", help="shorthand for --format json")
    return p


def recall_parser() -> argparse.ArgumentParser:
    p = _parser("recall", "Show what an agent is told before answering PROMPT: the facts that match, one "
                "hop out along their links, and the risks on the path (a starting set, at most 20).")
    p.add_argument("prompt", nargs="?", default="",
                   help="what the agent was asked (may be empty with --file)")
    p.add_argument("--file", "-f", action="append", default=[], metavar="PATH",
                   help="a file being edited (repeatable)")
    p.add_argument("--max-chars", type=int, default=None, help="text budget (default: hooks.max_chars)")
    _as_of(p)
    return p


def _as_of(p: argparse.ArgumentParser) -> None:
    p.add_argument("--as-of", metavar="DATE|COMMIT", default=None,
                   help="answer from the record as it stood then: the facts of the last commit at or before "
                   "DATE on this branch (or of COMMIT) and session notes written up to then")


def search_parser() -> argparse.ArgumentParser:
    p = _parser("search", "Plain hybrid search of the committed record (no walk, no gate, no callout).")
    p.add_argument("query", help="words, an error message, an identifier...")
    p.add_argument("--limit", "-n", type=int, default=10, help="at most this many results (default 10)")
    p.add_argument("--kind", "-k", action="append", default=[], help="only this kind (repeatable)")
    p.add_argument("--all", action="store_true", dest="all_",
                   help="include superseded, retired, expired and review-overdue facts")
    _as_of(p)
    p.add_argument("--sessions", action="store_true",
                   help="search the session log too (entries labelled SESSION, a replaced one below its replacement)")
    return p


def _warn(lines: list[str]) -> None:
    for line in dict.fromkeys(lines):
        say(line)


def recall(argv: list[str]) -> int:
    args = recall_parser().parse_args(argv)
    from ..project import find
    from ..retrieve.recall import recall as do_recall

    project = find()
    result = do_recall(project, args.prompt, files=args.file, as_of=args.as_of)
    _warn(result.warnings)
    if args.json or args.format == "json":
        emit_json(result.as_dict())
        return 0
    from ..render.agent import recall_text

    budget = args.max_chars if args.max_chars is not None else int(project.config["hooks.max_chars"])
    when = f" {result.when.line()}" if result.when is not None else ""
    term.write(recall_text(result, max_chars=budget) or f"nothing to recall (mode: {result.mode}){when}\n")
    return 0


def search(argv: list[str]) -> int:
    parser = search_parser()
    args = parser.parse_args(argv)
    from ..kinds import KINDS

    for k in args.kind:
        if k not in KINDS:
            parser.error(f"--kind {k!r} is not a kind: use one of " + ", ".join(KINDS))
    if args.limit < 1:
        parser.error(f"--limit {args.limit}: give a positive number")
    from ..project import find
    from ..retrieve.search import search as do_search

    result = do_search(find(), args.query, limit=args.limit, kinds=args.kind, include_all=args.all_,
                       as_of=args.as_of,
                       sessions=args.sessions)
    _warn(result.warnings)
    if args.json or args.format == "json":
        emit_json(result.as_dict())
        return 0
    from ..render.agent import search_text

    if result.when is not None:
        term.write(result.when.line() + "\n")
    term.write(search_text(result))
    return 0


def claim_parser() -> argparse.ArgumentParser:
    p = _parser("task claim", "Claim a task, atomically: if someone else holds it, exit 1 and say who, "
                "since and until when. The winner's run gets a context snapshot, stored and printed.")
    p.add_argument("task", metavar="ID", help="the task to claim")
    p.add_argument("--agent", metavar="NAME", help="your agent name (default: $STELE_AGENT, else your user name)")
    p.add_argument("--session", metavar="ID", help="your session id (default: $STELE_SESSION)")
    p.add_argument("--lease", metavar="DURATION", help="how long it holds: 2h, 30m, 1d (default: tasks.lease in "
                   ".stele/config.yaml)")
    p.add_argument("--record", "-r", action="extend", nargs="+", default=[], metavar="ID",
                   help="records this run needs, by id (even `delivery: manual` ones); repeatable")
    _remote_options(p)
    return p


def release_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="stele task release", description="Release your claim (a claim that "
                                "was pushed to a remote is released there too).")
    p.add_argument("task", metavar="ID", help="the task to release")
    p.add_argument("--agent", metavar="NAME", help="your agent name (default: $STELE_AGENT, else your user name)")
    p.add_argument("--session", metavar="ID", help="your session id (default: $STELE_SESSION)")
    p.add_argument("--force", action="store_true", help="release someone else's claim")
    _remote_options(p)
    return p


def _remote_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--remote", nargs="?", const="", default=None, metavar="NAME",
                   help="decide it on the remote too: NAME, or origin, or the only remote")
    p.add_argument("--remote-name", metavar="NAME", help="the same as --remote NAME")


def _remote(project, args: argparse.Namespace) -> str | None:
    from ..tasks import claims

    wanted = args.remote_name or args.remote
    return claims.resolve_remote(project, wanted or None) if wanted is not None else None


def release(argv: list[str]) -> int:
    args = release_parser().parse_args(argv)
    from ..project import find
    from ..tasks import board, claims

    project = find()
    released = board.release_task(project, args.task, claims.Identity.current(args.agent, args.session),
                                  force=args.force, remote=_remote(project, args))
    term.write(f"released {released.task} (token {released.token})"
               + (f"; pushed to {released.remote}" if released.remote else "") + "\n")
    return 0


def claim(argv: list[str]) -> int:
    args = claim_parser().parse_args(argv)
    from .. import clock
    from ..project import find
    from ..snapshot.claim import claim as claim_run
    from ..tasks import claims

    project = find()
    me = claims.Identity.current(args.agent, args.session)
    lease = claims.parse_lease(args.lease) if args.lease else None
    run = claim_run(project, args.task, me, lease=lease, remote=_remote(project, args), records=args.record)
    c, claimed, snap = run.claimed.claim, run.claimed, run.snapshot
    if args.json or args.format == "json":
        emit_json({"action": claimed.action, "claim": c.as_dict(clock.utcnow()),
                   "previous": claimed.previous.as_dict() if claimed.previous else None,
                   "snapshot": snap.as_dict(), "elapsed_ms": run.timings()})
        return 0
    line = claims.claimed_line(claimed)
    _warn(snap.warnings)
    term.write(line + (f"; pushed to {c.remote}" if c.remote else "") + "\n"
               + f"context snapshot {snap.run} stored ({snap.stored}); it follows.\n\n" + snap.text)
    return 0


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "recall": recall, "search": search, "task claim": claim, "task release": release}


def run(name: str, argv: list[str]) -> int:
    from ..errors import error_handler

    with error_handler():
        return COMMANDS[name](argv)
    return 0  # pragma: no cover - error_handler raises SystemExit on every error
