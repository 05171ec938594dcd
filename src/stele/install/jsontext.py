"""A harness's JSON settings file as text: read the way the harness reads it, edited only where
Stele's entries go.

Each harness reads its file in its own dialect, and Stele reads it in the same one (docs/hooks.md,
"Installing and uninstalling safely"): strict JSON for most, JSON with `//` and `/* */` comments for
Gemini CLI (it strips them with strip-json-comments before `JSON.parse`, so a trailing comma is an
error there too, and here). A comment is blanked to spaces, line breaks kept, so an offset in the
blanked text is the same offset in the file; the standard library's decoder then checks the whole
file (`load_object`, the installer's one reading of JSON) and finds where each value starts and ends.

An edit is a splice at those offsets, never a re-serialisation: a member or item goes after the last
one, in its indentation and separators, or comes out with its separator and, when it had lines of its
own, those lines. Every other byte stays as it was: comments, blank lines, key layout, a missing
final newline. Taking out what was added gives the text back byte for byte, which is what lets
uninstall work on a file that was changed since. A new file (or an empty one) gets the canonical form,
2 spaces.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from .files import EditError

# a string (escapes included), a // comment, or a /* comment (closed or not: an open one is refused)
_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)')
_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


def _line(text: str, i: int) -> int:
    return text.count("\n", 0, i) + 1


def _finite(text: str) -> float:
    """A number as Python reads it, refused when it would not be written back as JSON (1e400 reads as
    inf, which `json.dumps` writes as `Infinity`: no harness would read the file again)."""
    value = float(text)
    if math.isinf(value):
        raise EditError(f"holds the number {text[:40]}, which Stele cannot write back as it is")
    return value


def _comments(text: str):
    for m in _TOKENS.finditer(text):
        if m.group()[0] != '"':
            yield m


def _blank(text: str) -> str:
    """`text` with every comment turned into spaces (its line breaks kept)."""
    parts, last = [], 0
    for m in _comments(text):
        token = m.group()
        if token.startswith("/*") and (len(token) < 4 or not token.endswith("*/")):
            raise EditError(f"has a /* comment that is never closed (line {_line(text, m.start())})")
        parts += [text[last:m.start()], re.sub(r"[^\n]", " ", token)]
        last = m.end()
    return "".join(parts) + text[last:] if parts else text


def _why(text: str, blanked: str, comments: bool, error: json.JSONDecodeError) -> str:
    """What is wrong, said the way a person fixes it: a comment or trailing comma the harness does not
    accept in this file, else the decoder's own words."""
    first = None if comments else next(_comments(text), None)
    if first is not None and first.start() <= error.pos:
        return (f"has a comment (line {_line(text, first.start())}), which Stele does not accept in this "
                "harness's file (strict JSON; docs/hooks.md says which harnesses accept comments)")
    before = blanked[:error.pos].rstrip(_WS)
    if blanked[error.pos:error.pos + 1] in ("}", "]") and before.endswith(","):
        return f"has a trailing comma (line {_line(text, len(before))}), which this harness does not accept"
    return f"not valid JSON ({error})"


def _parse(text: str, comments: bool) -> tuple[dict, str]:
    blanked = _blank(text) if comments else text
    try:
        data = json.loads(blanked, parse_float=_finite)
    except EditError:
        raise
    except json.JSONDecodeError as e:
        raise EditError(_why(text, blanked, comments, e)) from None
    except ValueError as e:
        raise EditError(f"not valid JSON ({e})") from None
    except RecursionError:
        raise EditError("nested too deeply to read") from None
    if not isinstance(data, dict):
        raise EditError("not a JSON object")
    return data, blanked


def load_object(text: str, comments: bool = False) -> dict:
    """A JSON settings file's text as an object (EditError when it is not one). `comments`: the
    harness accepts `//` and `/* */` comments in this file (Gemini CLI)."""
    return _parse(text, comments)[0]


