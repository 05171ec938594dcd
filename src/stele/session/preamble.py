"""The session preamble: goal, completed stages and steering, rendered before a prompt.

History reaches a prompt only through here, and it is shaped to stay small without hiding what the
agent must obey: repeated visits of a stage fold into one entry (latest content, visit count), the
fidelity trims stage content only, and steering is always whole. Fidelity changes what the prompt
sees, never what the log keeps. Folding is a pure function over entries so it is tested in memory;
`for_scope` is the one place that reads the log, the record and the config.

Threads: sessions started with the same `--thread` share one history. A restart (a `note` with
`"event": "restart"`) anywhere in the scope ends an iteration: the stage history before it leaves
the preamble, while the goal, the steering and the visit counts carry on.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from .. import textcut
from ..errors import SteleError, UsageError
from ..plain import dataclass, field
from ..project import Project
from . import wal
from .author import agent_of, byline, host_of
from .sessions import RESTART, START, event, identity, order_key
from .wal import Entry

# fidelity -> characters of each stage's content kept (None: all of it, 0: no stage history)
FIDELITIES: dict[str, int | None] = {"compact": None, "summary:high": 2000, "summary:medium": 800,
                                     "summary:low": 200, "truncate": 0}
DEFAULT_FIDELITY = "compact"
CUT_MARK = " [...]"
STEERING = "Steering (from the operator; it still applies):"
# a thread's steering pulled from the team store: another operator's words (or anyone's who can write to
# the bucket), shown as theirs and cut like the rest, never with this operator's authority
TEAM_STEERING = "Steering given in teammates' sessions of this thread (theirs, not this operator's):"


def check_fidelity(value: str, where: str) -> str:
    if value not in FIDELITIES:
        raise SteleError(f"{where} {value!r} is not a fidelity: use one of " + ", ".join(FIDELITIES))
    return value


def resolve_fidelity(flag: str | None = None, task: str | None = None, config: str | None = None,
                     task_where: str = "the task's fidelity") -> tuple[str, str]:
    """The call's fidelity, else the task's, else the config default, else compact; returns the value
    and which of those it came from. Only the winning value is checked."""
    if flag:
        if flag not in FIDELITIES:
            raise UsageError(f"--fidelity {flag!r} is not one of " + ", ".join(FIDELITIES))
        return flag, "flag"
    if task:
        return check_fidelity(str(task), task_where), "task"
    if config:
        return check_fidelity(str(config), ".stele/config.yaml: session.default_fidelity"), "config"
    return DEFAULT_FIDELITY, "default"


def trim(text: str, fidelity: str) -> str | None:
    """A stage's content under `fidelity` (None: not shown at all)."""
    limit = FIDELITIES[fidelity]
    if limit == 0:
        return None
    return text if limit is None else textcut.chars(text, limit, CUT_MARK)


@dataclass
class Stage:
    name: str
    text: str  # the latest visit's content, whole
    visits: int  # across every iteration
    entry: str  # the latest visit's entry id
    ts: str
    agent: str | None = None  # who wrote the latest visit (`session.author`)
    host: str | None = None  # where, when a teammate did (a team entry)


@dataclass
class Preamble:
    goal: str | None = None
    stages: list[Stage] = field(default_factory=list)
    steering: list[Entry] = field(default_factory=list)
    iteration: int = 1
    fidelity: str = DEFAULT_FIDELITY
    fidelity_source: str = "default"
    thread: str | None = None
    sessions: list[str] = field(default_factory=list)

    @property
    def shown_stages(self) -> list[tuple[Stage, str]]:
        if FIDELITIES[self.fidelity] == 0:
            return []
        return [(s, trim(s.text, self.fidelity) or "") for s in self.stages]

    @property
    def own_steering(self) -> list[Entry]:
        """This clone's steering: the operator's. A team entry (it carries a host) is a teammate's."""
        return [e for e in self.steering if not host_of(e)]

    def render_steering(self) -> str:
        """This operator's steering block alone: what a hook keeps whole when the preamble does not fit."""
        own = self.own_steering
        if not own:
            return ""
        return "\n".join([STEERING] + [f"- {_indent(e.text)}" for e in own]) + "\n"

    def render(self, steering: bool = True) -> str:
        """Plain, byte-stable text for the agent ('' when there is nothing to say); without the
        steering block when `steering` is False (`render_steering` gives it apart)."""
        shown = self.shown_stages
        own = self.own_steering if steering else []
        team = [e for e in self.steering if host_of(e)]
        if not (self.goal or shown or own or team):
            return ""
        where = f"thread {self.thread}, " if self.thread else ""
        out = [f"Session history ({where}iteration {self.iteration}, fidelity {self.fidelity})"]
        if self.goal:
            out.append("Goal: " + _indent(self.goal))
        if shown:
            out += ["", "Completed stages:"]
            for stage, text in shown:
                visits = f" ({stage.visits} visits)" if stage.visits > 1 else ""
                out.append(f"- {stage.name}{visits}{_by(stage.agent, stage.host)}: " + _indent(text))
        if own:
            out += ["", STEERING] + [f"- {_indent(e.text)}" for e in own]
        if team:
            out += ["", TEAM_STEERING] + [f"-{_by(agent_of(e), host_of(e))} " + _indent(e.text) for e in team]
        return "\n".join(out) + "\n"

    def as_dict(self) -> dict[str, Any]:
        return {
            "goal": self.goal, "thread": self.thread, "sessions": self.sessions, "iteration": self.iteration,
            "fidelity": self.fidelity, "fidelity_source": self.fidelity_source,
            "stages": [{"name": s.name, "text": text, "visits": s.visits, "truncated": text != s.text,
                        "entry": s.entry, "ts": s.ts, "agent": s.agent, "host": s.host}
                       for s, text in self.shown_stages],
            "steering": [{"id": e.id, "ts": e.ts, "text": e.text, "agent": agent_of(e), "host": host_of(e)}
                         for e in self.steering],
            "text": self.render(),
        }


