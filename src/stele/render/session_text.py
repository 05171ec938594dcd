"""A session's log as plain text: what `GET /api/memory/sessions/{id}/blob` returns.

One paragraph per entry, in log order: a header line (time, id, type, stage, task, refs) and the
entry's text unchanged. Byte-stable for the same log, never Rich; the WAL was redacted on write, so
nothing here needs redacting again.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..session import sessions
from ..session.author import agent_of, byline, host_of
from ..session.sessions import Session
from ..session.wal import Entry


def entry_parts(e: Entry) -> tuple[str, str, list[str]]:
    """An entry's byline (`agent@host` of a teammate's entry, else ''), its label (type, stage, event)
    and what it refers to: the one reading of an entry's header, for the transcript and the CLI."""
    label = e.type + (f"[{e.extra['stage']}]" if e.extra.get("stage") else "")
    label += f"({event})" if (event := sessions.event(e)) else ""
    refs = [f"{k} {v}" for k, v in e.refs.items() if k != "paths"] + e.paths
    return byline(agent_of(e), host_of(e)), label, ([f"task {e.task}"] if e.task else []) + refs


def entry_header(e: Entry) -> str:
    who, label, tail = entry_parts(e)
    return f"{e.ts} {e.id}{f' ({who})' if who else ''} {label}" + (f" ({', '.join(tail)})" if tail else "")


def transcript(info: Session, entries: Iterable[Entry]) -> str:
    head = [f"session {info.id}", f"agent: {info.agent or '-'}  thread: {info.thread or '-'}  "
            f"task: {info.task or '-'}  entries: {info.entries}"]
    if info.goal:
        head.append(f"goal: {info.goal}")
    body = [f"{entry_header(e)}\n{e.text.rstrip()}" for e in entries]
    return "\n".join(head) + "\n\n" + "\n\n".join(body) + "\n"
