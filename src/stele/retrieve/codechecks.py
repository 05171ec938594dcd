"""Executable constraints applied: the live facts with a `check:` anchored to a change (or to the code
as it stands), and what their checks find there. The pre-commit hook and `stele doctor --check-code`
ask here; the pre-edit hook evaluates the proposed content itself (it must not load the record).

What a check covers has one home, here: `forbid` looks at the lines a change adds to a file the fact
is anchored to (for a symbol anchor, only those inside the symbol, when it can be located), `require`
at each such file as the change leaves it. Without a change (`on_tree`), every line of the anchored
files counts as added: the code as it stands must respect the fact. The matching itself, with its
limits on untrusted patterns, is `anchors/codecheck.py`; each fact's checks take one `codecheck.turn`
(reading its files included), so a slow fact spends its share of the run, not the others'. A
`command` check (bounded by its own `timeout`, run after all the patterns so that its seconds are
not taken from theirs) runs once per fact whose
anchored files are in question, only where the caller passes a `commandcheck.Gate` (pre-commit and
doctor; never the pre-edit hook) and only as that module allows (opt-in, reviewed facts only).
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .. import gitrepo, treefile
from ..anchors import codecheck, symbols
from ..anchors.codecheck import Check, Violation
from ..anchors.paths import glob_regex, is_glob, literal_dir, normalize, split
from ..kinds import CLOSED_STATUSES
from ..plain import dataclass, field
from ..project import Project
from . import commandcheck
from .anchored import Anchored, Change, Hit, order

if TYPE_CHECKING:
    from ..anchors.resolve import Tree
    from ..record.model import Fact
    from .anchored import Head


@dataclass
class Outcome:
    """One fact's checks over the code in question."""
    fact: Head
    checks: list[Check]
    violations: list[Violation] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # checks that could not run: the fact's problem
    notes: list[str] = field(default_factory=list)  # checks not run by design (a command not allowed here)

    @property
    def deny(self) -> bool:
        return any(v.check.enforce == "deny" for v in self.violations)


def checks_of(project: Project, heads: Iterable[Head]) -> dict[str, list[Check]]:
    """id -> the valid checks of each fact that has some: a parsed fact carries them, a catalog row's
    are in the catalog."""
    out: dict[str, list[Check]] = {}
    rows: list[str] = []
    for head in heads:
        own = getattr(head, "checks", None)
        if own is not None:
            out[head.id] = list(own)
        else:
            rows.append(head.id)
    if rows:
        from ..index.handle import open_catalog

        catalog = open_catalog(project)
        try:
            out.update((i, codecheck.load(spec)) for i, spec in catalog.checks(rows).items())
        finally:
            catalog.close()
    return {i: c for i, c in out.items() if c}


def on_change(project: Project, change: Change, found: list[Anchored],
              commands: commandcheck.Gate | None = None, seconds: float | None = None) -> list[Outcome]:
    """The checks of the facts in `found` (`anchored.for_change` of `change`) over that change, all of
    their patterns in at most `seconds` (codecheck.budget; default COMMIT_BUDGET), each fact in its
    share of them; their `command` checks too when `commands` is given."""
    with_checks = checks_of(project, (a.fact for a in found))
    relevant = [a for a in found if a.fact.id in with_checks]
    if not relevant:
        return []
    diffs = {d.path: d for d in change.files if d.status not in ("D", "B")}
    texts = _new_texts(project.root, change, sorted({h.file for a in relevant for h in a.hits if h.file in diffs}))
    work: list[tuple[Anchored, list[tuple[str, str, list[tuple[int, int]]]]]] = []
    for a in relevant:
        files = []
        for path, hits in _by_file(a.hits).items():
            diff, text = diffs.get(path), texts.get(path)
            if diff is not None and text is not None:
                files.append((path, text, _within([r for r in diff.new_ranges if r[1] >= r[0]], hits)))
        work.append((a, files))
    out = []
    with codecheck.budget(codecheck.COMMIT_BUDGET if seconds is None else seconds, sum(bool(f) for _, f in work)):
        for a, files in work:
            outcome = Outcome(a.fact, with_checks[a.fact.id])
            with codecheck.turn(a.fact.path):
                for path, text, ranges in files:
                    _apply(outcome, path, text, ranges)
            out.append(outcome)
    for outcome, (_, files) in zip(out, work, strict=True):  # after the patterns: a command's seconds are not theirs
        if files:
            _commands(project, outcome, files[0][0], commands)
    return out


