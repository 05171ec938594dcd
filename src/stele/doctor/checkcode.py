"""`stele doctor --check-code`: the facts' `check:` entries over the code, as findings (CI, SARIF).

With `--base REF` the change is the one `--base` measures everywhere (from the merge base of REF and
HEAD to the working tree: what a pull request shows): `forbid` looks at the lines it adds to anchored
files, `require` at each anchored file it touches. Without a base there is no change to look at, so
the code as it stands is checked: every line of every anchored file counts, which is what a scheduled
CI job or a first adoption wants to know. A violation is an error when its fact says `enforce: deny`,
else a warning (`--strict` fails on those too); a check that cannot run is a `bad-check` warning on
the fact, never a violation. A `command` check runs as retrieve/commandcheck.py allows (opt-in per
clone; the fact identical to its version on the reviewed ref: `--base REF` itself when given, else
`stele.reviewedRef` or origin/HEAD); one not allowed to run is a note (level `note` in SARIF), which
fails nothing, not even `--strict`: a pull request that adds a command check is not held up by it.
"""
from __future__ import annotations

from .. import gitrepo
from ..anchors import codecheck
from ..anchors.resolve import WorkTree
from ..record.load import Record
from ..retrieve import anchored, codechecks, commandcheck
from .findings import Finding


def check(record: Record, base: str | None) -> list[Finding]:
    project = record.project
    facts = [f for f in record.facts.values() if f.checks]
    if not facts:
        return []
    if base is None:
        outcomes = codechecks.on_tree(project, facts, WorkTree(project.root), commandcheck.Gate(project.root))
    else:
        root = project.root
        base_sha = gitrepo.require_commit(root, base, "--base")
        head = gitrepo.rev_parse(root, "HEAD")
        since = gitrepo.merge_base(root, base_sha, head) if head else base_sha
        change = anchored.Change(gitrepo.diff(root, ref=since), None, since)
        found = anchored.for_change(project, change, facts=facts)
        outcomes = codechecks.on_change(project, change, found, commandcheck.Gate(root, base), codecheck.CI_BUDGET)
    findings = []
    for o in outcomes:
        f = o.fact
        for v in o.violations:
            findings.append(Finding("code-check", v.path, v.line, f"breaks {f.kind} {f.id} ({f.title}): {v.what()}",
                                    f.id, "error" if v.check.enforce == "deny" else "warning"))
        doc = getattr(f, "doc", None)
        line = doc.line_of("check") if doc is not None else 1
        findings += [Finding("bad-check", f.path, line, f"{f.id}: {why}; the check was not run", f.id)
                     for why in o.failures]
        findings += [Finding("bad-check", f.path, line, f"{f.id}: {why}", f.id, "note") for why in o.notes]
    return findings
