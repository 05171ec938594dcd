"""The untrusted-input checks: what in a fact file could steer a terminal or an agent.

A fact merged from a pull request is read by every agent on every prompt, so `doctor` reads each file
under the memory folder as bytes a reviewer may not have seen: hidden Unicode and control characters,
terminal escape sequences, text addressed to the agent, and lines too long for a diff view. The rules
are `neutralize.suspects` (their one home); this module only names the file, the line and the fact.
"""
from __future__ import annotations

from ..neutralize import suspects
from ..record.load import Record
from .findings import Finding


def untrusted(record: Record, max_line: int) -> list[Finding]:
    by_path = {fact.path: fact for fact in record.facts.values()}
    found = []
    for file in record.working_files():
        text, rel = file.raw, file.rel  # as stored: read_text would turn a lone \r into \n
        if text is None:
            continue  # the schema check reports a file not read (a link out, not UTF-8)
        fact = by_path.get(rel)
        for s in suspects(text, kind=fact.kind if fact else None, max_line=max_line):
            line = text.count("\n", 0, s.offset) + 1
            found.append(Finding(s.check, rel, line, s.message, fact.id if fact else None))
    return found
