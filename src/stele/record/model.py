"""A fact: the dataclass, its validation, and its conversion back to frontmatter.

Validation collects every problem of a file at once (a reviewer fixes them in one pass), each with the
line of the offending key. Cross-file checks (duplicate ids, dangling links) live in `load.py`.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from ..anchors import codecheck
from ..anchors.paths import leaves_root
from ..errors import UsageError
from ..ids import ID_RE, SESSION_ID_RE, mentioned_ids, prefix_of
from ..kinds import DECLARABLE_RELATIONS, DELIVERIES, KINDS, PRIORITIES, TITLE_MAX, Kind
from ..textcut import words
from . import frontmatter

DATE_FIELDS = ("created", "verified", "review_after", "expires")
TEXT_FIELDS = ("verified_at", "retire_when", "summary", "needs_review")
LIST_FIELDS = ("anchors", "tags", "source")
_SENTENCE_RE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.S)


def first_sentence(text: str) -> str:
    """The first sentence of `text` on one line (at most 300 characters, a cut marked)."""
    flat = " ".join(text.split())
    m = _SENTENCE_RE.match(flat)
    return words(m.group(1) if m else flat, 300)


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    message: str
    severity: str = "error"  # error | warning
    check: str = "schema"  # which `stele doctor` check reports it

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class Fact:
    id: str
    kind: str
    title: str
    body: str = ""
    status: str = ""
    delivery: str = ""
    priority: str = "normal"
    anchors: list[str] = field(default_factory=list)
    links: dict[str, list[str]] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    created: dt.date | None = None
    verified: dt.date | None = None
    verified_at: str | None = None
    review_after: dt.date | None = None
    expires: dt.date | None = None
    retire_when: str | None = None
    summary: str | None = None
    source: list[str] = field(default_factory=list)
    # why someone must look at it again (set by `doctor --fix` for an anchor it could not repair; cleared
    # by `stele verify`): shown by doctor, recall and snapshots, never a reason to stop delivering it
    needs_review: str | None = None
    fingerprints: dict[str, str] = field(default_factory=dict)  # anchor -> `anchors.fingerprint` of its code
    checks: list[codecheck.Check] = field(default_factory=list)  # `check:`, the valid part (anchors/codecheck.py)
    path: str = ""  # repo-relative, posix
    doc: frontmatter.Document | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        kind = KINDS.get(self.kind)
        if kind is not None:
            self.status = self.status or kind.default_status
            self.delivery = self.delivery or kind.default_delivery

    @property
    def mentions(self) -> list[str]:
        return [i for i in mentioned_ids(self.body) if i != self.id]

    @property
    def summary_text(self) -> str:
        """One line for briefings: `summary`, else the body's first sentence."""
        return self.summary or first_sentence(self.body)

    def targets(self) -> list[tuple[str, str]]:
        """Declared edges as (relation, target id)."""
        return [(rel, t) for rel, ids in self.links.items() for t in ids]

    def edges(self) -> list[tuple[str, str]]:
        """Every edge this fact starts, as (relation, target id): its declared links as written, then a
        `mentions` edge to each id its body names that no declared link already joins. The record's
        graph and the index both read a fact's edges here."""
        declared = self.targets()
        joined = {dst for _, dst in declared}
        return declared + [("mentions", m) for m in self.mentions if m not in joined]

    def to_meta(self) -> dict[str, Any]:
        """Frontmatter for this fact: the original keys and order, known fields overwritten."""
        meta: dict[str, Any] = dict(self.doc.meta) if self.doc else {}
        kind = KINDS.get(self.kind)
        defaults = {"status": kind.default_status if kind else "", "priority": "normal",
                    "delivery": kind.default_delivery if kind else ""}
        values: dict[str, Any] = {
            "id": self.id, "kind": self.kind, "title": self.title, "status": self.status,
            "delivery": self.delivery, "priority": self.priority, "anchors": list(self.anchors),
            "links": {r: list(ids) for r, ids in self.links.items() if ids}, "tags": list(self.tags),
            "created": self.created, "verified": self.verified, "verified_at": self.verified_at,
            "review_after": self.review_after, "expires": self.expires, "retire_when": self.retire_when,
            "summary": self.summary, "source": list(self.source), "needs_review": self.needs_review,
            "fingerprints": dict(self.fingerprints), "check": _check_meta(self.checks),
        }
        if "check" in meta and codecheck.parse(meta["check"])[0] == self.checks:
            del values["check"]  # unchanged: keep the author's spelling (and any part set aside as invalid)
        for key, value in values.items():
            if isinstance(value, dt.date):
                value = value.isoformat()
            implicit = key in defaults and key not in meta and value == defaults[key]
            if implicit and (self.doc or key != "status"):
                continue  # an implicit default stays implicit (a new file spells out its status)
            if value is None or value == [] or value == {}:
                meta.pop(key, None)
            elif key in meta and _same(meta[key], value):
                continue  # keep the original spelling (e.g. `tags: auth` vs `[auth]`)
            else:
                meta[key] = value
        return meta

    def render(self, extra: dict[str, Any] | None = None) -> str:
        """The file text; `extra` sets keys the model does not know (None removes one), e.g. `review`."""
        meta = self.to_meta()
        for key, value in (extra or {}).items():
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        return frontmatter.render(meta, self.body, self.doc)

    def as_dict(self) -> dict[str, Any]:
        """The `--json` shape of a fact (stable: keys are only ever added)."""
        iso = lambda d: d.isoformat() if d else None  # noqa: E731
        return {
            "id": self.id, "kind": self.kind, "title": self.title, "status": self.status,
            "delivery": self.delivery, "priority": self.priority, "anchors": self.anchors,
            "links": self.links, "tags": self.tags, "created": iso(self.created),
            "verified": iso(self.verified), "verified_at": self.verified_at,
            "review_after": iso(self.review_after), "expires": iso(self.expires),
            "retire_when": self.retire_when, "summary": self.summary_text, "source": self.source,
            "needs_review": self.needs_review, "fingerprints": self.fingerprints, "path": self.path,
            "body": self.body, "check": [c.as_dict() for c in self.checks],
        }


