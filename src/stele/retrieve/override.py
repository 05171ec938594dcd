"""What the record says was overridden, among the items one recall has scored: the newer word wins.

Three rules, applied after scoring and before the window (downrank; a replaced entry whose value
changed is shown as a line of its replacement, `folded`, never silently dropped):

- **Replacement in session memory.** Two session entries about one subject, the newer replaces the
  older. One subject: they share an anchor (a path the entry is about) or a code symbol, or their
  wording is a near-duplicate with something changed (`similar`: the Dice coefficient of their content
  words is at least `NEAR_DUPLICATE` and the words differ). Committed facts are never replaced by a
  session entry: they keep their precedence (they are listed before every session entry anyway).
- **Superseded warning.** A superseded lesson (a failed approach) that matched the prompt on its own
  (`delivery.is_warning`) is shown below what superseded it, labelled "tried, failed, replaced by".
- **Contradiction.** A `contradicts` edge between two scored items demotes the overridden side: the
  one whose status is not current or that a third item supersedes (what the record marks), else the
  older (`created`), else the side that was contradicted (the declaring side was written knowing it).

A risk that contradicts a fact is a warning that the fact is not holding (the rule still stands): it
demotes nothing. The overridden item's score falls by `PENALTY`, or further to just under the item that
overrode it (so the newer ranks first; for a contradiction, never by more than `MAX_DROP`); it keeps its place in the window unless the window's relevance cut
(`rank.trim`, judged on the lowered score) leaves it out, and is labelled (`by`, `rule`) in what the
agent sees and in `stele why`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from ..lazyre import lazy
from ..plain import dataclass
from .rank import Scored

PENALTY = 1.0           # subtracted from an overridden item's score
NEAR_DUPLICATE = 0.5    # Dice coefficient of content words for "the same subject, reworded"
MARGIN = 0.01           # an overridden item ends at least this far below the item that overrode it...
MAX_DROP = 2.0          # ...but a contradicted one never falls more than this (a weak match does not bury it)
WARNS = ("risk",)       # a risk that contradicts a fact warns it is not holding: it overrides nothing
HEADING_SHARED = 2     # content words two notes' headings share, at least, to name one subject
MAX_COMPARED = 40       # session entries compared pairwise (the best-scored ones): bounded work
REPLACED, CONTRADICTED, SUPERSEDED = "replaced", "contradicted", "superseded"

_WORD = lazy(r"[a-z0-9][a-z0-9_./-]*[a-z0-9]|[a-z0-9]")
_SYMBOL = lazy(r"\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Za-z]+_[A-Za-z0-9_]+|[A-Za-z_][\w.]*::\w+)\b")
STOP = frozenset({
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "is", "are", "was", "were",
    "be", "been", "being", "it", "its", "this", "that", "these", "those", "as", "at", "by", "from",
    "into", "not", "no", "now", "so", "we", "our", "us", "you", "they", "them", "then", "than", "there",
    "here", "has", "have", "had", "do", "does", "did", "will", "would", "should", "can", "could", "may",
    "might", "must"
})


# What a statement pins down, beside its prose: a number or version (`20`, `3.13`, `64`), a path or
# dotted name (`src/auth/token.ts`, `Node.js`), a flag (`--runInBand`, `-parallel`), an identifier
# (`create_token`, `createToken`), a setting (`limit=4`), and a proper name inside a sentence
# (`Express`, `Fastify`; a capital after a sentence or line start is no evidence of a name).
_VALUE = lazy(r"(?<![\w-])(?:[\w.+-]*\d[\w.+]*|[\w-]+(?:[./=][\w-]+)+/?|--?[A-Za-z][\w-]*(?:=[\w.-]+)?"
                    r"|[A-Za-z]+_[\w]+|[a-z]+[A-Z]\w*)"
                    r"|(?<=[a-z,;] )[A-Z][a-z]+\w*")


# A note that reports a failed attempt: a warning, never folded away by prose alone (`revised`)
_FAILED = lazy(r"\b(?:fail(?:ed|s|ure)?|did not work|didn't work|broke|abandoned|reverted|rolled back)\b",
               re.IGNORECASE)


# A note that says an earlier belief was wrong (`refutes`)
_REFUTES = lazy(r"\b(?:disproved?|disproves|refuted?|refutes|ruled out|rules out|debunked"
                r"|turned out (?:to be )?(?:wrong|false|unrelated)|(?:was|is) not the (?:cause|culprit))\b",
                re.IGNORECASE)
REFUTED_SHARED = 2  # content words (hyphenated ones split) a refutation shares with the note it refutes


@dataclass(frozen=True)
class Override:
    id: str       # the item demoted
    by: str       # the item that overrode it
    rule: str     # replaced | contradicted
    why: str      # one line for `stele why`


def words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOP)


def symbols(text: str) -> frozenset[str]:
    """Code symbols a text names: camelCase, snake_case, Path::Symbol."""
    return frozenset(_SYMBOL.findall(text))


def similar(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def heading(text: str) -> str:
    """The first line of a note of several lines (its title: `index.items.from_entry`), else ""."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0] if len(lines) > 1 else ""


