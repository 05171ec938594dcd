"""The knowledge lifecycle, as rules: which status a fact may start in, move to, and by which step.

Documents (and anything in status draft or reviewed) go draft -> reviewed (with a note) -> current ->
superseded: only drafts are edited, an edit clears a review, only reviewed drafts are promoted, and
current knowledge is changed only by superseding it with a reviewed draft. Agents treat current
knowledge as truth, so a rule written twice would be a rule bypassed once: every write path asks this
module (`remember`, `edit` by flags or in $EDITOR, `supersede`, the `knowledge` transitions) and none
decides for itself. Pure rules over a `Fact`: it writes nothing, so both the plain write path
(`edit.py`) and the transitions (`knowledge.py`) sit above it.
"""
from __future__ import annotations

from ..errors import SteleError, UsageError
from .model import Fact

KNOWLEDGE_STATUSES = ("draft", "reviewed")
REVIEW_KEY = "review"  # frontmatter: {on: DATE, note: TEXT}, written by `stele knowledge review`
ENDED = ("superseded", "retired")


def refused(action: str, fact: Fact, why: str, instead: str) -> SteleError:
    return SteleError(f"`{action}` is not allowed for {fact.id}: {why}; {instead}")


def is_knowledge(fact: Fact) -> bool:
    """Does the document lifecycle govern `fact`? Documents always; any fact while it is a draft."""
    return fact.kind == "document" or fact.status in KNOWLEDGE_STATUSES


def check_new(kind: str, status: str | None) -> None:
    """The status a new fact may start in: live, and never already reviewed or accepted."""
    if status is None:
        return
    if status in ENDED:
        raise UsageError(f"--status {status}: a new fact starts live; write it, then `stele supersede OLD "
                         "--by NEW` or `stele retire ID --why ...`")
    if status == "reviewed":
        raise UsageError("--status reviewed: nothing has reviewed a new fact yet; write it as a draft, then "
                         "`stele knowledge review ID --note ...`")
    if kind == "document" and status == "current":
        raise UsageError("--status current: a new document starts as a draft and becomes current only once "
                         "reviewed (`stele knowledge review ID --note ...`, then `stele knowledge promote ID`)")


def check_edit(fact: Fact) -> None:
    """Only drafts of knowledge are edited; current knowledge is superseded, ended facts stay as history."""
    if not is_knowledge(fact):
        return
    if fact.status == "current":
        raise SteleError(f"{fact.id} is current knowledge and is not edited in place: write a new draft "
                         f"(`stele knowledge draft`), review it, then `stele supersede {fact.id} --by NEW`")
    if fact.status in ENDED:
        raise SteleError(f"{fact.id} is {fact.status}: it stays as history and is not edited")


def check_status(fact: Fact, status: str, flag: str = "--status") -> None:
    """May an edit move `fact` to `status`? Steps that carry their own meaning (a review note, an
    edge to the replacement, a reason) are taken by their own command, never by setting a status.
    `flag` names where the status was asked for (`--status`, or the file's `status:` key)."""
    if status == fact.status and status != "reviewed":
        return
    if status == "superseded":
        raise UsageError(f"{flag} superseded: {fact.id} is superseded by the fact that replaces it: "
                         f"`stele supersede {fact.id} --by NEW` (it records the edge)")
    if status == "retired":
        raise UsageError(f"{flag} retired: `stele retire {fact.id} --why ...` retires it and keeps the reason")
    if status == "reviewed":
        raise UsageError(f"{flag} reviewed: only `stele knowledge review {fact.id} --note ...` marks a draft "
                         "reviewed (an edit clears a review)")
    if status == "current" and is_knowledge(fact):
        raise UsageError(f"{flag} current: {fact.id} is a {fact.status} and becomes current through review: "
                         f"`stele knowledge review {fact.id} --note ...`, then `stele knowledge promote {fact.id}`")


def content_digest(title: str, summary: str | None, body: str) -> str:
    """What a review vouches for: the title, summary and body as read (frontmatter bookkeeping such as
    `verified` or fingerprints is not content)."""
    import hashlib

    text = f"{title}\n{summary or ''}\n{body.strip()}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fact_digest(fact: Fact) -> str:
    return content_digest(fact.title, fact.summary, fact.body)


def unreviewed(fact: Fact) -> str | None:
    """Why a reviewed or current document is not backed by a review of what it now says (None when it
    is): no review at all (written `status: current` by hand), or a review of other content (edited
    by hand after it). A review recorded before reviews carried a digest is taken as it is."""
    if fact.kind != "document" or fact.status not in ("reviewed", "current") or fact.doc is None:
        return None  # (a fact built in memory, not read from a file, has no review to compare)
    review = fact.doc.meta.get(REVIEW_KEY) if fact.doc is not None else None
    if not isinstance(review, dict):
        return "has no review: it was set to {status} by hand"
    digest = review.get("digest")
    if digest is not None and str(digest) != fact_digest(fact):
        return "was edited after its review: the review vouches for other content"
    return None


def clears_review(fact: Fact) -> dict | None:
    """After an edit of a reviewed draft: it is a draft again and its review note goes. Returns the
    frontmatter change to write with it (None when there was no review to clear)."""
    if fact.status == "reviewed":
        fact.status = "draft"
        return {REVIEW_KEY: None}
    if fact.status == "draft" and fact.doc is not None and REVIEW_KEY in fact.doc.meta:
        return {REVIEW_KEY: None}
    return None


def check_supersede(old: Fact, new: Fact) -> bool:
    """May NEW supersede OLD? Returns True when it is knowledge's step (NEW, a reviewed draft, becomes
    current), False for a short record (NEW keeps its status)."""
    action = f"supersede {old.id} --by {new.id}"
    if old.id == new.id:
        raise UsageError("a fact cannot supersede itself: give --by the id of its replacement")
    if old.status == "superseded":
        raise SteleError(f"{old.id} is already superseded; nothing changed")
    if not (is_knowledge(old) or is_knowledge(new)):
        if new.status in ENDED:
            raise refused(action, new, f"{new.id} is {new.status} and cannot replace anything",
                          "supersede with a live fact")
        return False
    if old.status in KNOWLEDGE_STATUSES:
        which = "a reviewed" if old.status == "reviewed" else "an unreviewed"
        raise refused(action, old, f"{old.id} is {which} draft and only current knowledge is superseded",
                      f"edit the draft instead, or retire it (`stele retire {old.id} --why ...`)")
    if old.status != "current":
        raise refused(action, old, f"{old.id} is {old.status}", "supersede the fact that is current")
    if new.status == "draft":
        raise refused(action, new, f"{new.id} is a draft that has not been reviewed, and only a reviewed "
                      "draft replaces current knowledge",
                      f"review it first: `stele knowledge review {new.id} --note TEXT`")
    if new.status != "reviewed":
        raise refused(action, new, f"{new.id} is {new.status}, not a reviewed draft",
                      "write a new draft, review it, then supersede")
    return True
