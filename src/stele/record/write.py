"""Writing facts: file names, atomic replacement, and the one path every write goes through.

A write either lands whole or not at all (temp file in the same folder, fsync, rename), so a crash or
a Ctrl-C never leaves a half-written fact. Every write is validated first: a fact that would not load
back is refused before anything touches the disk.
"""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

from .. import atomic
from ..errors import SteleError
from ..kinds import KINDS
from ..project import Project, check_inside
from ..redact import Redactor, Tally
from .model import Fact, parse_fact

SLUG_MAX = 48


def slugify(title: str) -> str:
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", text)
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > SLUG_MAX:
            break
        slug = candidate
    return slug or (words[0][:SLUG_MAX] if words else "fact")


def new_fact_path(project: Project, fact: Fact) -> Path:
    return project.memory_dir / KINDS[fact.kind].folder / f"{fact.id}-{slugify(fact.title)}.md"


def redact_fact(fact: Fact, redactor: Redactor, tally: Tally) -> None:
    """Redact every text field of `fact` in place. A tag, anchor, source or link target that holds a
    secret is dropped: a redacted identifier names nothing."""
    for name in ("title", "body", "summary", "retire_when"):
        value = getattr(fact, name)
        if value:
            setattr(fact, name, tally.add(redactor.redact(value)))

    def kept(items: list[str]) -> list[str]:
        out = []
        for item in items:
            r = redactor.redact(item)
            if r.secrets:
                tally.add(r)
            else:
                out.append(item)
        return out

    fact.anchors, fact.tags, fact.source = kept(fact.anchors), kept(fact.tags), kept(fact.source)
    fact.links = {rel: kept(targets) for rel, targets in fact.links.items()}


def _redact_extra(value: Any, redactor: Redactor, tally: Tally) -> Any:
    if isinstance(value, str):
        return tally.add(redactor.redact(value))
    if isinstance(value, dict):
        return {k: _redact_extra(v, redactor, tally) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_extra(v, redactor, tally) for v in value]
    return value


def save(project: Project, fact: Fact, *, create: bool = False, extra: dict | None = None,
         tally: Tally | None = None) -> Path:
    """Redact, validate and write `fact`; returns its path. `create` refuses to overwrite an existing
    file; `extra` sets (None: removes) frontmatter keys the model does not know; `tally` collects what
    was redacted, for the caller to tell the writer. Every fact write comes through here, so no text
    reaches docs/memory/ unredacted, whichever command, hook or editor produced it."""
    redactor = Redactor(project.config["redaction.patterns"])
    tally = tally if tally is not None else Tally()
    redact_fact(fact, redactor, tally)
    text = fact.render(_redact_extra(extra, redactor, tally) if extra else extra)
    rel = fact.path or project.rel(new_fact_path(project, fact))
    # the net under the fields: a key the model does not know (typed in $EDITOR) is rendered as is
    rest = redactor.redact(text)
    if rest.secrets:
        tally.add(rest)
        text = rest.text
    reparsed, problems = parse_fact(text, rel)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise SteleError("; ".join(str(p) for p in errors) + " (nothing was written)")
    path = project.root / rel
    check_inside(project, path)
    if create and path.exists():
        raise SteleError(f"{rel} already exists; nothing was written")
    atomic.write(path, text)
    fact.path = rel
    fact.doc = reparsed.doc if reparsed else None  # later renders diff against what is on disk now
    return path