def _by(agent: str | None, host: str | None) -> str:
    """` (agent@host)` after a teammate's stage or steering ("" for this clone's own)."""
    who = byline(agent, host)
    return f" ({who})" if who else ""


def _indent(text: str) -> str:
    return text.strip("\n").replace("\n", "\n  ")


def fold(entries: Iterable[Entry], fidelity: str = DEFAULT_FIDELITY,
         fidelity_source: str = "default") -> Preamble:
    """Build the preamble from entries in time order."""
    p = Preamble(fidelity=fidelity, fidelity_source=fidelity_source)
    visits: Counter = Counter()
    latest: dict[str, Entry] = {}  # insertion order = order of each stage's latest visit
    for e in entries:
        if event(e) == START and e.extra.get("goal"):
            p.goal = str(e.extra["goal"])  # a later start in the thread may restate the goal
        elif event(e) == RESTART:
            latest.clear()
            p.iteration += 1
        elif e.type == "stage":
            name = str(e.extra.get("stage") or "stage")
            visits[name] += 1
            latest.pop(name, None)
            latest[name] = e
        elif e.type == "steering":
            p.steering.append(e)
        if e.session not in p.sessions:
            p.sessions.append(e.session)
    p.stages = [Stage(name, e.text, visits[name], e.id, e.ts, agent_of(e), host_of(e)) for name, e in latest.items()]
    return p


def scope(project: Project, session: str | None = None, thread: str | None = None,
          report: wal.ReadReport | None = None) -> tuple[list[Entry], str | None, str | None]:
    """The entries a preamble covers, in time order, with the thread and the task they name. A session
    that belongs to a thread shares the whole thread's history (which means reading every log)."""
    if session is None and thread is None:
        raise UsageError("a preamble needs a session (--session or STELE_SESSION) or a --thread")
    if thread is None and session is not None:
        thread = identity(project, session).thread
    if thread is None:
        chosen = list(wal.read_all(project, report, session=session))
    else:
        every = list(wal.read_all(project, report))
        members = {e.session for e in every if event(e) == START and e.thread == thread}
        chosen = [e for e in every if e.session in members or e.thread == thread]
        if not chosen:
            raise SteleError(f"no session is in thread {thread!r}: start one with `stele session start "
                             f"--thread {thread}`")
    chosen.sort(key=order_key)  # stable: one millisecond's lines keep their file order
    task = next((e.task for e in chosen if event(e) == START and e.task), None) or next(
        (e.task for e in reversed(chosen) if e.task), None)
    return chosen, thread, task


def task_fidelity(project: Project, task_id: str) -> tuple[str | None, str]:
    """The optional `fidelity:` key of a task fact's frontmatter, and where it was read."""
    from ..record.load import load

    fact = load(project).facts.get(task_id)
    if fact is None or fact.doc is None:
        return None, "the task's fidelity"
    value = fact.doc.meta.get("fidelity")
    return (str(value) if value else None), f"{fact.path}: fidelity"


def for_scope(project: Project, session: str | None = None, thread: str | None = None,
              fidelity: str | None = None, task: str | None = None,
              report: wal.ReadReport | None = None) -> Preamble:
    entries, thread, scoped_task = scope(project, session, thread, report)
    task_id = (task or scoped_task or "").upper()
    task_value, task_where = task_fidelity(project, task_id) if task_id and not fidelity else (None, "")
    configured = project.config["session.default_fidelity"]
    value, source = resolve_fidelity(fidelity, task_value, configured, task_where)
    p = fold(entries, value, source)
    p.thread = thread
    if session and session not in p.sessions:
        p.sessions.insert(0, session)
    return p
