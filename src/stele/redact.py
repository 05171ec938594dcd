"""Secrets never reach disk: every fact and every WAL line passes through `redact()` first.

Each pattern has a kind name, so a command can say what it removed ("1 AWS access key id") without
echoing the secret. Patterns are anchored on the shapes vendors actually issue (fixed prefixes, fixed
lengths) so look-alikes in prose ("Bearer tokens expire", "sk-learn", "AKIA prefix") survive.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial

_B = r"(?<![A-Za-z0-9_-])"  # left boundary: not inside a longer token
_E = r"(?![A-Za-z0-9_-])"

# (kind, pattern, group to replace: 0 = whole match)
BUILTIN: tuple[tuple[str, str, int], ...] = (
    # a key body (a run of base64) must follow: "-----BEGIN RSA PRIVATE KEY----- ... -----END" in prose
    # survives
    ("PEM private key", r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----"
     r"(?=[^-]{0,300}?[A-Za-z0-9+/]{20}).*?(?:-----END \1PRIVATE KEY\2-----|\Z)", 0),
    ("GitHub token", _B + r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E, 0),
    ("GitHub token", _B + r"github_pat_[A-Za-z0-9_]{22,255}" + _E, 0),
    ("AWS access key id", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])", 0),
    ("AWS secret access key",
     r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", 1),
    ("OpenAI or Anthropic API key",
     _B + r"sk-(?:proj-|ant-(?:api\d\d-)?|svcacct-)?[A-Za-z0-9_-]{20,}" + _E, 0),
    ("Stripe secret key", _B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _E, 0),
    ("Slack token", _B + r"xox[abposr]-[A-Za-z0-9-]{10,}" + _E, 0),
    ("Google API key", _B + r"AIza[0-9A-Za-z_-]{35}" + _E, 0),
    ("npm token", _B + r"npm_[A-Za-z0-9]{36}" + _E, 0),
    ("JSON web token", _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _E, 0),
    ("bearer token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)", 1),
    ("password in URL", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:([^\s@/]{3,})@", 1),
    ("credential assignment",
     r"(?i)\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)"
     r"[\"']?\s*[:=]\s*[\"']?([^\s\"',;]{8,})", 1),
)


@dataclass
class Redaction:
    text: str
    found: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        return describe(self.found)


def describe(found: Counter) -> str:
    """`1 AWS access key id, 2 bearer tokens` (never the secrets themselves)."""
    return ", ".join(f"{n} {kind}{'s' if n > 1 and not kind.endswith('s') else ''}"
                     for kind, n in sorted(found.items()))


class Redactor:
    def __init__(self, extra_patterns: Iterable[str] = ()) -> None:
        self.rules: list[tuple[str, re.Pattern[str], int]] = [
            (kind, re.compile(pattern, re.S), group) for kind, pattern, group in BUILTIN
        ]
        for pattern in extra_patterns:
            try:
                self.rules.append(("configured pattern", re.compile(pattern), 0))
            except re.error as e:
                from .errors import SteleError

                raise SteleError(f".stele/config.yaml: redaction.patterns entry {pattern!r} is not a valid "
                                 f"regular expression ({e}); fix or remove it") from None

    def find(self, text: str) -> list[tuple[str, int]]:
        """(kind, offset) of each secret in `text`, to say where without repeating it. Overlapping
        matches (a token inside a `password = ...` assignment) count once, first rule first."""
        spans: list[tuple[int, int, str]] = []
        for kind, rx, group in self.rules:
            for m in rx.finditer(text):
                if m.group(group) is None or "[REDACTED:" in m.group(0):
                    continue
                start, end = m.span(group)
                if all(end <= s or start >= e for s, e, _ in spans):
                    spans.append((start, end, kind))
        return [(kind, start) for start, _, kind in sorted(spans)]

    def redact(self, text: str) -> Redaction:
        result = Redaction(text)
        for kind, rx, group in self.rules:
            result.text = rx.sub(partial(_replace, kind=kind, group=group, found=result.found), result.text)
        return result


def _replace(m: re.Match[str], kind: str, group: int, found: Counter) -> str:
    if m.group(group) is None or "[REDACTED:" in m.group(0):
        return m.group(0)
    found[kind] += 1
    marker = f"[REDACTED:{kind}]"
    if group == 0:
        return marker
    start, end = m.span(group)
    s0 = m.start(0)
    whole = m.group(0)
    return whole[: start - s0] + marker + whole[end - s0:]


_default: Redactor | None = None


def redact(text: str, extra_patterns: Iterable[str] = ()) -> Redaction:
    """Redact with the built-in patterns plus `extra_patterns` (from `redaction.patterns`)."""
    global _default
    extra = tuple(extra_patterns)
    if extra:
        return Redactor(extra).redact(text)
    if _default is None:
        _default = Redactor()
    return _default.redact(text)
