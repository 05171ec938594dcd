"""`stele review`: what changed in the record between two revisions, the way a team accepts new truth.

A pull request that changes memory is a claim about the project. The reviewer needs: what is new
(risks and constraints first, since they constrain everyone), what was edited and how, what was
replaced and by what, what was retired and why, which anchors were added or broke, which lifecycle
rules were bent, and which code changed under facts that did not change with it.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

from .. import gitrepo
from ..anchors.resolve import CommitTree, resolve
from ..errors import SteleError, UsageError
from ..kinds import ENDED_STATUSES, FIRST_KINDS
from ..project import Project
from ..record.load import load_at
from ..record.model import Fact
from ..retrieve import anchored
from ..retrieve.cochange import ACK_TRAILER, CoChange, cochanges, parse_acks

RULE_KINDS = ("instruction", "constraint")
SKIPPED_FIELDS = ("id", "path", "summary", "body", "fingerprints")  # fingerprints: Stele's bookkeeping


@dataclass
class Edit:
    before: Fact
    after: Fact
    fields: list[tuple[str, object, object]]  # (field, before, after), body excluded
    body_diff: list[str]


@dataclass
class Review:
    base: str
    head: str
    label: str
    added: list[Fact] = field(default_factory=list)
    edited: list[Edit] = field(default_factory=list)
    superseded: list[tuple[Fact, list[Fact]]] = field(default_factory=list)
    retired: list[tuple[Fact, str]] = field(default_factory=list)
    anchors_added: list[tuple[Fact, str]] = field(default_factory=list)
    anchors_broken: list[tuple[Fact, str, str]] = field(default_factory=list)
    violations: list[tuple[str, str]] = field(default_factory=list)  # (fact id, message)
    # (fact, line, check, message): what in an added or edited file could steer an agent or a terminal
    untrusted: list[tuple[Fact, int, str, str]] = field(default_factory=list)
    untouched: list[CoChange] = field(default_factory=list)

    @property
    def rules_changed(self) -> list[Fact]:
        """Instructions and constraints this change adds or edits: injected into every session, so
        listed first, with what doctor finds in them."""
        return [f for f in [*self.added, *(e.after for e in self.edited)] if f.kind in RULE_KINDS]

    @property
    def new_risks(self) -> list[Fact]:
        return [f for f in self.added if f.kind in FIRST_KINDS]

    def as_dict(self) -> dict:
        brief = lambda f: {"id": f.id, "kind": f.kind, "title": f.title, "status": f.status, "path": f.path}  # noqa: E731
        return {
            "version": 1, "base": self.base, "head": self.head, "range": self.label,
            "rules_changed": [{**brief(f), "findings": [{"line": line, "check": check, "message": m}
                                                        for g, line, check, m in self.untrusted if g is f]}
                              for f in self.rules_changed],
            "added": [{**brief(f), "anchors": f.anchors} for f in self.added],
            "edited": [{**brief(e.after), "fields": [{"field": k, "before": _plain(a), "after": _plain(b)}
                                                     for k, a, b in e.fields], "body_diff": e.body_diff}
                       for e in self.edited],
            "superseded": [{**brief(f), "by": [brief(r) for r in by]} for f, by in self.superseded],
            "retired": [{**brief(f), "reason": why} for f, why in self.retired],
            "anchors_added": [{"id": f.id, "anchor": a} for f, a in self.anchors_added],
            "anchors_broken": [{"id": f.id, "anchor": a, "why": why} for f, a, why in self.anchors_broken],
            "violations": [{"id": fid, "message": m} for fid, m in self.violations],
            "untrusted": [{"id": f.id, "path": f.path, "line": line, "check": check, "message": m}
                          for f, line, check, m in self.untrusted],
            "code_changes_without_fact": [
                {**c.entry.as_dict(), "ack": {"commit": c.ack[0], "reason": c.ack[1]} if c.ack else None}
                for c in self.untouched],
        }


def _plain(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


def default_base(root) -> str:
    """The pull request's base under GitHub Actions, else the upstream, else main or master."""
    candidates = []
    if os.environ.get("GITHUB_BASE_REF"):
        candidates.append(f"origin/{os.environ['GITHUB_BASE_REF']}")
    candidates += ["@{upstream}", "origin/HEAD", "main", "master"]
    for ref in candidates:
        if gitrepo.rev_parse(root, ref):
            return ref
    raise UsageError("no base to review against: pass a range, e.g. `stele review main..HEAD`")


def revisions(project: Project, spec: str | None) -> tuple[str, str, str]:
    """(base sha, head sha, label) for `BASE..HEAD`, `BASE...HEAD` (merge base) or `BASE` (= BASE..HEAD)."""
    root = project.root
    if not spec:
        spec = f"{default_base(root)}...HEAD"
    if ".." not in spec:
        spec = f"{spec}..HEAD"
    old, new = anchored.revisions(root, spec, "range")
    if new is None:  # unreachable: a range always names its head
        raise SteleError(f"range {spec!r} has no head revision")
    return old, new, spec


