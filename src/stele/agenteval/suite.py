"""The suite file of `stele eval --agent` (docs/eval.md): tasks with a prompt, an optional starting
point, and outcome checks on what the agent did.

Checks mirror a fact's `check:` (issue 29): `forbid` patterns no added line may match, `require`
patterns that must still match; both confined to `paths` when given (a constraint's anchored files),
so a fact's `check:` mapping can be pasted under `expect:` as it is. Bad input is refused with one
line naming the file, the task and the key.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

TASK_KEYS = frozenset({"id", "prompt", "setup", "expect", "max_turns", "timeout", "about", "note"})
EXPECT_KEYS = frozenset({"touched", "not_touched", "forbid", "require", "paths", "commands", "cite", "check"})
CHECK_KEYS = frozenset({"forbid", "require", "paths", "in", "note", "enforce", "command", "commands"})
DEFAULT_TIMEOUT = 600  # seconds a task's run may take
COMMAND_TIMEOUT = 300  # seconds an outcome command may take
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass
class Command:
    run: str
    timeout: int = COMMAND_TIMEOUT


@dataclass
class Expect:
    touched: list[str] = field(default_factory=list)  # each path or glob must be changed
    not_touched: list[str] = field(default_factory=list)  # none of these may be changed
    forbid: list[str] = field(default_factory=list)  # no added line (in `paths`) may match
    require: list[str] = field(default_factory=list)  # with `paths`: each file must match; else an added line
    paths: list[str] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)  # must exit 0 afterwards
    cite: list[str] = field(default_factory=list)  # ids the final answer must name

    def empty(self) -> bool:
        return not (self.touched or self.not_touched or self.forbid or self.require or self.commands or self.cite)


@dataclass
class Task:
    id: str
    prompt: str
    expect: Expect
    branch: str | None = None  # start from this ref instead of the current commit
    patch: str | None = None  # a patch file (relative to the suite) applied before the run
    max_turns: int | None = None
    timeout: int = DEFAULT_TIMEOUT
    about: str = ""  # the fact the task tempts, for the report


@dataclass
class Suite:
    path: Path
    tasks: list[Task]


def _strings(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise UsageError(f"{where}: give a string or a list of strings")


def _patterns(value: Any, where: str) -> list[str]:
    out = _strings(value, where)
    for p in out:
        try:
            re.compile(p)
        except re.error as e:
            raise UsageError(f"{where}: {p!r} is not a regular expression ({e})") from None
    return out


def _int(value: Any, where: str, default: int | None) -> int | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise UsageError(f"{where}: give a positive whole number")
    return value


def _commands(value: Any, where: str) -> list[Command]:
    out = []
    for i, item in enumerate(value if isinstance(value, list) else [value] if value is not None else []):
        if isinstance(item, str):
            out.append(Command(item))
        elif isinstance(item, dict) and isinstance(item.get("run"), str) and set(item) <= {"run", "timeout"}:
            out.append(Command(item["run"], _int(item.get("timeout"), f"{where}[{i}].timeout", COMMAND_TIMEOUT) or 0))
        else:
            raise UsageError(f"{where}[{i}]: give a command line, or a mapping with `run:` (and `timeout:`)")
    return out


def _expect(raw: Any, where: str) -> Expect:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: give a mapping of checks ({', '.join(sorted(EXPECT_KEYS))})")
    unknown = sorted(set(raw) - EXPECT_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(EXPECT_KEYS))})")
    exp = Expect(touched=_strings(raw.get("touched"), f"{where}.touched"),
                 not_touched=_strings(raw.get("not_touched"), f"{where}.not_touched"),
                 forbid=_patterns(raw.get("forbid"), f"{where}.forbid"),
                 require=_patterns(raw.get("require"), f"{where}.require"),
                 paths=_strings(raw.get("paths"), f"{where}.paths"),
                 commands=_commands(raw.get("commands"), f"{where}.commands"),
                 cite=_strings(raw.get("cite"), f"{where}.cite"))
    check = raw.get("check")
    if check is not None:  # a fact's `check:` mapping, pasted as it is
        if not isinstance(check, dict):
            raise UsageError(f"{where}.check: give the fact's `check:` mapping (forbid, require)")
        unknown = sorted(set(check) - CHECK_KEYS)
        if unknown:
            raise UsageError(f"{where}.check: unknown key {unknown[0]!r} (known: forbid, require, paths)")
        exp.forbid += _patterns(check.get("forbid"), f"{where}.check.forbid")
        exp.require += _patterns(check.get("require"), f"{where}.check.require")
        exp.paths += _strings(check.get("paths", check.get("in")), f"{where}.check.paths")
    return exp


def parse(data: Any, path: Path) -> Suite:
    """The suite in `data` (the YAML loaded from `path`), checked whole before anything runs."""
    where = str(path)
    if isinstance(data, list):
        data = {"tasks": data}
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list) or not data["tasks"]:
        raise UsageError(f"{where}: give a mapping with a non-empty `tasks:` list (docs/eval.md)")
    unknown = sorted(set(data) - {"tasks", "timeout", "note"})
    if unknown:
        raise UsageError(f"{where}: unknown top-level key {unknown[0]!r} (known: tasks, timeout)")
    default_timeout = _int(data.get("timeout"), f"{where}: timeout", DEFAULT_TIMEOUT) or DEFAULT_TIMEOUT
    tasks: list[Task] = []
    for n, raw in enumerate(data["tasks"]):
        at = f"{where}: task {n + 1}"
        if not isinstance(raw, dict):
            raise UsageError(f"{at}: give a mapping with id, prompt and expect")
        tid = raw.get("id")
        if not isinstance(tid, str) or not _ID.match(tid):
            raise UsageError(f"{at}: `id` is missing or not a plain name (letters, digits, - _ .)")
        at = f"{where}: task {tid}"
        if tid in {t.id for t in tasks}:
            raise UsageError(f"{at}: the id is used twice")
        unknown = sorted(set(raw) - TASK_KEYS)
        if unknown:
            raise UsageError(f"{at}: unknown key {unknown[0]!r} (known: {', '.join(sorted(TASK_KEYS))})")
        prompt = raw.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise UsageError(f"{at}: `prompt` is missing: give the request the agent gets")
        setup = raw.get("setup") or {}
        if not isinstance(setup, dict) or set(setup) - {"branch", "patch"} or not all(
                isinstance(v, str) for v in setup.values()):
            raise UsageError(f"{at}: `setup` takes `branch: REF` or `patch: FILE`")
        if "patch" in setup and not (path.parent / setup["patch"]).is_file():
            raise UsageError(f"{at}: setup.patch {setup['patch']!r} is not a file (relative to the suite)")
        expect = _expect(raw.get("expect"), f"{at}: expect")
        max_turns = _int(raw.get("max_turns"), f"{at}: max_turns", None)
        if expect.empty() and max_turns is None:
            raise UsageError(f"{at}: `expect` has no check: name what the agent must (not) do")
        about = raw.get("about") or ""
        if not isinstance(about, str):
            raise UsageError(f"{at}: `about` is a fact id")
        tasks.append(Task(tid, prompt, expect, setup.get("branch"),
                          str((path.parent / setup["patch"]).resolve()) if "patch" in setup else None,
                          max_turns, _int(raw.get("timeout"), f"{at}: timeout", default_timeout) or 0, about))
    return Suite(path, tasks)


def load(path: Path) -> Suite:
    from ..config import load_yaml

    if not path.is_file():
        raise UsageError(f"{path}: no such suite file (write one, or start from `stele eval --agent --init`)")
    return parse(load_yaml(path.read_text(encoding="utf-8"), str(path)), path)
