"""`stele review` as Markdown (job summaries, pull-request comments) and as plain text (terminals).

Both come from one list of sections so they never disagree; Markdown adds emphasis and a marker comment
(`<!-- stele-review -->`) that lets the GitHub Action update its comment instead of adding another.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..doctor.review import Review
from ..neutralize import neutralize
from ..textcut import counted

if TYPE_CHECKING:
    from ..index.catalog import Node
    from ..record.model import Fact

MARKER = "<!-- stele-review -->"


def _value(v: Any) -> str:
    if v is None or v == [] or v == {}:
        return "(none)"
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k}: {', '.join(x)}" for k, x in v.items())
    return str(v)


def _field_lines(name: str, before: Any, after: Any, md: bool) -> list[str]:
    code = (lambda s: f"`{s}`") if md else (lambda s: s)
    if isinstance(before, list) and isinstance(after, list):
        plus = [f"+{x}" for x in after if x not in before]
        minus = [f"-{x}" for x in before if x not in after]
        return [f"{code(name)}: {', '.join(plus + minus)}"]
    return [f"{code(name)}: {_value(before)} → {_value(after)}"]


def _delivered(rules: list[Fact]) -> str:
    """What happens to the rules once merged, by their `delivery` (imported rules are `ranked`: the
    harness already loads their file), so the heading never claims more than is true."""
    said = {"always": "injected into every session", "ranked": "delivered when a prompt ranks them relevant",
            "manual": "delivered only when named"}
    counts: dict[str, int] = {}
    for rule in rules:
        counts[rule.delivery] = counts.get(rule.delivery, 0) + 1
    if len(counts) == 1:
        return said.get(next(iter(counts)), "delivered as their `delivery` says")
    order = [*said, *sorted(set(counts) - set(said))]
    return "; ".join(f"{counts[d]} {said.get(d, d)}" for d in order if d in counts)


def sections(r: Review, md: bool) -> list[tuple[str, list[str]]]:
    """(heading, lines) for every non-empty section, in review order."""
    b = (lambda s: f"**{s}**") if md else (lambda s: s)
    code = (lambda s: f"`{s}`") if md else (lambda s: s)
    out: list[tuple[str, list[str]]] = []

    def fact(f: Fact | Node) -> str:
        return f"{b(f.id)} {f.kind}: {f.title}"

    if r.rules_changed:
        lines = []
        for rule in r.rules_changed:
            found = [(line, check, m) for g, line, check, m in r.untrusted if g is rule]
            lines.append(f"- {fact(rule)}" + (f" ({counted(len(found), 'finding')}: check before merging)" if found
                                              else " (no findings)"))
            lines += [f"  - {code(f'{rule.path}:{line}')} [{check}]: {m}" for line, check, m in found]
        out.append((f"Standing rules added or changed ({_delivered(r.rules_changed)})", lines))
    if r.untrusted:
        out.append(("Text that could steer an agent or a terminal", [
            f"- {code(f'{f.path}:{line}')} {b(f.id)} [{check}]: {m}" for f, line, check, m in r.untrusted]))
    if r.new_risks:
        out.append(("New risks and constraints", [
            f"- {fact(f)}" + (f" (anchored to {', '.join(code(a) for a in f.anchors)})" if f.anchors else "")
            for f in r.new_risks]))
    rest = [f for f in r.added if f not in r.new_risks]
    if rest:
        out.append(("Added", [f"- {fact(f)}" for f in rest]))
    if r.edited:
        lines = []
        for e in r.edited:
            lines.append(f"- {fact(e.after)}")
            for name, before, after in e.fields:
                lines += [f"  - {x}" for x in _field_lines(name, before, after, md)]
            if e.body_diff:
                lines += ["  - body:", "", "    ```diff"] if md else ["  - body:"]
                lines += [f"    {line}" for line in e.body_diff]
                lines += ["    ```", ""] if md else []
        out.append(("Edited", lines))
    if r.superseded:
        out.append(("Superseded", [
            f"- {fact(f)} → replaced by " + (", ".join(fact(x) for x in by) if by else "nothing (no fact "
                                                                                       "`supersedes` it)")
            for f, by in r.superseded]))
    if r.retired:
        out.append(("Retired", [f"- {fact(f)}" + (f": {why}" if why else "") for f, why in r.retired]))
    anchors = [f"- added {code(a)} to {b(f.id)}" for f, a in r.anchors_added]
    anchors += [f"- broken {code(a)} on {b(f.id)} ({why})" for f, a, why in r.anchors_broken]
    if anchors:
        out.append(("Anchors", anchors))
    if r.violations:
        out.append(("Lifecycle violations", [f"- {m}" for _, m in r.violations]))
    if r.untouched:
        lines = []
        for c in r.untouched:
            f = c.entry.fact
            for hit in c.entry.hits:
                where = f" (lines {hit.lines[0]}-{hit.lines[1]})" if hit.lines else ""
                ack = f"; acknowledged in {c.ack[0]}: {c.ack[1]}" if c.ack and c.ack[1] else ""
                lines.append(f"- {code(hit.anchor)}{where} changed; {fact(f)} did not{ack}")
        out.append(("Code changed under facts that did not change", lines))
    return out


def _tally(r: Review) -> str:
    parts = [(len(r.untrusted), "untrusted-text finding", "untrusted-text findings"),
             (len(r.added), "added", "added"), (len(r.edited), "edited", "edited"),
             (len(r.superseded), "superseded", "superseded"), (len(r.retired), "retired", "retired"),
             (len(r.anchors_broken), "anchor broken", "anchors broken"),
             (len(r.violations), "lifecycle violation", "lifecycle violations"),
             (len(r.untouched), "fact behind its code", "facts behind their code")]
    shown = [f"{n} {one if n == 1 else many}" for n, one, many in parts if n]
    return " · ".join(shown) or "no changes"


def markdown(r: Review) -> str:
    out = [MARKER, f"## Memory changes in `{r.label}` ({r.base}..{r.head})", "", _tally(r), ""]
    body = sections(r, md=True)
    if not body:
        out.append("No changes to the record, and no anchored code changed.")
    for heading, lines in body:
        out += [f"### {heading}", "", *lines, ""]
    return neutralize("\n".join(out).rstrip("\n") + "\n")  # a PR comment hides what a terminal would


def text(r: Review) -> str:
    out = [f"Memory changes in {r.label} ({r.base}..{r.head}): {_tally(r)}"]
    for heading, lines in sections(r, md=False):
        out += ["", heading, *lines]
    return neutralize("\n".join(out) + "\n")
