"""`stele hook pre-commit`: list the facts anchored to the staged changes before a commit is made.

Non-blocking by default (exit 0, the list on stdout). `--strict` blocks (exit 1) when a risk or
constraint anchored to the staged code is not itself staged: neither edited nor re-verified
(`stele verify ID` rewrites the fact file) in this commit. A fact with a `check:` (executable
constraints: anchors/codecheck.py) is held to its check instead: the staged change is checked, every
violation is printed with the fact, the file and the line (a warning without `--strict`, a block with
it), and a check that passes satisfies strict mode. A check that cannot run (a bad pattern, out of
time) is the fact's problem: it is said, it blocks nothing, and the fact falls back to the rule above;
so does a `command` check not allowed to run (retrieve/commandcheck.py: opt-in per clone, and only
from a fact identical to its version on the reviewed ref, `stele.reviewedRef` or origin/HEAD here).
Internal errors still fail open (see `dispatch.py`): a broken memory layer must never stop a commit.

Filenames after the event (the pre-commit framework passes them) narrow the staged change to those
files; with nothing staged (`pre-commit run --all-files`) they are matched as plain paths.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..kinds import FIRST_KINDS
from ..project import Project, find_root
from ..render import term
from ..render.anchored import checks_text, text
from ..retrieve import anchored, codechecks, commandcheck

if TYPE_CHECKING:
    from argparse import Namespace


def run(args: Namespace) -> int:
    root = find_root()
    if root is None:
        return 0
    project = Project(root)
    if not project.memory_dir.is_dir():
        return 0
    files = {f.replace("\\", "/") for f in args.extra if not f.startswith("-")}
    change = anchored.staged(root)
    if files:
        change = anchored.Change([d for d in change.files if files & set(d.paths)], change.new, change.old)
    if change.files:
        found = anchored.for_change(project, change)
        what = "the staged changes"
    elif files:
        found = anchored.for_paths(project, sorted(files))
        what = "these files"
    else:
        return 0
    gate = commandcheck.Gate(root)  # `command` checks: opt-in, reviewed facts only (asked only if one has some)
    outcomes = codechecks.on_change(project, change, found, gate) if change.files and found else []
    if found:
        term.write(text(found, what))
        term.write("Read one with `stele show ID`. If it still holds: `stele verify ID`.\n")
    said = checks_text(outcomes, what)
    if said and not args.strict:
        term.write(said)
    if not args.strict:
        return 0
    staged = {p for d in change.files for p in d.paths}
    checked = {o.fact.id for o in outcomes if not o.failures and not o.notes}
    violated = [o for o in outcomes if o.violations]
    blocking = [a.fact for a in found if a.fact.kind in FIRST_KINDS and a.fact.path not in staged
                and a.fact.id not in checked]
    if said:
        sys.stderr.write(said)
    if not blocking and not violated:
        return 0
    if violated:
        sys.stderr.write(f"stele: commit blocked (--strict): the staged change breaks the check of "
                         f"{', '.join(o.fact.id for o in violated)}; change the code, or change the fact in a "
                         "reviewed commit, or commit with --no-verify\n")
    if blocking:
        ids = ", ".join(f.id for f in blocking)
        sys.stderr.write(f"stele: commit blocked (--strict): {ids} anchored here but neither edited nor "
                         "re-verified in this commit; run `stele verify ID` (or edit the fact) and stage it, "
                         "or commit with --no-verify\n")
    return 1
