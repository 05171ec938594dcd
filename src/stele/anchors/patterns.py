"""Definition patterns per language, kept apart from the scanning code in `symbols.py`.

Each pattern matches the start of a definition of one name. A pattern whose shape could also be a call
(`name(...)` inside a class body) is marked `needs_body`: it counts only when a `{` body follows, so
`check(x);` is never taken for the definition of `check`.
"""
from __future__ import annotations

import re
from functools import lru_cache

from ..plain import dataclass


@dataclass(frozen=True)
class Pattern:
    rx: re.Pattern[str]
    needs_body: bool = False


_JS_MODS = r"(?:(?:export|default|declare|abstract|async)\s+)*"
_JS_MEMBER_MODS = (r"(?:(?:public|private|protected|static|readonly|async|override|abstract|declare|get|"
                   r"set)\s+)*")
_JAVA_MODS = (r"(?:(?:public|private|protected|static|final|abstract|synchronized|native|default|strictfp|"
              r"transient|volatile|sealed|non-sealed)\s+|@\w+(?:\([^)]*\))?\s+)*")
_RUST_VIS = r"(?:pub(?:\([^)]*\))?\s+)?"
_RUBY = (r"^[ \t]*def\s+(?:self\.)?NAME(?![\w$])", r"^[ \t]*(?:class|module)\s+(?:[\w]+::)*NAME\b",
         r"^[ \t]*NAME\s*=")
_PYTHON = (r"^[ \t]*(?:async\s+)?def\s+NAME\b", r"^[ \t]*class\s+NAME\b", r"^[ \t]*NAME\s*[:=]")

# language -> (top-level templates, member templates); NAME is replaced by the escaped name.
# A template ending in `!` needs a body.
_TEMPLATES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "js": (
        (rf"^[ \t]*{_JS_MODS}function\s*\*?\s*NAME\b", rf"^[ \t]*{_JS_MODS}class\s+NAME\b",
         rf"^[ \t]*{_JS_MODS}(?:const|let|var)\s+NAME\b"),
        (rf"^[ \t]*{_JS_MEMBER_MODS}\*?#?NAME\s*(?:<[^>\n]*>)?\s*\(!",
         rf"^[ \t]*{_JS_MEMBER_MODS}#?NAME\s*[?!]?\s*[=:]"),
    ),
    "go": (
        (r"^func\s+NAME\s*[\[(]", r"^func\s*\([^)]*\)\s*NAME\s*[\[(]", r"^[ \t]*type\s+NAME\b",
         r"^[ \t]*(?:var|const)\s+NAME\b"),
        (r"^[ \t]+NAME\s+\S",),
    ),
    "rust": (
        (rf"^[ \t]*{_RUST_VIS}(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+NAME\b",
         rf"^[ \t]*{_RUST_VIS}(?:struct|enum|trait|union|type|mod)\s+NAME\b",
         r"^[ \t]*macro_rules!\s*NAME\b", rf"^[ \t]*{_RUST_VIS}(?:const|static)\s+(?:mut\s+)?NAME\b"),
        (rf"^[ \t]*{_RUST_VIS}(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+NAME\b",
         rf"^[ \t]*{_RUST_VIS}NAME\s*:"),
    ),
    "java": (
        (rf"^[ \t]*{_JAVA_MODS}(?:class|interface|enum|record|@interface)\s+NAME\b",),
        (rf"^[ \t]*{_JAVA_MODS}(?:class|interface|enum|record|@interface)\s+NAME\b",
         rf"^[ \t]*{_JAVA_MODS}(?:<[^>\n]+>\s+)?(?:[\w$.]+(?:<[^\n(]*?>)?(?:\[\])*\s+)?NAME\s*\(!",
         rf"^[ \t]*{_JAVA_MODS}[\w$.]+(?:<[^\n(]*?>)?(?:\[\])*\s+NAME\s*[=;]"),
    ),
    # Ruby and Python (unparsable) define members as they define top-level names
    "ruby": (_RUBY, _RUBY),
    "python-text": (_PYTHON, _PYTHON),
}
_TS_EXTRA = (rf"^[ \t]*{_JS_MODS}(?:interface|type|enum|namespace|module)\s+NAME\b",)


def _compile(template: str, name: str) -> Pattern:
    needs_body = template.endswith("!")
    body = template[:-1] if needs_body else template
    return Pattern(re.compile(body.replace("NAME", re.escape(name)), re.M), needs_body)


@lru_cache(maxsize=2048)
def definition_patterns(lang: str, name: str, member: bool) -> tuple[Pattern, ...]:
    top, members = _TEMPLATES["js" if lang == "ts" else lang]
    templates = members if member else top + (_TS_EXTRA if lang == "ts" else ())
    return tuple(_compile(t, name) for t in templates)


@lru_cache(maxsize=512)
def go_method(owner: str, name: str) -> tuple[Pattern, ...]:
    """Go: `func (r *Owner) name(` (any receiver name, pointer or not, generic or not)."""
    o, n = re.escape(owner), re.escape(name)
    return (Pattern(re.compile(rf"^func\s*\(\s*\w*\s*\*?\s*{o}(?:\[[^\]]*\])?\s*\)\s*{n}\s*[\[(]", re.M)),)


def impl_blocks(owner: str) -> re.Pattern[str]:
    """Rust: the header of an `impl` block for `owner` (`impl Foo`, `impl<T> Trait for Foo<T>`)."""
    return re.compile(rf"^[ \t]*(?:unsafe\s+)?impl\b[^{{;]*?(?:\bfor\s+|\s|>)(?:[\w:]+::)?"
                      rf"{re.escape(owner)}\b[^{{;]*\{{", re.M)


_ANY_NAME = r"(?P<name>[A-Za-z_$][\w$]*)"


@lru_cache(maxsize=32)
def name_patterns(lang: str, member: bool) -> tuple[Pattern, ...]:
    """Every definition of any name (the name in group `name`): how a file's definitions are listed
    when a symbol is looked for by its content rather than by its name."""
    top, members = _TEMPLATES["js" if lang == "ts" else lang]
    templates = members if member else top + (_TS_EXTRA if lang == "ts" else ())
    found = []
    for t in templates:
        needs_body = t.endswith("!")
        body = t[:-1] if needs_body else t
        found.append(Pattern(re.compile(body.replace("NAME", _ANY_NAME), re.M), needs_body))
    return tuple(found)
