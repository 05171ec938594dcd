"""Checks against a base revision (`--base REF`): current knowledge edited in place, and with `--gate`
risks and constraints whose anchored code changed while they did not.

The change is measured from the merge base of REF and HEAD to the working tree (in CI, HEAD): what a
pull request shows, plus anything not yet committed when run locally.
"""
from __future__ import annotations

from .. import gitrepo
from ..kinds import FIRST_KINDS
from ..record.load import Record, load_at
from ..retrieve import anchored
from ..retrieve.cochange import ACK_TRAILER, cochanges, content, parse_acks
from .findings import Finding


def check(record: Record, base: str, gate: bool) -> list[Finding]:
    root = record.project.root
    base_sha = gitrepo.require_commit(root, base, "--base")
    head = gitrepo.rev_parse(root, "HEAD")
    since = gitrepo.merge_base(root, base_sha, head) if head else base_sha
    base_record = load_at(record.project, since)
    findings = knowledge_edited(base_record, record, base)
    if gate:
        findings += co_change(record, base_record, since, base, has_head=head is not None)
    return findings


def knowledge_edited(before: Record, after: Record, base: str) -> list[Finding]:
    found = []
    for fid, old in sorted(before.facts.items()):
        new = after.facts.get(fid)
        if old.kind != "document" or old.status != "current" or new is None or new.status != "current":
            continue
        was, now = content(old), content(new)
        if was != now:
            changed = sorted(k for k, v in now.items() if was.get(k) != v)
            found.append(Finding("knowledge-edited", new.path, 1,
                                 f"{fid} is current knowledge and was edited in place since {base} "
                                 f"({', '.join(changed)}): restore it, write the change as a new draft, "
                                 f"review it, and supersede {fid} with it", fid))
    return found


def co_change(record: Record, base_record: Record, since: str, base: str, has_head: bool) -> list[Finding]:
    root = record.project.root
    change = anchored.Change(gitrepo.diff(root, ref=since), None, since)
    acks = parse_acks(gitrepo.trailers(root, f"{since}..HEAD", ACK_TRAILER)) if has_head else {}
    found = []
    for cc in cochanges(record.project, change, base_record, record, acks, kinds=FIRST_KINDS):
        if cc.settled:
            continue
        f = cc.entry.fact
        hit = cc.entry.hits[0]
        bare = " (a Stele-Ack trailer needs a reason after the id)" if cc.ack else ""
        found.append(Finding("co-change", hit.file, hit.lines[0] if hit.lines else 1,
                             f"{hit.anchor} changed since {base} but {f.kind} {f.id} ({f.title}) did "
                             f"not{bare}: update it, `stele verify {f.id}` if it still holds, or add a "
                             f"commit trailer `{ACK_TRAILER}: {f.id} <why it still holds>`", f.id))
    return found
