"""errors.message: what a message shows of what it quotes is redacted, neutralized and bounded, fast
whatever its length, and never a part of a secret cut at an edge."""
import random
import re
import string
import time

import pytest

from stele.errors import MESSAGE_LINE_CHARS, message

RND = random.Random(4)
TOKEN = "gh" + "p_" + "".join(RND.choice(string.ascii_letters + string.digits) for _ in range(36))
FILLER = "lorem ipsum dolor "


def _text(at: int, total: int, secret: str = TOKEN) -> str:
    """`total` characters of words with `secret` starting at `at`, a word of its own."""
    before = (FILLER * (at // len(FILLER) + 1))[:at - 1] + " "
    after = " " + (FILLER * ((total - at) // len(FILLER) + 2))[:max(0, total - at - len(secret) - 1)]
    return before + secret + after


def _leaks(out: str, secret: str) -> bool:
    """Any 8 characters of the secret in `out`."""
    return any(secret[i:i + 8] in out for i in range(len(secret) - 7))


def test_a_50_mb_id_is_echoed_bounded_and_fast():
    """A 50 MB id through MCP was redacted whole before it was cut: ~40 s for a 40-character echo."""
    huge = "no fact with id DEC-" + "A" * 50_000_000 + "\x1b]0;owned\x07 in docs/memory/: `stele list` shows the ids"
    start = time.monotonic()
    out = message(huge)
    assert time.monotonic() - start < 5  # ~0.1 s; redacting it whole took ~40 s
    assert out.startswith("no fact with id DEC-AAAA") and out.endswith("`stele list` shows the ids")
    assert "[... 50,000,074 characters in all ...]" in out and len(out) < 1_000 and "\x1b" not in out


@pytest.mark.parametrize("edge", ["head", "tail"])
def test_a_secret_across_an_edge_of_what_is_kept_is_redacted_whole(edge):
    """Placed at every offset across the edge of the kept start (or end) of a 1 MB text: the token is
    replaced by its marker or left out, never shown in part."""
    total, half = 1_000_000, MESSAGE_LINE_CHARS // 2
    cut = half if edge == "head" else total - half
    for at in range(cut - len(TOKEN) - 2, cut + 3, 3):
        out = message(_text(at, total))
        assert not _leaks(out, TOKEN), (at, out[half - 100:half + 100])


def test_an_assigned_secret_across_an_edge_is_left_out():
    secret = "".join(RND.choice(string.ascii_letters + string.digits) for _ in range(24))
    half = MESSAGE_LINE_CHARS // 2
    for at in range(half - 40, half + 3, 3):
        out = message(_text(at, 1_000_000, f"DB_PASSWORD={secret}"))
        assert not _leaks(out, secret), at


def test_a_message_of_up_to_64_000_characters_is_redacted_whole_then_cut():
    """The line is cut after the token in it became its marker: the length said is the redacted one."""
    out = message(_text(32_000, 64_000))
    assert not _leaks(out, TOKEN) and re.search(r" \[\.\.\. 63,9\d\d characters in all \.\.\.\] ", out), out[7900:8100]