def same_subject(old_text: str, new_text: str, old_anchors: Iterable[str], new_anchors: Iterable[str]
                 ) -> str | None:
    """Why two session entries speak about one subject (None when they do not)."""
    wa, wb = words(old_text), words(new_text)
    if wa == wb:
        return None  # nothing changed: a repeat, not a replacement
    shared = sorted(set(old_anchors) & set(new_anchors))
    if shared:
        return f"same anchor {shared[0]}"
    sym = sorted(symbols(old_text) & symbols(new_text))
    if sym:
        return f"same symbol {sym[0]}"
    same = same_heading(old_text, new_text)
    if same is not None:
        return f"the same heading ({same:.2f}), its text changed"
    if refutes(old_text, new_text):
        return "it says the older one was wrong"
    score = similar(wa, wb)
    return f"near-duplicate wording ({score:.2f}), changed" if score >= NEAR_DUPLICATE else None


def same_heading(old_text: str, new_text: str) -> float | None:
    """The Dice coefficient of two notes' headings when they name one subject (at least HEADING_SHARED
    content words in common and NEAR_DUPLICATE similar: "Old test command", "Current test command"),
    and the texts below share a word ("First/Second workflow prerequisite" with nothing else in
    common are siblings); else None."""
    ha, hb = words(heading(old_text)), words(heading(new_text))
    if len(ha & hb) >= HEADING_SHARED and similar(ha, hb) >= NEAR_DUPLICATE \
            and (words(old_text) - ha) & (words(new_text) - hb):
        return similar(ha, hb)
    return None


def refutes(old_text: str, new_text: str) -> bool:
    """Whether the newer note says the older one was wrong: it refutes ("disproved", "ruled out",
    "turned out to be wrong", "was not the cause") and speaks of the same thing (at least
    REFUTED_SHARED content words in common, hyphenated names split, one of them in the older note's
    heading when it has one): "Tracing disproved the network-timeout hypothesis" after "Temporary
    debugging hypothesis: the team suspected a network timeout"."""
    if not _REFUTES.search(new_text):
        return False

    def parts(text: str) -> set[str]:
        return {p for w in words(text) for p in re.split(r"[-_]", w) if p and p not in STOP}

    shared = parts(old_text) & parts(new_text)
    head = parts(heading(old_text))
    return len(shared) >= REFUTED_SHARED and (not head or bool(shared & head))


ECHO = 4  # consecutive content words a note repeats of an earlier one to speak of what that one said


def echoes(earlier: str, later: str) -> bool:
    """Whether the later note repeats a phrase of the earlier one, ECHO content words in a row ("the
    resumed work completed using *flush checkpoints before acknowledging* messages" after "chose to
    flush checkpoints before acknowledging messages"): it speaks of what the earlier one said."""
    def grams(text: str) -> set[tuple[str, ...]]:
        seq = [w for w in _WORD.findall(text.lower()) if w not in STOP]
        return {tuple(seq[i:i + ECHO]) for i in range(len(seq) - ECHO + 1)}

    return bool(grams(earlier) & grams(later))


def values(text: str) -> frozenset[str]:
    """The values a text states (`_VALUE`), lowercased."""
    return frozenset(v.lower().rstrip(".") for v in _VALUE.findall(text))


def changed_value(old_text: str, new_text: str) -> bool:
    """Whether the newer text states a different value where the older stated one: each holds a value
    the other does not ("deploy on Node.js 20" then "... 22"; a path then another path). A newer entry
    that repeats the older one's values (a confirmation, "the team confirmed cache limit 96 MB") or only
    adds to them (an elaboration, "the single Express service makes deploys hard") changes nothing."""
    old, new = values(old_text), values(new_text)
    return bool(old - new) and bool(new - old)


def revised(old_text: str, new_text: str) -> bool:
    """Whether the newer note revises what the older said, so the older may be a line of it: it
    changed a stated value (`changed_value`); it says the older was wrong (`refutes`); or, under the
    same heading reworded (`same_heading`: "Initial delivery state" then "Current delivery state"), it
    says something else where neither states any value ("billing migration is blocked" then "ready
    for rollout"; "deploys run nightly" then "hourly"), unless the older reports a failure: "Failed
    approach: acking before the flush failed" then "Working approach: flush before acking" is a
    warning against trying it again, and stays an entry (as a superseded lesson does). A newer note
    that states the older one's values again, or adds to them, is a confirmation or an elaboration:
    it hides nothing."""
    if changed_value(old_text, new_text) or refutes(old_text, new_text):
        return True
    return not values(old_text) and not values(new_text) and same_heading(old_text, new_text) is not None \
        and not _FAILED.search(old_text)


