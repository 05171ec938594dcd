"""The untrusted-input checks: what in a fact file could steer a terminal or an agent.

A fact merged from a pull request is read by every agent on every prompt, so `doctor` reads each file
under the memory folder as bytes a reviewer may not have seen: hidden Unicode and control characters,
terminal escape sequences, text addressed to the agent, and lines too long for a diff view. The rules
are `neutralize.suspects` (their one home); this module only names the file, the line and the fact.
"""
from __future__ import annotations

import html

from ..neutralize import suspects
from ..record.load import Record
from ..record.model import Fact
from .findings import Finding


def untrusted(record: Record, max_line: int) -> list[Finding]:
    by_path = {fact.path: fact for fact in record.facts.values()}
    found = []
    for file in record.working_files():
        text, rel = file.raw, file.rel  # as stored: read_text would turn a lone \r into \n
        if text is None:
            continue  # the schema check reports a file not read (a link out, not UTF-8)
        fact = by_path.get(rel)
        seen = set()
        for s in suspects(text, kind=fact.kind if fact else None, max_line=max_line):
            line = text.count("\n", 0, s.offset) + 1
            seen.add(s.check)
            found.append(Finding(s.check, rel, line, s.message, fact.id if fact else None))
        if fact is not None:
            found.extend(parsed_values(fact, text, rel, seen, max_line))
    return found


def parsed_values(fact: Fact, raw: str, rel: str, seen: set[str], max_line: int) -> list[Finding]:
    """What the file's escaping hides: YAML and JSON escapes (`"\\u001b[2J"` in a title is an ESC
    once parsed) and HTML entities (`&#x202E;`) are read as what they decode to, and each finding
    the raw scan did not already make is reported on the line of the field that holds it."""
    found = []
    for key, value in _values(fact):
        for decoded in {value, html.unescape(value)} - {""}:
            for s in suspects(decoded, kind=fact.kind, max_line=max_line):
                if s.check in seen:
                    continue
                seen.add(s.check)
                at = raw.find(f"\n{key}:") + 1 if key != "body" else raw.find("\n---", 3) + 1
                line = raw.count("\n", 0, max(at, 0)) + 1 + (decoded[:s.offset].count("\n") if key == "body" else 0)
                found.append(Finding(s.check, rel, line, f"{s.message} (in {key}, once its escapes are read)",
                                     fact.id))
    return found


def _values(fact: Fact) -> list[tuple[str, str]]:
    out = [("title", fact.title), ("body", fact.body), ("summary", fact.summary or ""),
           ("retire_when", fact.retire_when or "")]
    out += [("tags", t) for t in fact.tags] + [("anchors", a) for a in fact.anchors]
    return [(k, v) for k, v in out if isinstance(v, str) and v]
