"""Per-session hook state and the pause switch, under `.stele/state/hooks/`.

A session's state remembers what its hooks already did: the ids put in front of the model (never
injected twice), those of them delivered as a risk callout (never called out twice; a risk only
listed may be called out once later: `retrieve.delivered`), the files it edited, and which one-time
nudges it got. Harnesses run hooks in
parallel (Claude Code runs all matching handlers at once, and parallel tool calls fire parallel
PreToolUse hooks), so every change is read-modify-write under an exclusive `flock`, written to a
temporary file and renamed into place: a reader sees the old state or the new one, never half, and
two writers never lose each other's ids. Reads take no lock. State is per machine and disposable:
a missing or unreadable file is an empty state.

Version 2 added `warned`. A version-1 file did not say in which form it delivered its ids, so each is
read as delivered in both (`warned` = `injected`): nothing it delivered is listed or called out again,
as before, and only a later callout of a risk it listed is forgone. Version 1 code reading a version-2
file ignores `warned`.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import atomic
from ..plain import asdict, dataclass, field, fields
from ..project import Project
from ..retrieve.delivered import Delivered

VERSION = 2


@dataclass
class SessionState:
    started: float = 0.0  # when a hook first saw this session (unix time)
    injected: list[str] = field(default_factory=list)  # ids already put in front of the model, in any form
    warned: list[str] = field(default_factory=list)  # those of them delivered as a risk callout
    edited: list[str] = field(default_factory=list)  # repo-relative paths the session changed
    edit_nudged: bool = False
    stop_nudged: bool = False
    held: list[str] = field(default_factory=list)  # ids an edit was held for once (hooks.hold_edits)
    stele_session: str | None = None  # the Stele session (STELE_SESSION) this harness session works in
    rules_claimed: bool = False  # a hook took on the standing rules (`claim(..., rules=True)`)

    def add_injected(self, ids) -> None:
        self.injected += [i for i in dict.fromkeys(ids) if i not in self.injected]

    def add_warned(self, ids) -> None:
        """Ids delivered as a risk callout (delivered, so injected too)."""
        self.add_injected(ids)
        self.warned += [i for i in dict.fromkeys(ids) if i not in self.warned]

    def delivered(self) -> Delivered:
        return Delivered(frozenset(self.injected), frozenset(self.warned))

    def forget(self) -> None:
        """Nothing delivered is in the model's context any more (a cleared or compacted session)."""
        self.injected, self.warned = [], []

    def add_edited(self, paths) -> None:
        from ..redact import redact

        clean = [redact(p).text for p in dict.fromkeys(paths)]  # a path can carry a token (/tmp/ghp_...)
        self.edited += [p for p in dict.fromkeys(clean) if p not in self.edited]


def hooks_dir(project: Project) -> Path:
    return project.state_dir / "hooks"


def session_path(project: Project, session: str) -> Path:
    return hooks_dir(project) / "sessions" / f"{session}.json"


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict) -> None:
    """Whole, but not fsynced: disposable per-machine state does not need the durability (p90 ~8 ms
    a write against 0.3 ms without). Callers hold the file's lock."""
    atomic.write(path, json.dumps(data, ensure_ascii=False), durable=False)


def _locked(path: Path):
    return atomic.locked(path.with_suffix(".lock"))


def _from_dict(data: dict) -> SessionState:
    known = {f.name for f in fields(SessionState)}
    state = SessionState(**{k: v for k, v in data.items() if k in known})
    for name in ("injected", "warned", "edited", "held"):
        if not isinstance(getattr(state, name), list):
            setattr(state, name, [])
    if "warned" not in data:  # version 1: the forms were not told apart, so each id counts as both
        state.warned = list(state.injected)
    return state


def load(project: Project, session: str | None) -> SessionState:
    """The session's state (empty without a session: nothing is remembered then)."""
    if session is None:
        return SessionState()
    return _from_dict(_read_json(session_path(project, session)))


@contextmanager
def update(project: Project, session: str | None) -> Iterator[SessionState]:
    """Change a session's state atomically: yields the current state, writes it back on exit."""
    if session is None:
        yield SessionState()
        return
    path = session_path(project, session)
    with _locked(path):
        state = _from_dict(_read_json(path))
        if not state.started:
            state.started = time.time()
        yield state
        _write_json(path, {"v": VERSION, **asdict(state)})


def claim(project: Project, session: str, ids: list[str], known: Delivered, rules: bool = False,
          risks: frozenset[str] = frozenset()) -> tuple[list[str], Delivered]:
    """Record `ids` as shown to the session (`risks`, those of them called out, as warned) and return
    them, less those another hook of the session delivered in the same form since this one read the
    state (`known` is what it read then), with what the state did not hold before (what to give back
    if the cap cuts them): harnesses run hooks at the same moment (Copilot CLI runs the prompt hook
    while the session-start hook is still running), so which of two hooks shows a fact is decided
    here, under the lock, and never by two reads. `rules`: the ids are the standing rules, and the
    session's state says they were taken on (the prompt hook carries them only while no hook has)."""
    with update(project, session) as st:
        now = st.delivered()
        taken = Delivered(now.shown - known.shown, now.warned - known.warned)
        mine = taken.new(ids, risks)
        added = Delivered(frozenset(i for i in mine if i not in now.shown),
                          frozenset(i for i in mine if i in risks and i not in now.warned))
        st.add_injected(mine)
        st.add_warned([i for i in mine if i in risks])
        st.rules_claimed = st.rules_claimed or rules
    return mine, added


def settle(project: Project, session: str, shown: Delivered, unshown: Delivered) -> None:
    """After the cap: add what a hook delivered without claiming it, and give back what its claim
    added that the cap cut (not delivered, so a later hook may deliver it)."""
    with update(project, session) as st:
        st.add_injected(sorted(shown.shown))
        st.add_warned(sorted(shown.warned))
        st.injected = [i for i in st.injected if i not in unshown.shown]
        st.warned = [i for i in st.warned if i not in unshown.warned]


# The pause switch: `stele pause [--turns N]` / `stele resume-hooks`. Per checkout, not per session
# (the person typing `stele pause` has no session id).

def pause_path(project: Project) -> Path:
    return hooks_dir(project) / "pause.json"


def pause(project: Project, turns: int | None = None) -> None:
    """Silence the context hooks: for the next `turns` prompts, or until `resume` when None."""
    path = pause_path(project)
    with _locked(path):
        _write_json(path, {"v": VERSION, "turns": turns, "since": time.time()})


def resume(project: Project) -> bool:
    """Turn the hooks back on; False when they were not paused."""
    path = pause_path(project)
    with _locked(path):
        try:
            path.unlink()
        except FileNotFoundError:
            return False
    return True


def paused(project: Project) -> dict | None:
    """The pause in force, or None."""
    data = _read_json(pause_path(project))
    return data if data else None


def consume_paused_turn(project: Project) -> bool:
    """For a prompt: True when paused (one counted turn is used up; the last one lifts the pause)."""
    path = pause_path(project)
    if not path.exists():
        return False
    with _locked(path):
        data = _read_json(path)
        if not data:
            return False
        turns = data.get("turns")
        if isinstance(turns, int) and not isinstance(turns, bool):
            if turns <= 1:
                path.unlink(missing_ok=True)
            else:
                _write_json(path, {**data, "turns": turns - 1})
    return True