def replacements(entries: list[Scored], texts: dict[str, str], anchors: dict[str, list[str]]) -> list[Override]:
    """Session entries replaced by a newer one about the same subject (the newest such, for each)."""
    ranked = sorted((x for x in entries if x.session and x.node.created), key=lambda x: -x.score)[:MAX_COMPARED]
    by_time = sorted(ranked, key=lambda x: (x.node.created or "", x.id))
    out: list[Override] = []
    for n, old in enumerate(by_time):
        for new in reversed(by_time[n + 1:]):  # the newest first
            if (new.node.created or "", new.id) <= (old.node.created or "", old.id):
                continue  # a tie in time (whole seconds) goes by id: an entry id is a ULID, in milliseconds
            why = same_subject(texts.get(old.id, old.node.title), texts.get(new.id, new.node.title),
                               anchors.get(old.id, []), anchors.get(new.id, []))
            if why:
                out.append(Override(old.id, new.id, REPLACED, f"{new.id} is newer ({new.node.created}), {why}"))
                break
    return out


def contradictions(scored: dict[str, Scored], edges: list[tuple[str, str, str]]) -> list[Override]:
    """For each `contradicts` edge with both ends scored, the overridden side."""
    superseded = {dst for src, rel, dst in edges if rel == "supersedes"}
    out: list[Override] = []
    for src, rel, dst in edges:
        if rel != "contradicts" or src not in scored or dst not in scored or src == dst:
            continue
        a, b = scored[src], scored[dst]  # a declares that it contradicts b
        if a.node.kind in WARNS or b.node.kind in WARNS:
            continue

        def marked(x: Scored) -> bool:
            return x.id in superseded or (x.node.status or "current") not in ("current", "reviewed")

        if marked(a) != marked(b):
            loser, winner, why = (a, b, "the record marks it overridden") if marked(a) else \
                (b, a, "the record marks it overridden")
        elif (a.node.created or "") != (b.node.created or ""):
            loser, winner = (a, b) if (a.node.created or "") < (b.node.created or "") else (b, a)
            why = f"older ({loser.node.created} < {winner.node.created})"
        else:
            loser, winner, why = b, a, f"{a.id} declares the contradiction, knowing {b.id}"
        out.append(Override(loser.id, winner.id, CONTRADICTED, f"contradicted by {winner.id}: {why}"))
    return out


def superseded(scored: dict[str, Scored], edges: list[tuple[str, str, str]]) -> list[Override]:
    """A superseded fact that still came (a failed approach kept as a warning, `delivery.is_warning`):
    below what superseded it, and labelled with it."""
    out: list[Override] = []
    for x in scored.values():
        if x.node.status == "superseded" and not x.session:
            newer = sorted(src for src, rel, dst in edges if rel == "supersedes" and dst == x.id)
            if newer:
                out.append(Override(x.id, newer[0], SUPERSEDED, f"tried, failed, replaced by {newer[0]}"))
    return out


def folded(overrides: dict[str, Override], shown: list[str], texts: dict[str, str]) -> dict[str, str]:
    """Replaced session entries whose replacement is in the window too and revises them (`revised`: a
    changed value, or other words under the same heading where neither states a value): old id -> the shown entry that carries it (the end of a chain: 20 replaced by
    22, 22 by 24, both go to 24). The agent reads the older entry as a line of the newer one
    (`replaces S-...: title`), not as an entry of its own: such an entry is then treated as a
    superseded fact is (withheld, unless the prompt asks about the past), but never silently, since
    the entry that replaced it names it. A replacement that revises nothing (a confirmation, an
    elaboration, a note reworded without its heading) is only labelled and demoted."""
    present = set(shown)
    out: dict[str, str] = {}
    for old in shown:
        o, seen = overrides.get(old), {old}
        while o is not None and o.rule == REPLACED and o.by in present and o.by not in seen \
                and revised(texts.get(o.id, ""), texts.get(o.by, "")):
            seen.add(o.by)
            out[old] = o.by
            o = overrides.get(o.by)
    return out


def apply(scored: dict[str, Scored], overrides: list[Override]) -> dict[str, Override]:
    """Lower each overridden item's score (see the module doc); the first override of an item counts."""
    done: dict[str, Override] = {}
    for o in overrides:
        if o.id in done or o.id not in scored or (o.by not in scored and o.rule != SUPERSEDED):
            continue
        x, by = scored[o.id], scored.get(o.by)
        lowered = min(x.score - PENALTY, by.score - MARGIN if by else x.score)
        if o.rule == CONTRADICTED:
            lowered = max(lowered, x.score - MAX_DROP)
        lowered = round(lowered, 3)
        x.parts[o.rule] = round(lowered - x.score, 3)
        x.score = lowered
        done[o.id] = o
    return done
