"""How a file someone else owns stores its text, so Stele's edit of it keeps that form.

The installers edit text with `\\n` line ends. A user's file may be CRLF (Windows editors), start with
a byte-order mark, be UTF-16, hold bytes that are not UTF-8 at all, or lack a final newline. `decode`
gives the text an edit works on and the file's `Form`; `encode` puts an edited text back in that form,
so every byte Stele did not mean to change stays as it was (the final newline is the edit's business:
each edit keeps the one the file had). Line ends are converted only when every line of the file ends
in CRLF; a file that mixes them keeps its `\\r`s as text. Bytes that do not decode survive as
surrogate escapes and are written back unchanged.
"""
from __future__ import annotations

import codecs
from dataclasses import dataclass

BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


@dataclass(frozen=True)
class Form:
    bom: bytes = b""
    encoding: str = "utf-8"
    crlf: bool = False


PLAIN = Form()


def decode(data: bytes) -> tuple[str, Form]:
    bom, encoding = next(((b, e) for b, e in BOMS if data.startswith(b)), (b"", "utf-8"))
    text = data[len(bom):].decode(encoding, "surrogateescape" if encoding == "utf-8" else "strict")
    crlf = "\r\n" in text and text.count("\n") == text.count("\r\n")
    return (text.replace("\r\n", "\n") if crlf else text), Form(bom, encoding, crlf)


def encode(text: str, form: Form) -> bytes:
    if form.crlf:
        text = text.replace("\n", "\r\n")
    errors = "surrogateescape" if form.encoding == "utf-8" else "strict"
    return form.bom + text.encode(form.encoding, errors)