def _check_meta(checks: list[codecheck.Check]) -> Any:
    """`check:` as written for `checks`: one mapping for one check, else a list of mappings."""
    rows = [c.as_dict() for c in checks]
    for row in rows:
        if row["enforce"] == "warn":
            del row["enforce"]  # the default stays implicit
    return rows[0] if len(rows) == 1 else rows or None


def as_date(value: Any) -> dt.date | None:
    """A date field's value as a date: a date, or text written YYYY-MM-DD; None when it is neither."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and frontmatter.ISO_DATE_RE.match(value):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return None
    return None


def value_problem(key: str, value: Any, kind: Kind | None = None) -> str | None:
    """Why `value` is not allowed in field `key`, or None: the one validator of a fact's fields, for a
    file and for a flag alike. The message follows the field's name, which the caller puts first
    (`` `status` `` in a file, `--status` on the command line)."""
    if key == "title":
        if not isinstance(value, str) or not value.strip():
            return f"is empty: give a one-line title of at most {TITLE_MAX} characters"
        if len(value) > TITLE_MAX:
            return f"is {len(value)} characters; shorten it to at most {TITLE_MAX}"
        if any(c in value.strip() for c in "\n\r\u2028\u2029\x0b\x0c\x85"):
            return "spans more than one line: a title is one line (put the rest in the body)"
    elif key == "kind":
        if not isinstance(value, str) or value not in KINDS:
            return f"{value!r} is not a kind: use one of " + ", ".join(KINDS)
    elif key == "status":
        if kind is not None and value not in kind.statuses:
            return f"{value!r} is not valid for a {kind.name}: use one of " + ", ".join(kind.statuses)
    elif key == "delivery":
        if value not in DELIVERIES:
            return f"{value!r} is not one of " + ", ".join(DELIVERIES)
    elif key == "priority":
        if value not in PRIORITIES:
            return f"{value!r} is not one of " + ", ".join(PRIORITIES)
    elif key in DATE_FIELDS:
        if as_date(value) is None:
            return f"{value!r} is not a date: write it as YYYY-MM-DD"
    elif key == "anchors":
        problem = anchor_problem(value)
        return f"{value!r}: {problem}" if problem else None
    return None


def check_flag(flag: str, key: str, value: Any, kind: Kind | None = None) -> None:
    """Refuse a command-line value with the flag's name, through the file's own validator."""
    problem = value_problem(key, value, kind)
    if problem:
        raise UsageError(f"{flag} {problem}")


def _same(original: Any, value: Any) -> bool:
    if isinstance(value, list) and isinstance(original, str):
        return value == [original]
    if isinstance(value, dict) and isinstance(original, dict):
        return {k: _as_list(v) for k, v in original.items()} == value
    return original == value


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def from_document(doc: frontmatter.Document, path: str) -> tuple[Fact | None, list[Problem]]:
    """Validate a parsed file; returns the fact (None when unusable) and every problem found."""
    meta = doc.meta
    problems: list[Problem] = []

    def bad(message: str, *where: Any) -> None:
        problems.append(Problem(path, doc.line_of(*where) if where else 1, message))

    fid, kind_name, title = meta.get("id"), meta.get("kind"), meta.get("title")
    kind = KINDS.get(kind_name) if isinstance(kind_name, str) else None
    if fid is None:
        bad("missing `id`: add `id: PREFIX-XXXX` (e.g. DEC-4F7K)")
    elif not isinstance(fid, str) or not ID_RE.match(fid):
        bad(f"`id` {fid!r} is not PREFIX-SUFFIX with a known prefix and 4+ Crockford base32 characters", "id")
    if kind_name is None:
        bad("missing `kind`: one of " + ", ".join(KINDS), )
    elif kind is None:
        bad(f"`kind` {value_problem('kind', kind_name)}", "kind")
    if kind and isinstance(fid, str) and ID_RE.match(fid) and prefix_of(fid) != kind.prefix:
        bad(f"id {fid} does not match kind {kind.name}: its id must start with {kind.prefix}-", "id")
    if title is None:
        bad(f"missing `title`: add a one-line title of at most {TITLE_MAX} characters", "title")
    elif value_problem("title", title):
        bad(f"`title` {value_problem('title', title)}", "title")

    status, delivery, priority = meta.get("status"), meta.get("delivery"), meta.get("priority")
    for key, value in (("status", status), ("delivery", delivery), ("priority", priority)):
        problem = value_problem(key, value, kind) if value is not None else None
        if problem:
            bad(f"`{key}` {problem}", key)

    dates: dict[str, dt.date | None] = {}
    for key in DATE_FIELDS:
        value = meta.get(key)
        dates[key] = as_date(value)
        if value is not None and dates[key] is None:
            bad(f"`{key}` {value_problem(key, value)}", key)

    lists: dict[str, list[str]] = {}
    for key in LIST_FIELDS:
        value = meta.get(key)
        if value is None:
            lists[key] = []
        elif isinstance(value, str):
            lists[key] = [value]
        elif isinstance(value, list) and all(isinstance(v, str | int) and not isinstance(v, bool)
                                             for v in value):
            lists[key] = [str(v) for v in value]
        else:
            bad(f"`{key}` must be a list of strings", key)
            lists[key] = []
    for i, anchor in enumerate(lists["anchors"]):
        message = value_problem("anchors", anchor)
        if message:
            bad(f"anchor {message}", "anchors", i)

    links: dict[str, list[str]] = {}
    raw_links = meta.get("links")
    if raw_links is not None and not isinstance(raw_links, dict):
        bad("`links` must map a relation to a list of ids, e.g. `caused-by: [RISK-2M9Q]`", "links")
    for rel, targets in (raw_links or {}).items() if isinstance(raw_links, dict) else ():
        if rel not in DECLARABLE_RELATIONS:
            bad(f"unknown relation {rel!r}: use one of " + ", ".join(DECLARABLE_RELATIONS), "links", rel)
            continue
        targets = _as_list(targets) if targets is not None else []
        for i, target in enumerate(targets):
            if not isinstance(target, str) or not (ID_RE.match(target) or SESSION_ID_RE.match(target)):
                bad(f"link {rel} -> {target!r} is not a fact id", "links", rel, i)
            elif target == fid:
                bad(f"link {rel} -> {target} points at the fact itself", "links", rel, i)
            else:
                links.setdefault(rel, []).append(target)

    prints: dict[str, str] = {}
    raw_prints = meta.get("fingerprints")
    if raw_prints is not None:
        if isinstance(raw_prints, dict) and all(isinstance(v, (str, int)) and not isinstance(v, bool)
                                                for v in raw_prints.values()):
            prints = {str(k): str(v) for k, v in raw_prints.items()}
        else:
            bad("`fingerprints` must map an anchor to its fingerprint (written by Stele; delete the key "
                "to have them recorded again)", "fingerprints")

    texts: dict[str, str | None] = {}
    for key in TEXT_FIELDS:
        value = meta.get(key)
        if value is None:
            texts[key] = None
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            texts[key] = str(value)
        else:
            bad(f"`{key}` must be text", key)
            texts[key] = None

    checks, check_problems = codecheck.parse(meta.get("check"))
    for message in check_problems:
        problems.append(Problem(path, doc.line_of("check"), f"`check` {message}; the rest of the fact still "
                                "counts", severity="warning", check="bad-check"))
    if checks and kind is not None and kind.name not in codecheck.CHECK_KINDS:
        problems.append(Problem(path, doc.line_of("check"), f"`check` is evaluated only on "
                                f"{', '.join(codecheck.CHECK_KINDS)} facts, not on a {kind.name}: make the rule a "
                                "constraint or drop the key", severity="warning", check="bad-check"))
        checks = []

    if any(p.severity == "error" for p in problems) and (kind is None or not isinstance(fid, str)):
        return None, problems
    fact = Fact(
        id=str(fid), kind=kind.name if kind else str(kind_name), title=str(title or ""), body=doc.body,
        status=str(status or ""), delivery=str(delivery or ""), priority=str(priority or "normal"),
        anchors=lists["anchors"], links=links, tags=lists["tags"], source=lists["source"],
        created=dates["created"], verified=dates["verified"], review_after=dates["review_after"],
        expires=dates["expires"], verified_at=texts["verified_at"], retire_when=texts["retire_when"],
        summary=texts["summary"], needs_review=texts["needs_review"], fingerprints=prints, checks=checks,
        path=path, doc=doc,
    )
    return fact, problems


def anchor_problem(anchor: str) -> str | None:
    """Why an anchor is malformed, or None. (Whether it resolves is `anchors/`'s question.)"""
    path, _, symbol = anchor.partition("::")
    if not path.strip():
        return "empty path; write a repo-relative path, glob or path::Symbol"
    leaves = leaves_root(path)
    if leaves:
        return leaves
    if "::" in anchor and not re.match(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$", symbol):
        return "symbol must be Name or Class.method after `::`"
    return None


def parse_fact(text: str, path: str) -> tuple[Fact | None, list[Problem]]:
    """Parse and validate one file's text."""
    try:
        doc = frontmatter.parse(text)
    except frontmatter.FrontmatterError as e:
        return None, [Problem(path, e.line, e.message)]
    return from_document(doc, path)
