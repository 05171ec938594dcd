"""Whether one run did what its task expects, judged on what it left behind: each check by name, so
the report says which failed and why, never just "failed"."""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

from .suite import Expect
from .workspace import Change


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""

    def as_dict(self) -> dict:
        return {"check": self.name, "ok": self.ok, "detail": self.detail}


def _matches(path: str, patterns: list[str]) -> bool:
    return any(path == p or fnmatch.fnmatchcase(path, p) or path.startswith(p.rstrip("/") + "/") for p in patterns)


def judge(expect: Expect, tree: Path, change: Change, answer: str, turns: int, max_turns: int | None,
          env: dict[str, str]) -> list[Check]:
    checks: list[Check] = []
    for p in expect.touched:
        hit = [c for c in change.paths if _matches(c, [p])]
        checks.append(Check(f"touched {p}", bool(hit), "" if hit else "not changed"))
    for p in expect.not_touched:
        hit = [c for c in change.paths if _matches(c, [p])]
        checks.append(Check(f"not touched {p}", not hit, ", ".join(hit)))
    scoped = {path: lines for path, lines in change.added.items() if not expect.paths or _matches(path, expect.paths)}
    for pattern in expect.forbid:
        rx = re.compile(pattern)
        bad = [f"{path}: {line.strip()[:120]}" for path, lines in scoped.items() for line in lines if rx.search(line)]
        checks.append(Check(f"forbid /{pattern}/", not bad, "; ".join(bad[:3])))
    for pattern in expect.require:
        rx = re.compile(pattern)
        if expect.paths:
            files = [p for p in _tracked_or_changed(tree, change) if _matches(p, expect.paths)]
            missing = [p for p in files if not rx.search(_read(tree / p))]
            ok = bool(files) and not missing
            detail = "no file in paths" if not files else ", ".join(missing)
        else:
            ok = any(rx.search(line) for lines in change.added.values() for line in lines)
            detail = "" if ok else "no added line matches"
        checks.append(Check(f"require /{pattern}/", ok, detail))
    for cmd in expect.commands:
        checks.append(_command(cmd.run, cmd.timeout, tree, env))
    for fact_id in expect.cite:
        ok = re.search(rf"(?<![A-Za-z0-9-]){re.escape(fact_id)}(?![A-Za-z0-9])", answer) is not None
        checks.append(Check(f"cites {fact_id}", ok, "" if ok else "not in the final answer"))
    if max_turns is not None:
        checks.append(Check(f"turns <= {max_turns}", turns <= max_turns, f"{turns} turns"))
    return checks


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _tracked_or_changed(tree: Path, change: Change) -> list[str]:
    from .. import gitrepo

    return sorted(set(gitrepo.ls_files(tree)) | {p for p in change.paths if (tree / p).is_file()})


def _command(run: str, timeout: int, tree: Path, env: dict[str, str]) -> Check:
    from .process import run as run_process

    name = f"command `{run}`"
    code, out, err, timed_out = run_process(run, tree, env, timeout)
    if timed_out:
        return Check(name, False, f"timed out after {timeout} s")
    tail = (out + err).strip().splitlines()[-1:] or [""]
    return Check(name, code == 0, f"exit {code}: {tail[0][:200]}" if code else "")
