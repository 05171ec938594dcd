"""Chunking source text at definitions, with merging of small pieces and windows for big ones."""
from stele.index.chunks import MAX_BYTES, MAX_LINES, definition_name, spans

PY = '''\
"""Auth middleware."""
import time


class RateLimiter:
    """Counts requests per address."""

    def check(self, addr):
        return self.counts.get(addr, 0) < self.limit

    def hit(self, addr):
        self.counts[addr] = self.counts.get(addr, 0) + 1


# Login runs after the limiter.
def login(request):
    if not LIMITER.check(request.addr):
        raise TooMany()
    return authenticate(request)
'''


def lines_of(text: str, span) -> list[str]:
    return text.split("\n")[span.start - 1:span.end]


def test_definition_names_across_languages():
    assert definition_name("def check(self):") == "check"
    assert definition_name("    async def fetch():") == "fetch"
    assert definition_name("export default async function handler(req) {") == "handler"
    assert definition_name("func (r *Repo) Save(ctx context.Context) error {") == "Save"
    assert definition_name("pub(crate) fn parse(input: &str) -> Result<()> {") == "parse"
    assert definition_name("public static class Builder {") == "Builder"
    assert definition_name("x = compute()") is None


def test_small_definitions_are_merged_and_keep_their_names():
    found = spans(PY)
    assert len(found) == 1 and (found[0].start, found[0].end) == (1, 19)
    assert found[0].symbol == "RateLimiter" and found[0].names == ("RateLimiter", "check", "hit", "login")


def test_definitions_start_chunks_when_they_are_big_enough():
    body = "".join(f"    x{n} = {n}\n" for n in range(30))
    text = f"import os\n\n\ndef first():\n{body}\n\n# about second\ndef second():\n{body}"
    found = spans(text)
    assert [(s.start, s.end, s.symbol) for s in found] == [(1, 34, "first"), (37, 68, "second")]
    assert lines_of(text, found[1])[0] == "# about second"  # the comment above belongs to the definition


def test_closing_braces_do_not_start_a_chunk():
    body = "".join(f"  let x{n} = {n};\n" for n in range(30))
    text = f"function a() {{\n{body}\n}}\n\nfunction b() {{\n{body}}}\n"
    found = spans(text)
    assert [(s.start, s.symbol) for s in found] == [(1, "a"), (35, "b")]


def test_big_pieces_are_cut_into_windows_within_the_limits():
    body = "".join(f"    value_{n} = compute_something_long({n}, 'padding text to make it wide')\n" for n in range(300))
    found = spans(f"def huge():\n{body}")
    assert len(found) > 3 and found[0].symbol == "huge"
    assert all(s.end - s.start + 1 <= MAX_LINES for s in found)
    text = f"def huge():\n{body}"
    assert all(len("\n".join(lines_of(text, s)).encode()) <= MAX_BYTES for s in found)
    assert [s.start for s in found[1:]] == [p.end + 1 for p in found[:-1]]  # nothing lost between windows


def test_known_definitions_override_the_heuristic():
    text = "a = 1\nb = 2\nc = 3\n" * 40
    found = spans(text, definitions=[(61, 120)])
    assert [(s.start, s.end) for s in found] == [(1, 60), (61, 120)]


def test_empty_text_has_no_chunks():
    assert spans("") == [] and spans("\n\n") == []
