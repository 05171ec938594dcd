"""Secrets never reach disk: every write and send path passes its text through one `Redactor`.

Three kinds of evidence, in one pass over the text:
- token shapes vendors issue (fixed prefixes, lengths, alphabets), listed as data in `redact_rules`;
- keyword assignments in .env, YAML, JSON, TOML, INI and code (`DB_PASSWORD=...`, `"api_key": "..."`,
  `secret_key = '...'`), where the name says a secret follows and the value-shape check decides
  whether what follows is one: references (`os.environ["X"]`, `${VAR}`, `{{ secrets.X }}`), placeholders
  (`<your-token>`, `changeme`, `xxxx`) and the documented AWS example keys are left alone;
- the configured `redaction.patterns`.
gitleaks' own false-positive defences are taken as general rules, never as its samples' values: a
shape's entropy floor and drawn-part check, example values published on purpose (`PUBLISHED`), a
vendor that issues one credential format claiming the values under its name (`ONE_FORMAT`), base64 of
JSON judged by what it decodes to, and XML Schema type names (`looks_random`).
All matches are collected first and merged, so a token inside an assignment is one secret, counted
once, and the writer is told each kind once ("1 GitHub token", never "2" for one token). The module
imports only the standard library and compiles a rule only when its keyword is in the text: the hooks
and every session-log line come through here (docs/security.md says why no detector library is used).
"""
from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache

from .lazyre import lazy
from .plain import dataclass, field
from .redact_rules import KEY_QUALIFIERS, ONE_FORMAT, PASSWORD_WORDS, PUBLISHED, SECRET_WORDS, SHAPES, VENDORS
from .textcut import counted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MARKER = "[REDACTED:{}]"
_MARKER_RX = lazy(r"\[REDACTED:[^\]\n]{1,60}\]")


@dataclass
class Redaction:
    """The cleaned text and the distinct secrets removed from it, as (kind, value) pairs (in memory
    only, to count each secret once across fields)."""
    text: str
    secrets: set[tuple[str, str]] = field(default_factory=set)

    @property
    def found(self) -> Counter:
        return Counter(kind for kind, _ in self.secrets)

    def summary(self) -> str:
        return describe(self.found)


class Tally:
    """What one command redacted over all the fields it wrote: `clean = tally.clean(red, text)`."""

    def __init__(self) -> None:
        self.secrets: set[tuple[str, str]] = set()

    def add(self, result: Redaction) -> str:
        self.secrets |= result.secrets
        return result.text

    @property
    def found(self) -> Counter:
        return Counter(kind for kind, _ in self.secrets)

    def summary(self) -> str:
        return describe(self.found)


def describe(found: Counter) -> str:
    """`1 AWS access key id, 2 bearer tokens` (never the secrets themselves)."""
    return ", ".join(counted(n, kind, kind if kind.endswith("s") else None) for kind, n in sorted(found.items()))


# Each keyword once, with the shapes that need it: testing 173 keywords beats testing each of 117
# shapes' keywords in turn by ~10x, and the hooks redact every value of every session line.
_BY_KEYWORD: dict[str, list[int]] = {}
for _rank, _shape in enumerate(SHAPES):
    for _k in _shape.keywords:
        _BY_KEYWORD.setdefault(_k, []).append(_rank)
_KEYWORDS = tuple(_BY_KEYWORD)


@cache
def _compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