def blank_of(text: str, comments: bool) -> bool:
    """Whether the file holds nothing but white space (and, where they are allowed, comments)."""
    return not (_blank(text) if comments else text).strip(_WS)


def had(before: str | None, comments: bool, *path: str) -> dict:
    """The object at `path` in the text Stele first found (empty when there was none, or it does not
    read): the keys an uninstall leaves in place even when taking Stele's entries out empties them."""
    try:
        value: Any = load_object(before, comments) if before and not blank_of(before, comments) else {}
    except EditError:
        return {}
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def canonical(data: dict) -> str:
    """A new file's text: 2 spaces, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def checked(doc: JsonText, expected: dict) -> str:
    """The edited text, once it reads as exactly what the edit meant (key order included): a layout
    the splice got wrong is refused, never written."""
    if json.dumps(doc.data) != json.dumps(expected):
        raise EditError("Stele could not place its entries in this file's layout")
    return doc.text


Path = tuple[str | int, ...]  # keys and list indexes from the root object to a value


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _indent_at(text: str, i: int) -> str:
    start = _line_start(text, i)
    line = text[start:i]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _alone(text: str, i: int) -> bool:
    """Whether only spaces come before offset `i` on its line."""
    return not text[_line_start(text, i):i].strip(" \t")


class JsonText:
    """A settings file's text, edited in place. `data` is always what the current text reads as."""

    def __init__(self, text: str, comments: bool = False) -> None:
        self.comments = comments
        self._read(text)
        root_items, close = self._items(self.root)
        inside = self.blanked[self.root:close]
        self.multiline = "\n" in inside
        self.unit = next((line[:len(line) - len(line.lstrip(" \t"))] for line in inside.split("\n")[1:]
                          if line.strip() and line[:1] in " \t"), "  ")
        self.colon = ": "
        if root_items:
            _, _, key_end, value, _ = root_items[0]
            between = self.text[key_end:value]
            if between == self.blanked[key_end:value] and re.fullmatch(r"[ \t]*:[ \t]*", between):
                self.colon = between
        self.comma = ", " if self.colon.endswith((" ", "\t")) else ","

    def _read(self, text: str) -> None:
        self.data, self.blanked = _parse(text, self.comments)
        self.text = text
        self.root = self._skip(0)

    def _skip(self, i: int) -> int:
        b = self.blanked
        while i < len(b) and b[i] in _WS:
            i += 1
        return i

    def _items(self, i: int) -> tuple[list[tuple[str | None, int, int, int, int]], int]:
        """The members of the object at offset `i` as (key, start, key end, value start, value end), or
        the items of the array there as (None, start, start, start, end); and the offset that closes it."""
        b, close = self.blanked, "}" if self.blanked[i] == "{" else "]"
        out: list[tuple[str | None, int, int, int, int]] = []
        j = self._skip(i + 1)
        while b[j] != close:
            key, key_end, value = None, j, j
            if close == "}":
                key, key_end = _DECODER.raw_decode(b, j)
                value = self._skip(self._skip(key_end) + 1)  # past the colon
            end = _DECODER.raw_decode(b, value)[1]
            out.append((key, j, key_end, value, end))
            j = self._skip(end)
            if b[j] == ",":
                j = self._skip(j + 1)
        return out, j

    def _at(self, path: Path) -> int:
        """Where the value at `path` starts (the last member of a repeated key: the one JSON reads)."""
        i = self.root
        for step in path:
            items, _ = self._items(i)
            i = [v for k, _, _, v, _ in items if k == step][-1] if isinstance(step, str) else items[step][3]
        return i

    def index(self, path: Path, key: str) -> int:
        """The position among the object's members at `path` of the member `key` that JSON reads."""
        items, _ = self._items(self._at(path))
        return max(n for n, item in enumerate(items) if item[0] == key)

    def _render(self, value: Any, key: str | None, base: str | None) -> str:
        """`value` (as the member `key`), on lines of its own indented from `base`, or on one line."""
        if base is None:
            body = json.dumps(value, ensure_ascii=False, separators=(self.comma, self.colon))
        else:
            body = json.dumps(value, ensure_ascii=False, indent=self.unit,
                              separators=(",", self.colon)).replace("\n", "\n" + base)
        return body if key is None else json.dumps(key, ensure_ascii=False) + self.colon + body

    def add(self, path: Path, value: Any, key: str | None = None) -> None:
        """Put `value` last in the array at `path`, or as member `key` last in the object there."""
        t, b = self.text, self.blanked
        start = self._at(path)
        items, close = self._items(start)
        if not items:
            inside = t[start + 1:close]
            if "\n" in inside and _alone(t, close):  # `{` ... `}` on a line of its own: a line before it
                base = _indent_at(t, close)
                at = _line_start(t, close)
                new = t[:at] + base + self.unit + self._render(value, key, base + self.unit) + "\n" + t[at:]
            elif not inside.strip(_WS) and (self.multiline or not path):
                base = _indent_at(t, start)
                new = (t[:start + 1] + "\n" + base + self.unit + self._render(value, key, base + self.unit)
                       + "\n" + base + t[close:])
            elif not inside.strip(_WS):
                new = t[:start + 1] + self._render(value, key, None) + t[close:]
            else:  # a comment inside, on the closing line
                new = t[:close] + self._render(value, key, None) + t[close:]
            return self._read(new)
        _, first, _, _, end = items[-1]
        if _alone(t, first):  # one per line: a line of its own after the last one's
            base = _indent_at(t, first)
            line_end = t.find("\n", end)
            if not (0 <= line_end < close and not b[end:line_end].strip(" \t\r")) or any(
                    m.start() < line_end < m.end() for m in _comments(t[:close])):
                line_end = end  # something else on that line: straight after the value
            new = t[:end] + "," + t[end:line_end] + "\n" + base + self._render(value, key, base) + t[line_end:]
        else:  # on one line: after it, with the separator the items already use
            comma = self.comma
            if len(items) > 1:
                between = t[items[-2][4]:first]
                if between == b[items[-2][4]:first] and re.fullmatch(r"[ \t]*,[ \t]*", between):
                    comma = between
            new = t[:end] + comma + self._render(value, key, None) + t[end:]
        self._read(new)

    def drop(self, path: Path, n: int) -> None:
        """Take out the `n`th member or item of the object or array at `path`, with the separator that
        went with it and, when it had lines of its own, those lines."""
        t, b = self.text, self.blanked
        start = self._at(path)
        items, close = self._items(start)
        _, first, _, _, end = items[n]

        def plain(a: int, z: int) -> bool:  # white space and commas only: no comment in between
            return t[a:z] == b[a:z]

        if len(items) == 1:
            if not t[start + 1:first].strip(_WS) and not t[end:close].strip(_WS):
                return self._read(t[:start + 1] + t[close:])
            return self._read(t[:first] + t[end:])
        if n < len(items) - 1:
            following = items[n + 1][1]
            comma = b.index(",", end)
            line_end = t.find("\n", comma)
            if _alone(t, first) and 0 <= line_end < following and not t[comma + 1:line_end].strip(" \t\r"):
                return self._read(t[:_line_start(t, first)] + t[line_end + 1:])
            if plain(end, following):
                return self._read(t[:first] + t[following:])
            return self._read(t[:first] + t[comma + 1:])
        previous = items[n - 1][4]
        if plain(previous, first):
            return self._read(t[:previous] + t[end:])
        comma = b.index(",", previous)
        line_end = t.find("\n", end)
        if _alone(t, first) and 0 <= line_end < close and not t[end:line_end].strip(" \t\r"):
            return self._read(t[:comma] + t[comma + 1:_line_start(t, first)] + t[line_end + 1:])
        self._read(t[:comma] + t[comma + 1:first] + t[end:])
