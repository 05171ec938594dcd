"""Who wrote a session entry: the agent and, for a team entry, the host, cleaned for display.

A team entry was pulled from the store, so its `agent` and `host` are another machine's words: they
reach an agent's context (recall, the preamble) and a terminal, and must not be able to steer either.
They are names, so they are kept to the characters names use and cut short; anything else becomes
nothing rather than an escape sequence or an instruction. Every reader asks here: the index when it
builds an item from a WAL entry, the session listing, the preamble and the renderers (`byline`).

An entry is a team entry when it carries a `host`: sync stamps one on every line it ships, while this
clone's own log never has one.
"""
from __future__ import annotations

from ..lazyre import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .wal import Entry

NAME_MAX = 64
UNKNOWN = "unknown"  # the host (or agent) of a team entry that names none readable
_NOT_NAME = lazy(r"[^A-Za-z0-9 ._-]+")


def clean(value: Any) -> str | None:
    """A name as shown: letters, digits, single spaces, '.', '_' and '-', at most NAME_MAX; None when
    nothing is left."""
    if not isinstance(value, str):
        return None
    return " ".join(_NOT_NAME.sub("", value).split())[:NAME_MAX].strip() or None


def agent_of(entry: Entry) -> str | None:
    return clean(entry.agent)


def host_of(entry: Entry) -> str | None:
    """Where a team entry was written; None for this clone's own lines."""
    return clean(entry.extra.get("host"))


def byline(agent: str | None, host: str | None) -> str:
    """`agent@host` for a team entry ("" for a local one: the reader is the one who wrote it)."""
    if not host:
        return ""
    return f"{agent or UNKNOWN}@{host}"
