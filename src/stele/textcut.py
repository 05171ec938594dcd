"""Cutting text to a budget: the one home of where a cut falls and how it is marked.

Every budget in Stele is in characters (hook output limits, titles, excerpts, preamble fidelity), and
every cut says it happened. Where the cut falls depends on what the text is: prose is cut at a word
(`words`, `one_line`), multi-line output at a line (`lines`), and a stage's content under a fidelity
at the exact character count it promises (`chars`). Counting goes with it (`counted`: "1 error", never
"1 errors"), since every message that says how much was cut or found says it with a number. Standard
library only: the hook path uses it.
"""
from __future__ import annotations

ELLIPSIS = "..."


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 error`, `2 errors`, `0 entries` (`plural` for nouns not made by adding -s)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def words(text: str, limit: int, mark: str = ELLIPSIS) -> str:
    """`text` cut to at most `limit` characters, `mark` included: at the last word boundary when that
    keeps three quarters of the room, else inside the word (one long token must not empty the text)."""
    if len(text) <= limit:
        return text
    head = text[:max(0, limit - len(mark))]
    space = head.rfind(" ")
    if space >= len(head) * 3 // 4:
        head = head[:space]
    return head.rstrip() + mark


def phrase(text: str, limit: int, mark: str = ELLIPSIS) -> str:
    """`text` cut at a word as `words` cuts it, for a title: the cut leaves no parenthesis or bracket
    open (it falls before the last one opened when that keeps half the room: "AI tools (for example:"
    read as "AI tools") and no dangling `,` `:` `;` or dash before the mark."""
    if len(text) <= limit:
        return text
    head = words(text, limit, mark)[: -len(mark) or None]
    for opening, closing in ("()", "[]"):
        at = head.rfind(opening)
        if at > head.rfind(closing) and at >= (limit - len(mark)) // 2:
            head = head[:at]
    return head.rstrip(" ,:;-\u2013\u2014(") + mark


def one_line(text: str, limit: int, mark: str = ELLIPSIS) -> str:
    """`text` with its whitespace runs made single spaces, then cut at a word (`words`)."""
    return words(" ".join(text.split()), limit, mark)


def error_line(e: BaseException, limit: int = 200) -> str:
    """An exception in one line for a message: its type and the first line of what it says, cut at a
    word (a library's error may carry a whole response body or traceback)."""
    first = str(e).strip().splitlines()
    return f"{type(e).__name__}: {words(first[0], limit)}" if first else type(e).__name__


def lines(text: str, limit: int, mark: str) -> str:
    """`text` cut at a line boundary to at most `limit` characters, ending in `mark` when it was cut
    (a single line longer than the budget is cut inside it)."""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(mark))
    cut = text.rfind("\n", 0, room + 1)
    return text[: cut if cut > 0 else room].rstrip() + mark


def chars(text: str, limit: int, mark: str) -> str:
    """The first `limit` characters of `text`, then `mark` (the mark is not counted: a fidelity of
    2000 characters keeps 2000)."""
    return text if len(text) <= limit else text[:limit] + mark


def ends(text: str, limit: int, mark: str = "\n...\n") -> str:
    """The beginning and the end of `text`, `limit` characters together, with `mark` where the middle
    was (uncounted): a long paste is usually a question before or after a log, and both ends matter.
    Each end is cut at a word boundary when one is near."""
    if len(text) <= limit:
        return text
    half = max(0, limit // 2)
    head, tail = text[:half], text[len(text) - half:]
    space = head.rfind(" ")
    if space >= half * 3 // 4:
        head = head[:space]
    space = tail.find(" ")
    if 0 <= space <= half // 4:
        tail = tail[space + 1:]
    return head.rstrip() + mark + tail.lstrip()