def on_tree(project: Project, facts: Iterable[Fact], tree: Tree,
            commands: commandcheck.Gate | None = None, seconds: float | None = None) -> list[Outcome]:
    """The checks of every live fact that has some over its anchored files as they are in `tree`, all
    of their patterns in at most `seconds` (codecheck.budget; default CI_BUDGET), each fact in its
    share of them; their `command` checks too when `commands` is given."""
    work = [(fact, _by_file(_expand(fact.anchors, tree))) for fact in facts
            if fact.checks and fact.status not in CLOSED_STATUSES]
    out = []
    with codecheck.budget(codecheck.CI_BUDGET if seconds is None else seconds, sum(bool(f) for _, f in work)):
        for fact, by_file in work:
            outcome = Outcome(fact, list(fact.checks))
            with codecheck.turn(fact.path):
                for path, hits in by_file.items():
                    if _stopped(outcome):  # the fact's share (or the run's budget) is spent: not even read
                        break
                    text = tree.read(path)
                    if text is None:
                        continue
                    whole = [(1, text.count("\n") + 1)]
                    if all(h.lines for h in hits):  # symbol anchors only: their lines, located in this text
                        found = [symbols.find(text, split(h.anchor)[1] or "", path) for h in hits]
                        spans = [s for s in found if s is not None]
                        whole = spans or whole  # a symbol not found: the file (doctor reports the anchor)
                    _apply(outcome, path, text, whole)
            out.append(outcome)
    for outcome, (_, by_file) in zip(out, work, strict=True):  # after the patterns: a command's seconds are not theirs
        if by_file:
            _commands(project, outcome, min(by_file), commands)
    return order_outcomes(out)


def order_outcomes(outcomes: list[Outcome]) -> list[Outcome]:
    ranked = order(Anchored(o.fact) for o in outcomes)
    by_id = {o.fact.id + "\0" + o.fact.path: o for o in outcomes}
    return [by_id[a.fact.id + "\0" + a.fact.path] for a in ranked]


def _apply(outcome: Outcome, path: str, text: str, ranges: list[tuple[int, int]]) -> None:
    if _stopped(outcome):  # not even the lines are numbered
        return
    violations, failures = codecheck.evaluate(outcome.checks, path, codecheck.numbered(text, ranges), text)
    outcome.violations += violations
    outcome.failures += [f for f in failures if f not in outcome.failures]


def _stopped(outcome: Outcome) -> bool:
    """Whether the run's budget or this fact's share of it is spent (said once in the outcome)."""
    spent = codecheck.spent()
    if spent and spent not in outcome.failures:
        outcome.failures.append(spent)
    return spent is not None


def _commands(project: Project, outcome: Outcome, where: str, gate: commandcheck.Gate | None) -> None:
    """Run the fact's `command` checks, as the gate allows: a non-zero exit is a violation on `where`
    (the first anchored file in question), a command that cannot run the fact's problem, a command not
    allowed to run a note saying why."""
    if gate is None or not any(c.mode == "command" for c in outcome.checks):
        return
    checks, why = commandcheck.reviewed_commands(project.root, outcome.fact.path, gate)
    if why:
        outcome.notes.append(f"`check` command not run: {why}")
    for check in checks:
        try:
            found = commandcheck.run(project.root, check, where)
        except codecheck.CheckError as e:
            outcome.failures.append(f"`check` command {check.spelled} {e}")
        else:
            outcome.violations += [found] if found else []


def _by_file(hits: Iterable[Hit]) -> dict[str, list[Hit]]:
    out: dict[str, list[Hit]] = {}
    for hit in hits:
        out.setdefault(hit.file, []).append(hit)
    return out


def _within(ranges: list[tuple[int, int]], hits: list[Hit]) -> list[tuple[int, int]]:
    """The parts of the added `ranges` a fact's hits in one file cover: all of them when one hit is the
    whole file (or a symbol that could not be located), else those inside the symbols' lines."""
    spans = [h.lines for h in hits]
    if not all(spans):
        return ranges
    out = []
    for start, end in ranges:
        for span in spans:
            assert span is not None
            lo, hi = max(start, span[0]), min(end, span[1])
            if lo <= hi:
                out.append((lo, hi))
    return sorted(set(out))


def _expand(anchors: Iterable[str], tree: Tree) -> list[Hit]:
    """Each anchor as hits on the files it covers in `tree` (a symbol anchor marked by `lines=(0, 0)`
    until its text is read; see `on_tree`)."""
    hits = []
    for anchor in anchors:
        path, symbol = split(anchor)
        path = normalize(path)
        if is_glob(path):
            rx = glob_regex(path)
            files = [f for f in tree.under(literal_dir(path)) if rx.match(f)]
        elif tree.exists(path):
            files = [path]
        else:
            files = tree.under(path)  # a folder (nothing when the anchor is broken)
        hits += [Hit(anchor, f, (0, 0) if symbol is not None else None) for f in files]
    return hits


def _new_texts(root: Path, change: Change, paths: list[str]) -> dict[str, str | None]:
    """The files as `change` leaves them: the working tree, the index (`:`) or a commit."""
    if change.new is None:
        out: dict[str, str | None] = {}
        for p in paths:
            try:
                out[p] = treefile.read_text(root / p, errors="replace", root=root)
            except OSError:
                out[p] = None
        return out
    rev = "" if change.new == ":" else change.new
    blobs = gitrepo.read_blobs(root, [f"{rev}:{p}" for p in paths])
    return {p: (b.decode("utf-8", "replace") if (b := blobs.get(f"{rev}:{p}")) is not None else None)
            for p in paths}
