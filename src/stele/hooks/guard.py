"""`stele hook guard-readonly`: the PreToolUse guard that keeps the research subagent read-only.

It lets through exactly one `stele` command whose subcommand only reads (recall, search, show,
brief, list, why) and refuses everything else by exiting 2 with the reason on stderr, which is how Claude
Code and Codex block a tool call. Unlike the other hooks this one fails closed: a guard that lets a
command through because it crashed guards nothing, and refusing only costs the subagent one call.
Shell syntax that could run a second command (`;`, `&&`, pipes, redirections, `$(...)`, backticks) is
refused outside single quotes, where the shell would act on it; quoted text is the query's business.
"""
from __future__ import annotations

import shlex

from ..errors import say
from .payload import parse
from .run import read_stdin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace

READ_ONLY = ("recall", "search", "show", "brief", "list", "why")
BLOCK = 2
_UNQUOTED_UNSAFE = frozenset(";&|<>`$()\n\r")


def _unsafe_char(command: str) -> str | None:
    """The first character the shell would treat as an operator or substitution, or None."""
    quote, i = None, 0
    while i < len(command):
        c = command[i]
        if quote == "'":
            quote = None if c == "'" else quote
        elif c == "\\":
            i += 1  # the next character is literal
        elif quote == '"':
            if c == '"':
                quote = None
            elif c in "$`":
                return c
        elif c in "'\"":
            quote = c
        elif c in _UNQUOTED_UNSAFE:
            return c
        i += 1
    return None


def refusal(command: str) -> str | None:
    """Why `command` may not run in the read-only helper, or None when it may."""
    allowed = "only one read-only stele command may run here: stele " + "|".join(READ_ONLY) + " ..."
    bad = _unsafe_char(command)
    if bad is not None:
        return f"{allowed} (no {bad!r}: no pipes, chaining, redirection or substitution)"
    try:
        argv = shlex.split(command)
    except ValueError as e:
        return f"{allowed} (the command does not parse: {e})"
    if not argv or argv[0] != "stele":
        return f"{allowed}; {argv[0] if argv else 'an empty command'!r} is not stele"
    if len(argv) < 2 or argv[1] not in READ_ONLY:
        return f"{allowed}; `stele {argv[1] if len(argv) > 1 else ''}` is not one of them"
    return None


def main(args: Namespace) -> int:
    try:
        payload = parse(read_stdin(), args.harness)
        command = payload.tool_input.get("command")
        reason = refusal(command) if isinstance(command, str) else "no shell command in the payload"
    except Exception as e:  # fail closed
        reason = f"the guard could not read the request ({type(e).__name__}: {e})"
    if reason is None:
        return 0
    say(f"stele guard-readonly: refused: {reason}")
    return BLOCK
