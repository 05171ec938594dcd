"""What the resident server runs, for whom, and with which environment: the rules that keep a call
from escaping a sandbox through it.

Its socket is an abstract Unix socket: no file permissions, reachable from any process of the user
that shares the network namespace, sandboxed or not; and its children run with the server's rights
(its mount namespace, cgroup, rlimits, LSM context), outside any sandbox of the caller. So the server
checks everything itself, whatever the caller says (docs/hooks.md; tests/cli/test_resident.py
drives the wire as an attacker would):
- only the agent hooks (not `pre-commit`, which reads the index git names in GIT_INDEX_FILE, a
  variable a child never gets), `recall` and `search` run (`allowed`, checked on both sides);
- a child's environment is the server's own, but for what the caller decides (its session,
  harness (Cline's `CLINE_*` folders say where its session record is), terminal, locale, Stele's
  switches), and never what would make a program the child starts (git) run something else
  (`child_env`);
- a caller in another mount, network or user namespace, or more confined than the server
  (no-new-privs, seccomp), is refused (`peer_refusal`);
- and the caller, in turn, trusts no server more confined than itself (`server_refusal`): a
  sandboxed process that binds the socket's name first would otherwise be handed the caller's
  environment, stdin, stdout and exit code (a read-only guard that says yes).
Imports nothing at module level but os: `allowed` and `server_refusal` run in the caller.
"""
from __future__ import annotations

import os

HOOK_EVENTS = ("session-start", "session", "prompt", "pre-edit", "post-edit", "subagent-start", "stop",
               "subagent-stop", "session-end", "guard-readonly")

CALLER_PREFIXES = ("STELE_", "CLAUDE_", "CODEX_", "GEMINI_", "CURSOR_", "COPILOT_", "CLINE_", "LC_")
CALLER_NAMES = frozenset({"NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TERM", "LANG", "TZ", "CI"})
NEVER_NAMES = frozenset({"EDITOR", "VISUAL"})
NEVER_PREFIXES = ("GIT_", "LD_", "PYTHON")
CONFINEMENT = ("NoNewPrivs", "Seccomp", "Seccomp_filters")

Confinement = tuple[tuple[str, ...], tuple[int, ...]]


def allowed(argv: object) -> bool:
    """Is `argv` a call the server runs: an agent hook, `recall` or `search`?"""
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return False
    return argv[0] in ("recall", "search") or (argv[0] == "hook" and argv[1:2] != [] and argv[1] in HOOK_EVENTS)


def child_env(caller: dict, own: dict) -> dict[str, str]:
    """The environment of a call's child, from the caller's (`CALLER_*` only) and the server's own."""
    def never(key: str) -> bool:
        return key in NEVER_NAMES or key.startswith(NEVER_PREFIXES)

    def callers(key: str) -> bool:
        return key in CALLER_NAMES or key.startswith(CALLER_PREFIXES)

    env = {k: v for k, v in own.items() if not never(k) and not callers(k)}
    env.update({k: v for k, v in caller.items() if isinstance(k, str) and isinstance(v, str)
                and callers(k) and not never(k) and "\0" not in k + v})
    return env


def _proc_status(pid: int | str) -> dict[str, str]:
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def confinement(pid: int | str = "self") -> Confinement:
    """A process's namespaces (mount, network, user) and how it is confined (no-new-privs, seccomp
    mode and filters), from /proc."""
    spaces = tuple(os.readlink(f"/proc/{pid}/ns/{ns}") for ns in ("mnt", "net", "user"))
    status = _proc_status(pid)
    return spaces, tuple(int(status.get(key, "0").split()[0] or 0) for key in CONFINEMENT)


def peer_refusal(pid: int, mine: Confinement) -> str | None:
    """Why a caller (its pid from SO_PEERCRED) is refused: one in another mount, network or user
    namespace, or more confined than the server (no-new-privs, seccomp), is in a sandbox the call
    would escape. None to accept."""
    return _more_confined(pid, mine, "a caller", "")


def server_refusal(pid: int) -> str | None:
    """Why the caller does not trust the process listening on the socket (its pid from
    SO_PEERCRED), or None: the mirror of `peer_refusal`. A server in another namespace, or under
    no-new-privs or seccomp the caller is not under, is a sandbox's squatter, not a server a hook
    started."""
    try:
        mine = confinement()
    except (OSError, ValueError):
        return "this process's namespaces cannot be read"
    return _more_confined(pid, mine, "a server", " this process is not under")


def _more_confined(pid: int, mine: Confinement, who: str, than: str) -> str | None:
    """Why the process `pid` is not one to deal with for a process confined as `mine`, or None."""
    if pid <= 0:
        return f"{who} in another pid namespace"
    try:
        spaces, confined = confinement(pid)
    except (OSError, ValueError):
        return f"{who} whose namespaces cannot be read"
    if spaces != mine[0]:
        return f"{who} in another mount, network or user namespace"
    if any(theirs > own for theirs, own in zip(confined, mine[1], strict=True)):
        return f"{who} under no-new-privs or seccomp{than}"
    return None