def review(project: Project, spec: str | None = None) -> Review:
    old, new, label = revisions(project, spec)
    before, after = load_at(project, old), load_at(project, new)
    out = Review(old[:7], new[:7], label)
    for fid, fact in sorted(after.facts.items(), key=lambda kv: (kv[1].kind not in FIRST_KINDS, kv[0])):
        prev = before.facts.get(fid)
        if prev is None:
            out.added.append(fact)
            out.anchors_added += [(fact, a) for a in fact.anchors]
            continue
        out.anchors_added += [(fact, a) for a in fact.anchors if a not in prev.anchors]
        if fact.status == "superseded" and prev.status != "superseded":
            by = [f for f in after.facts.values() if fid in f.links.get("supersedes", [])]
            out.superseded.append((fact, by))
        elif fact.status == "retired" and prev.status != "retired":
            out.retired.append((fact, _retire_reason(prev, fact)))
        else:
            edit = _edit(prev, fact)
            if edit is not None:
                out.edited.append(edit)
                if prev.status in ENDED_STATUSES and fact.status in ENDED_STATUSES:
                    out.violations.append((fid, f"{fid} is {prev.status} and was edited: history is not "
                                           "rewritten"))
                elif prev.status in ENDED_STATUSES:
                    out.violations.append((fid, f"{fid} was {prev.status} and is {fact.status} again: "
                                           "write a new fact instead of reviving it"))
    for fid, fact in sorted(before.facts.items()):
        if fid not in after.facts:
            out.violations.append((fid, f"{fid} ({fact.kind}: {fact.title}) was deleted: retire or supersede "
                                   "facts instead, so the record keeps why they stopped holding"))
    from .basecheck import knowledge_edited

    out.violations += [(f.fact or "", f.message) for f in knowledge_edited(before, after, out.base)]
    out.untrusted = _untrusted(project, new, [*out.added, *(e.after for e in out.edited)])
    out.anchors_broken = _broken(project, old, new, before, after)
    acks = parse_acks(gitrepo.trailers(project.root, f"{old}..{new}", ACK_TRAILER))
    change = anchored.Change(gitrepo.diff(project.root, ref=f"{old}..{new}"), new, old)
    out.untouched = [c for c in cochanges(project, change, before, after, acks)
                     if not (c.edited or c.verified)]
    return out


def _untrusted(project: Project, rev: str, facts: list[Fact]) -> list[tuple[Fact, int, str, str]]:
    """doctor's untrusted-input and secret checks on the files a change adds or edits, as committed."""
    from ..neutralize import suspects
    from ..redact import Redactor
    from .untrusted import parsed_values

    blobs = gitrepo.read_blobs(project.root, [f"{rev}:{f.path}" for f in facts])
    redactor, found = Redactor(project.config["redaction.patterns"]), []
    for fact in facts:
        text = (blobs.get(f"{rev}:{fact.path}") or b"").decode("utf-8", "replace")
        hits = [(s.offset, s.check, s.message) for s in suspects(text, kind=fact.kind,
                                                                   max_line=project.config["doctor.long_line"])]
        hits += [(offset, "secret", f"{kind}: remove it and rotate the credential")
                 for kind, offset in redactor.find(text)]
        found += [(fact, text.count("\n", 0, offset) + 1, check, m) for offset, check, m in sorted(hits)]
        found += [(fact, f.line, f.check, f.message)
                  for f in parsed_values(fact, text, fact.path, {c for _, c, _ in hits},
                                         project.config["doctor.long_line"])]
    return found


def _edit(prev: Fact, fact: Fact) -> Edit | None:
    a, b = prev.as_dict(), fact.as_dict()
    fields = [(k, a[k], b[k]) for k in a if k not in SKIPPED_FIELDS and a[k] != b[k]]
    body = [line.rstrip("\n") for line in difflib.unified_diff(prev.body.splitlines(), fact.body.splitlines(),
                                                               lineterm="", n=1)][2:]
    if prev.summary != fact.summary:
        fields.append(("summary", prev.summary, fact.summary))
    return Edit(prev, fact, fields, body) if fields or body else None


def _retire_reason(prev: Fact, fact: Fact) -> str:
    added = [line for line in fact.body.splitlines() if line not in prev.body.splitlines()]
    reason = next((line for line in added if line.startswith("Retired ")), " ".join(added))
    return reason.strip()


def _broken(project: Project, old: str, new: str, before, after) -> list[tuple[Fact, str, str]]:
    """Anchors of live facts that resolve at the base (or are new) but not at the head."""
    head_tree, base_tree = CommitTree(project.root, new), CommitTree(project.root, old)
    found = []
    for fid, fact in sorted(after.facts.items()):
        if fact.status in ENDED_STATUSES:
            continue
        prev = before.facts.get(fid)
        for anchor in fact.anchors:
            res = resolve(anchor, head_tree)
            if res.ok:
                continue
            was_new = prev is None or anchor not in prev.anchors
            if was_new or resolve(anchor, base_tree).ok:
                found.append((fact, anchor, res.problem))
    return found