class Redactor:
    def __init__(self, extra_patterns: Iterable[str] = ()) -> None:
        self.extra: list[re.Pattern[str]] = []
        for pattern in extra_patterns:
            try:
                self.extra.append(re.compile(pattern))
            except re.error as e:  # config.load refuses these with the file named; this is the library's net
                raise ValueError(f"redaction.patterns entry {pattern!r} is not a valid regular expression "
                                 f"({e})") from None

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, kind) of each secret, merged where rules overlap, in text order."""
        return self._spans(text, _ALL)

    def spans_many(self, texts: Sequence[str]) -> list[list[tuple[int, int, str]]]:
        """`spans` of each text of a batch (`doctor`'s 10,000 fact files): a rule whose keywords occur
        in none of the texts is set aside once for the batch instead of being ruled out text by text
        (on a record, 15 of 174 keywords occur at all). The result is `spans` of each text, exactly."""
        rules = _Rules.for_texts(texts)
        return [self._spans(text, rules) for text in texts]

    def _spans(self, text: str, rules: _Rules) -> list[tuple[int, int, str]]:
        if not text:
            return []
        lower = text.lower()
        found: list[tuple[int, int, int, str]] = []  # start, end, priority, kind
        for rank in sorted({r for k in rules.keywords if k in lower for r in _BY_KEYWORD[k]}):
            shape = SHAPES[rank]
            rx = _compiled(shape.pattern)
            left = _compiled(f"[{shape.left}]") if shape.left else None
            for m in rx.finditer(text):
                if left and m.start() and left.match(text, m.start() - 1):
                    continue  # inside a longer token
                group = "s" if "s" in rx.groupindex and m.group("s") is not None else 0
                start, end = m.span(group)
                exact = shape.check == "exact"
                value = m.group(group)
                if start < end and (exact or not written_out(value)) and \
                        (not shape.check or exact or CHECKS[shape.check](value)) and \
                        (not shape.entropy or entropy(value) >= shape.entropy) and not published(value):
                    found.append((start, end, rank, shape.kind))
        for start, end, kind in assignments(text, lower, rules.hints):
            if not published(text[start:end]):
                found.append((start, end, len(SHAPES), kind))
        for rx in self.extra:
            for m in rx.finditer(text):
                if m.end() > m.start():
                    found.append((m.start(), m.end(), len(SHAPES) + 1, "configured pattern"))
        if not found:
            return []
        markers = [m.span() for m in _MARKER_RX.finditer(text)]
        merged: list[list] = []
        for start, end, rank, kind in sorted(found):
            if any(s <= start and end <= e for s, e in markers):
                continue  # already redacted (idempotence)
            if merged and start < merged[-1][1]:
                last = merged[-1]
                last[1] = max(last[1], end)
                if rank < last[2]:
                    last[2], last[3] = rank, kind
            else:
                merged.append([start, end, rank, kind])
        return [(s, e, kind) for s, e, _, kind in merged]

    def find(self, text: str) -> list[tuple[str, int]]:
        """(kind, offset) of each secret in `text`, to say where without repeating it."""
        return [(kind, start) for start, _, kind in self.spans(text)]

    def redact(self, text: str) -> Redaction:
        return self.apply(text, self.spans(text))

    def redact_data(self, value: Any, tally: Tally) -> Any:
        """`value` (JSON-like: strings, lists, dicts, anything else kept as is) with every string in it
        redacted, the secrets counted in `tally`: a session-log entry's fields, a fact's unknown keys."""
        if isinstance(value, str):
            return tally.add(self.redact(value))
        if isinstance(value, dict):
            return {k: self.redact_data(v, tally) for k, v in value.items()}
        if isinstance(value, list):
            return [self.redact_data(v, tally) for v in value]
        return value

    def redact_lines(self, text: str) -> str:
        """`text` redacted with its line breaks kept: each secret's marker stands on the line where the
        secret began and the lines it ran over stay, empty, so every line keeps its number. For text
        that is cut by line ranges after it is read (a source file into a snapshot's code chunks): a
        private key split between two chunks would otherwise reach one of them as bare base64 lines,
        which no rule can tell from data without the `BEGIN` line."""
        spans = self.spans(text)
        if not spans:
            return text
        out, pos = [], 0
        for start, end, kind in spans:
            out += [text[pos:start], MARKER.format(kind), "\n" * text.count("\n", start, end)]
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def redact_many(self, texts: Sequence[str]) -> list[Redaction]:
        """`redact` of each text of a batch, with `spans_many`'s saving."""
        return [self.apply(text, spans) for text, spans in zip(texts, self.spans_many(texts), strict=True)]

    @staticmethod
    def apply(text: str, spans: list[tuple[int, int, str]]) -> Redaction:
        """`text` with these of its `spans` (as `spans` finds them) replaced by markers."""
        result = Redaction(text)
        if not spans:
            return result
        out, pos = [], 0
        for start, end, kind in spans:
            out.append(text[pos:start])
            out.append(MARKER.format(kind))
            result.secrets.add((kind, text[start:end]))
            pos = end
        out.append(text[pos:])
        result.text = "".join(out)
        return result


_default: Redactor | None = None


def redact(text: str, extra_patterns: Iterable[str] = ()) -> Redaction:
    """Redact with the built-in rules plus `extra_patterns` (from `redaction.patterns`)."""
    global _default
    extra = tuple(extra_patterns)
    if extra:
        return Redactor(extra).redact(text)
    if _default is None:
        _default = Redactor()
    return _default.redact(text)


# ---- keyword assignments -------------------------------------------------------------------------

_HINT_WORDS = ("pass", "pwd", "pw", "secret", "token", "key", "auth", "cred", "cookie", "session", "jwt",
               "bearer", *sorted({v for v in VENDORS if len(v) > 3}, key=len, reverse=True))


def _hint_pattern(hints: tuple[str, ...]) -> str:
    """The alternation that finds hint words, in `_HINT_WORDS`' order (the leftmost alternative wins,
    so the order is part of the rule): `pw` only as a word end (`pwd` is its own hint). `_hint_spans`
    finds its matches without compiling it."""
    return "|".join([r"pw\b"] * ("pw" in hints) + [w for w in hints if w != "pw"])


def _hint_spans(lower: str, hints: tuple[str, ...]) -> list[tuple[int, int]]:
    """The spans `re.finditer(_hint_pattern(hints), lower)` gives, found with `str.find`: compiling
    that alternation of ~60 words cost a hook's process ~1 ms, for the few words a text holds. At a
    position the first alternative of the pattern that occurs there wins (`pw`, then `hints` in
    order), and the next match is looked for from its end, as `finditer` does. `pw` counts only before
    a character that is not a word character (the pattern's word boundary; `str.isalnum` or `_` is
    exactly `re`'s word character, every code point checked) or at the end."""
    found: list[tuple[int, int, int]] = []
    for order, word in enumerate(sorted(hints, key=lambda w: w != "pw")):  # stable: `pw` first, then in order
        at = lower.find(word)
        while at >= 0:
            end = at + len(word)
            if word != "pw" or end == len(lower) or not (lower[end].isalnum() or lower[end] == "_"):
                found.append((at, order, end))
            at = lower.find(word, at + 1)
    found.sort()
    out: list[tuple[int, int]] = []
    pos = 0
    for start, _, end in found:
        if start >= pos:
            out.append((start, end))
            pos = end
    return out


class _Rules:
    """The literals a scan tests: every shape keyword and hint word (`_ALL`), or, for a known batch of
    texts, those that occur in at least one of them. A keyword holds no whitespace, so it occurs in
    a text only inside one of the text's words: the batch's distinct lower-case words (a few
    thousand for a whole record) are all there is to search."""

    def __init__(self, keywords: tuple[str, ...], hints: tuple[str, ...]) -> None:
        self.keywords, self.hints = keywords, hints

    @classmethod
    def for_texts(cls, texts: Iterable[str]) -> _Rules:
        words: set[str] = set()
        for text in texts:
            words.update(text.lower().split())
        vocabulary = "\n".join(words)
        return cls(tuple(k for k in _KEYWORDS if k in vocabulary), tuple(w for w in _HINT_WORDS if w in vocabulary))


_ALL = _Rules(_KEYWORDS, _HINT_WORDS)

_ASSIGN = (
    r"(?P<name>[A-Za-z_$@][\w.$@-]{0,80}?)(?P<nq>[\"'`\]]?)"
    r"(?:\s*:\s*[A-Za-z_][\w\[\]., |]{0,40}?(?=\s*=[^=>]))?"          # a type annotation: `key: str = ...`
    r"(?:[ \t]+(?:string|String|\[\]byte)(?=[ \t]*=))?"                   # Go's `var key string = ...`
    # operators: Makefile `:=`, `::=`, `:::=`, `?=`; PHP `.=`, `??=`; `+=`; `,` between a quoted name
    # and a quoted value (`System.setProperty("X_TOKEN", "...")`, checked in `assignments`)
    r"(?P<sp>[ \t]*)(?P<op>:{1,3}=|=>|\?\??=|\|\|=|\.=|\+=|<-|=(?!=)|:(?![:/\\])|,(?=[ \t]*[\"'`]))[ \t]*"
    r"(?:(?P<q>[\"'`])(?P<qv>(?:(?!(?P=q)).){1,400}?)(?P=q)|(?P<bare>[^\s\"'`,;]{1,400}))")
_WORDS = lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# What must follow a hint for `_ASSIGN` to match with the hint inside its name: the rest of the name,
# an optional closing quote, then (after blanks or a type annotation's `:`) an operator's first
# character. Most hint words in prose ("rotate the key monthly") fail here, before the full pattern.
_VIABLE = lazy(r"[\w.$@-]*[\"'`\]]?\s*(?:(?:string|String|\[\]byte)\s*)?[:=?|<.+,]")
_TRAILING = ".,;)}]>"


def name_kind(name: str) -> tuple[str, str] | None:
    """(kind, strength) for an assigned name that says a secret follows, else None. The last word
    decides (`token_url`, `API_KEY_ID`, `secret_name` are not secrets); strength is "any" (every
    non-reference value), "random" or "strong" (random and at least 16 characters)."""
    if _BUNDLER.fullmatch(name):
        return "registry credentials", "any"
    words = [w.lower() for w in _WORDS.findall(name.lstrip("$@"))]
    while len(words) > 1 and (words[-1].isdigit() or words[-1] in _TYPE_SUFFIXES):
        words.pop()  # `api_token_123`, `mySecretString`: the word before says what it holds
    if not words:
        return None
    last = words[-1]
    if last in PASSWORD_WORDS or last.endswith(("password", "passwd")):
        return "password", "any"
    if len(words) > 1 and words[-2] in _PUBLIC_QUALIFIERS and last in ("key", "keys", "token"):
        return None  # `public_key`, `primaryKey`, `foreignKey`, `publicToken`, `csrf-token`: no credential
    if last in SECRET_WORDS or last.endswith(("secret", "token", "apikey", "secretkey", "passphrase")):
        return "secret", "random"
    vendor = next((VENDORS[w] for w in words if w in VENDORS), None)
    if last in ("key", "keys"):
        if len(words) > 1 and (words[-2] in KEY_QUALIFIERS or vendor):
            return (f"{vendor} credential" if vendor else "secret"), "random"
        return "secret", "strong"
    if vendor == "Sumo Logic" and (last == "accessid" or words[-2:] == ["access", "id"]):
        return "Sumo Logic credential", "random"  # an access id is half of a Sumo Logic login pair
    if vendor and last not in _NOT_SECRET_SUFFIXES:
        return f"{vendor} credential", "strong"
    return None


# a public or structural key, or a CSRF token (a per-form nonce that grants nothing on its own)
_PUBLIC_QUALIFIERS = frozenset({"public", "primary", "foreign", "pub", "csrf", "xsrf"})


def vendor_of(name: str) -> str | None:
    """The vendor an assigned name names (`telegram_api_token`: Telegram), if any."""
    return next((VENDORS[w] for w in (w.lower() for w in _WORDS.findall(name)) if w in VENDORS), None)


def published(value: str) -> bool:
    """A value published on purpose as an example (`PUBLISHED`): redacting it protects nothing."""
    known = PUBLISHED.get(len(value))
    if not known:
        return False
    import hashlib  # only for a value of a published length (OpenSSL's import costs ~4 ms)

    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32] in known


_TYPE_SUFFIXES = frozenset({"string", "str", "value", "val", "text"})
# Bundler's per-host credentials (`BUNDLE_GEMS__CONTRIBSYS__COM=user:password`, dots written `__`)
_BUNDLER = lazy(r"(?:export\s+)?BUNDLE_[A-Z0-9_]*?[A-Z0-9]__[A-Z0-9_]+")
_NOT_SECRET_SUFFIXES = frozenset({
    "id", "ids", "sid", "name", "names", "url", "uri", "urls", "host", "hostname", "port", "region", "zone",
    "endpoint", "path", "file", "dir", "env", "version", "user", "username", "email", "account", "org",
    "project", "team", "channel", "enabled", "disabled", "type", "mode", "timeout", "level", "count",
})


def assignments(text: str, lower: str | None = None, hints: tuple[str, ...] = _HINT_WORDS
                ) -> list[tuple[int, int, str]]:
    """Spans of secret values assigned to secret-bearing names. The scan starts from each hint word
    (`pass`, `token`, a vendor) and backs up to the start of its name: trying the assignment pattern
    at every position of a long text costs twenty times more. `hints` may leave out words that do
    not occur in the text (`Redactor.spans_many`), never others."""
    out: list[tuple[int, int, str]] = []
    lower = lower if lower is not None else text.lower()
    if not any(w in lower for w in hints):
        return out  # most prompts and session ids: a few substring checks, nothing compiled
    tried: set[int] = set()
    assign = None  # compiled for the first hint that can start a match (~0.7 ms): most hints cannot
    for hint_start, hint_end in _hint_spans(lower, hints):
        if not _VIABLE.match(text, hint_end):
            # no match can hold this hint in its name; nor can a later hint's at the same start (its
            # name would hold this one too), so `tried` need not record it
            continue
        start, lo = hint_start, max(0, hint_start - 80)
        while start > lo and (text[start - 1].isalnum() or text[start - 1] in "_.$@-"):
            start -= 1
        while start < hint_start and not (text[start].isalpha() or text[start] in "_$@"):
            start += 1
        if start in tried or (start and (text[start - 1].isalnum() or text[start - 1] in "_.")):
            continue
        tried.add(start)
        if assign is None:
            assign = _compiled(_ASSIGN)
        m = assign.match(text, start)
        if m is None or m.end("name") < hint_end:
            continue
        if m.group("op") == "," and m.group("nq") not in ("\"", "'", "`"):
            continue  # a comma follows a quoted name only: `("API_TOKEN", "...")`, never prose
        judged = name_kind(m.group("name"))
        if judged is None:
            continue
        kind, strength = judged
        if m.group("qv") is not None:
            value, start = m.group("qv"), m.start("qv")
        else:
            value, start = m.group("bare").rstrip(_TRAILING), m.start("bare")
            shape = _bare_shape(text, m, value)
            if shape is None:
                continue
            if shape == "prose" and strength == "any":
                strength = "random"  # "password: hunter2 was rotated" yes, "password: see the vault" no
        if value and _value_is_secret(value, strength) and _vendor_format(m.group("name"), value):
            out.append((start, start + len(value), kind))
    if "</" in text:
        out.extend(_elements(text))
    if "data:" in lower and "secret" in lower:
        out.extend(_kubernetes_data(text))
    return out


def _vendor_format(name: str, value: str) -> bool:
    """False when the name claims the value for a vendor with one credential format (`ONE_FORMAT`)
    and the value does not have it: `telegram_api_token = "5203:At6po..."` is no Telegram token."""
    fmt = ONE_FORMAT.get(vendor_of(name) or "")  # the value may run on into a JSON escape (`...\\nX=1`)
    return fmt is None or _compiled(f"(?:{fmt})(?![A-Za-z0-9_-])").match(value) is not None


_K8S_KIND = lazy(r"(?im)^\s*kind:\s*[\"']?secret\b")
_K8S_DATA = lazy(r"(?m)^(?P<indent>[ \t]*)data:[ \t]*\n")
_K8S_ENTRY = lazy(r"[ \t]*[\w.-]+:[ \t]*(?:[|>][-+]?[ \t]*\n[ \t]*)?[\"']?(?P<v>[A-Za-z0-9+/]{8,}={0,3})[\"']?")


def _kubernetes_data(text: str) -> list[tuple[int, int, str]]:
    """The base64 values under `data:` of a Kubernetes Secret manifest (each is a secret, however
    plain its name)."""
    if not _K8S_KIND.search(text):
        return []
    out = []
    for block in _K8S_DATA.finditer(text):
        pos, indent = block.end(), len(block.group("indent").expandtabs(2))
        for line in text[pos:].split("\n"):
            if line.strip() and len(line) - len(line.lstrip()) <= indent and \
                    len(line.expandtabs(2)) - len(line.expandtabs(2).lstrip()) <= indent:
                break
            m = _K8S_ENTRY.match(text, pos)
            if m and m.start() == pos:
                out.append((m.start("v"), m.end("v"), "Kubernetes secret"))
            pos += len(line) + 1
    return out


_ELEMENT = lazy(r"<(?P<name>[A-Za-z_][\w.:-]{0,80})>\s*(?P<v>[^<>\s]{1,400})\s*</(?P=name)>")


def _elements(text: str) -> list[tuple[int, int, str]]:
    """XML elements named like a secret: `<apiToken>\n  value\n</apiToken>`."""
    out = []
    for m in _ELEMENT.finditer(text):
        judged = name_kind(m.group("name"))
        if judged and _value_is_secret(m.group("v"), judged[1]):
            out.append((m.start("v"), m.end("v"), judged[0]))
    return out


def _bare_shape(text: str, m: re.Match[str], value: str) -> str | None:
    """An unquoted value is a literal in .env, YAML, INI and shell ("literal"), a word in a sentence
    after `name:` ("prose"), or an expression in code (None)."""
    if not value or value[0] in "([{<*&!|" or m.group("nq") in ("\"", "'"):
        return None  # a JSON number or literal, a Python dict entry naming a variable
    if re.search(r"[(\[]", value) or re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", value):
        return None  # a call, an index or an attribute: os.environ[...], self.token, get_key()
    if m.group("op") == ":":
        # YAML: the value is the rest of the line; in prose more words follow
        rest = text[m.end("bare"):m.end("bare") + 200].split("\n", 1)[0]
        if rest.strip() and not rest.lstrip().startswith(("#", ",", "}")):
            return "prose"
    elif m.group("sp") and re.fullmatch(r"[A-Za-z_][A-Za-z_]*", value):
        return None  # `password = pwd` in code names a variable; INI literals carry digits or symbols
    elif m.group("op") == "=" and not m.group("sp") and re.fullmatch(r"[A-Za-z_]+", value) \
            and not m.group("name").isupper():
        return None  # a keyword argument passing a variable: connect(password=pwd)
    return "literal"


# An interpolation inside a value (Terraform/HCL and shell `${...}`, Helm and Actions `{{ ... }}`,
# Ruby `#{...}`, Terraform directives `%{...}`) is an expression evaluated elsewhere, not a literal.
_INTERPOLATION = lazy(r"\$\{\{.*?\}\}|[$#%]\{[^{}]*\}|\{\{.*?\}\}")
# A file path: folders, then a file name with an extension (`state/prod/terraform.tfstate`).
_PATH_LIKE = lazy(r"(?:[\w.@+-]+/)+[\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,7}|(?:\./|\.\./|~/|/)[\w.@+/-]*")


def _value_is_secret(value: str, strength: str) -> bool:
    if is_reference(value):
        return False
    if _INTERPOLATION.search(value):  # judge what is left once the expressions are taken out
        value = _INTERPOLATION.sub("", value).strip()
        if not value or _PATH_LIKE.fullmatch(value):
            return False
    if _PATH_LIKE.fullmatch(value) and not any(len(seg) >= 16 and looks_random(seg) for seg in value.split("/")):
        return False  # a path names where a secret is, never the secret
    if strength == "any":
        return len(value) >= 4 and not re.fullmatch(r"[\w.-]+\.(?:json|ya?ml|txt|pem|key|env|cfg|ini|toml)",
                                                     value)
    if strength == "strong" and len(value) < 16:
        return False
    # 16+ digits under a secret's name: an id issued as a credential (a timestamp has at most 13)
    return looks_random(value) or bool(re.fullmatch(r"\d{16,}", value))


# ---- value-shape checks ------------------------------------------------------------------------

_PLACEHOLDER_WORDS = frozenset({
    "changeme", "changeit", "change_me", "password", "passwd", "secret", "token", "example", "dummy",
    "sample", "placeholder", "redacted", "none", "null", "nil", "true", "false", "undefined", "todo",
    "tbd", "fixme", "test", "testing", "foo", "bar", "foobar", "empty", "notset", "unset", "default",
    "required", "optional", "string", "str", "value", "pass", "mypassword", "yourpassword", "apikey",
    "secretkey", "your_api_key", "api_key", "xxx", "env", "masked", "hidden", "omitted", "removed",
    "bytes", "int", "bool", "any",
})
_DOCUMENTED_EXAMPLES = ("EXAMPLE", "EXAMPLEKEY", "EXAMPLE1", "EXAMPLE2")
_REFERENCE = (
    r"^\$\{?[A-Za-z_][\w.:-]*\}?$|^\$\d$|^\$\{[^}]*\}$|^\$\(.*\)$|^%[A-Za-z_]\w*%$|^\{\{.*\}\}$|^\$\{\{.*\}\}$|"
    r"^<[^<>]*>$|^@[A-Za-z_]\w*@$|^#\{.*\}$|^\{[A-Za-z_][\w.]*\}$|^\[REDACTED|^\*+$|^x+$|^\.{3,}$|"
    r"^(?:your|my|insert|enter|put|replace|add)[-_ ]|[-_ ](?:here|goes[-_ ]here)$|"
    r"os\.environ|os\.getenv|getenv\(|process\.env|ENV\[|ENV\.fetch|System\.getenv|env\(|"
    r"^secrets\.|^vault:|^ref\+|^arn:aws:secretsmanager|^projects/[^/]+/secrets/|^!|^op://")


def is_reference(value: str) -> bool:
    """A reference to a secret kept elsewhere, or a placeholder, never a secret itself."""
    v = value.strip()
    if not v:
        return True
    if _compiled(_REFERENCE, re.IGNORECASE).search(v):
        return True
    plain = re.sub(r"[^a-z0-9_]", "", v.lower())
    if plain in _PLACEHOLDER_WORDS or v.lower().startswith(("changeme", "example", "dummy", "placeholder")):
        return True
    if len(set(v)) == 1:
        return True  # ****, xxxxxxxx, 00000000
    return v.endswith(_DOCUMENTED_EXAMPLES)


def written_out(value: str, run: int = 8) -> bool:
    """A token typed as a placeholder: `run` letters in alphabet order (`klmnopqr`); a drawn token
    holds one with odds below one in 10^9. Digit runs are left to other checks: test fixtures write
    real-shaped tokens as `xoxb-1234567890-...` and expect them masked."""
    count = 1
    for a, b in itertools.pairwise(value):
        count = count + 1 if ord(b) == ord(a) + 1 and a.isalpha() and b.isalpha() else 1
        if count >= run:
            return True
    return False


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


_CAMEL = lazy(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+")
# An XML Schema qualified type name: a namespace prefix, a colon, then CamelCase words ending in `Type`
# (`clm5ISO4217A:CurrencyCodeContentType`, `tns:AgencyIdentificationCodeContentType`) names a type.
_XSD_TYPE = lazy(r"[a-z]{1,8}\d{0,8}(?:[A-Z]{1,8}\d{0,8}[A-Z]?)?:(?:[A-Z][a-z]+|[A-Z]{2,}(?![a-z]))+Type")


def looks_random(value: str) -> bool:
    """A machine-made value rather than words, paths, URLs, versions or identifiers."""
    if len(value) < 8 or is_reference(value) or re.match(r"^(?:https?://|/|\./|~/|[A-Za-z]:\\)", value):
        return False
    if _XSD_TYPE.fullmatch(value):
        return False
    if "eyJ" in value:  # base64 of JSON: judged by what it decodes to (gitleaks' decoding pass)
        value, holds = _without_encoded_json(value)
        if holds:
            return True
    if "abcdefghij" in value.lower():
        return False  # an alphabet written out (a base64 table, a placeholder), not a draw
    if re.fullmatch(r"v?\d+(?:\.\d+){1,3}(?:[-+.][\w.]+)?|\d{4}-\d\d-\d\d(?:[T ][\d:.]+Z?)?", value):
        return False
    for segment in re.split(r"[-_./:+=~]", value):
        if len(segment) < 8:
            continue
        has_digit = any(c.isdigit() for c in segment)
        has_alpha = any(c.isalpha() for c in segment)
        if has_digit and has_alpha:
            return True
        if has_alpha and not _CAMEL.fullmatch(segment) and entropy(segment) >= 3.0:
            return True
    return False


# A run of base64 that starts a JSON object (`{"` encodes as `eyJ`), at the start of a value's segment
_ENCODED_JSON = lazy(r"(?<![A-Za-z0-9+/])eyJ[A-Za-z0-9+/_-]{5,}={0,2}")


def _without_encoded_json(value: str) -> tuple[str, bool]:
    """`value` without its runs of base64-encoded JSON text, and whether one of them decodes to text
    that holds a secret (a random-looking string or anything `redact` finds). A truncated token's
    head (`ops_eyJzaWduSW5BZGRyZXNzIjoiaHR0cHM6...`, `{"signInAddress":"https:`) or a JWT's header
    holds none; a run that does not decode to printable text is left in place, to be judged as is."""
    import base64
    import binascii

    kept, pos = [], 0
    for m in _ENCODED_JSON.finditer(value):
        run = m.group().rstrip("=")
        run = run[:-1] if len(run) % 4 == 1 else run  # cut short: one character holds no whole byte
        try:
            text = base64.b64decode(run.replace("-", "+").replace("_", "/") + "=" * (-len(run) % 4),
                                    validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if not text.isprintable():
            continue
        if any(looks_random(w) for w in re.split(r"[\s\"'{}\[\],]+", text)) or redact(text).secrets:
            return value, True
        kept.append(value[pos:m.start()] + " ")
        pos = m.end()
    kept.append(value[pos:])
    return "".join(kept), False


def _aws_id(value: str) -> bool:
    return not value.endswith(_DOCUMENTED_EXAMPLES)


def _aws_secret(value: str) -> bool:
    """A value that only its neighbourhood names as an AWS secret key: 40 characters drawn from
    base64's alphabet hold both cases (odds of one case missing: below one in 10^9), so a commit hash
    (hex) or an upper-case id is none; nor are CamelCase words, a path or the documented example."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and looks_random(value) and \
        _aws_id(value)


def _basic(value: str) -> bool:
    """`Basic <base64 of user:password>`; "Basic authentication" in prose is not one."""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        plain = decoded.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return ":" in plain and plain.isprintable() and not is_reference(plain.split(":", 1)[1])


def _curl_user(value: str) -> bool:
    """`curl -u`'s argument: a password after the colon, or a key alone (`-u "sk_live_...:"`)."""
    user, _, password = (_unwrap(p) for p in value.partition(":"))
    if password:
        return not is_reference(password)
    return "@" not in user and looks_random(user)


def _unwrap(part: str) -> str:
    """A quoted part, or one in braces (`"{id}":"{secret}"`); a template (`{{ x }}`) stays whole."""
    part = part.strip("\"'")
    if part.startswith("{") and part.endswith("}") and not part.startswith("{{"):
        part = part[1:-1]
    return part


CHECKS = {"curl_user": _curl_user, "random": looks_random, "ref": lambda v: not is_reference(v), "basic": _basic, "aws_id": _aws_id,
          "aws_secret": _aws_secret}


def precompile() -> None:
    """Compile the built-in patterns now (constants: what a process forked afterwards would compile the
    same way), for the resident server, whose children would otherwise each pay for it."""
    for shape in SHAPES:
        _compiled(shape.pattern)
        if shape.left:
            _compiled(f"[{shape.left}]")
    _compiled(_ASSIGN)
    _compiled(_hint_pattern(_HINT_WORDS))
