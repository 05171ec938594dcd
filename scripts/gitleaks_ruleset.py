"""Which of gitleaks' default rules report a secret in a text: its whole rule set, not one rule.

A false-positive sample in gitleaks' rule files is a text that *one* rule must not match. gitleaks
as a scanner runs every rule, so such a sample can still be reported by another rule (a JWT in a
`curl` line is a false positive of `curl-auth-header` and a finding of `jwt`). This script evaluates
gitleaks' default configuration (`config/gitleaks.toml`, read as data with `tomllib`) the way its
detector documents it: a rule runs when one of its keywords occurs (case-insensitive); its regex finds
a match; the secret is the rule's `secretGroup` or else the first non-empty group; a rule's `entropy`
is a floor the secret must exceed; a finding is dropped by the global or the rule's allowlists
(`regexes` against the secret, the match or the line as `regexTarget` says, `stopwords` contained in
the secret; an allowlist whose condition is AND needs all of its checks, and one that needs a path
cannot hold for a text with no path). Rules that need a file path (`path = ...`) never fire here.
Not evaluated: gitleaks' decoding passes (base64, hex, percent), which can only add findings.

No gitleaks code is copied; RE2 syntax is translated to Python's (`go_to_python`, plus `(?i)` in the
middle of a group scoped to the rest of that group). Used by `gitleaks_samples.py --flag` to record,
for each false-positive sample of the pinned corpus, which rules gitleaks itself would report.

    python scripts/gitleaks_ruleset.py /path/to/gitleaks-checkout "text to scan"
"""
from __future__ import annotations

import math
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gitleaks_samples import go_to_python


def _scope_inline_i(pattern: str) -> str:
    """`a(b(?i)c)d` -> `a(b(?i:c))d`: RE2 applies a flag set mid-group to the rest of that group;
    Python accepts global flags only at the start."""
    while True:
        at = pattern.find("(?i)", 1)
        if at < 0:
            return pattern
        depth, end, i = 0, len(pattern), at + 4
        while i < len(pattern):
            c = pattern[i]
            if c == "\\":
                i += 2
                continue
            if c == "[":  # skip a character class
                j = i + 1
                if j < len(pattern) and pattern[j] == "]":
                    j += 1
                while j < len(pattern) and pattern[j] != "]":
                    j += 2 if pattern[j] == "\\" else 1
                i = j + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    end = i
                    break
                depth -= 1
            elif c == "|" and depth == 0:
                end = i
                break
            i += 1
        pattern = pattern[:at] + "(?i:" + pattern[at + 4:end] + ")" + pattern[end:]


def python_regex(pattern: str) -> re.Pattern[str]:
    translated = pattern
    for k, v in (("[:alnum:]", "a-zA-Z0-9"), ("[:alpha:]", "a-zA-Z"), ("[:digit:]", "0-9"),
                 ("[:upper:]", "A-Z"), ("[:lower:]", "a-z"), ("[:space:]", r"\s"), ("[:xdigit:]", "0-9a-fA-F"),
                 ("[:word:]", r"\w")):
        translated = translated.replace(k, v)
    translated = _scope_inline_i(translated.replace(r"\z", r"\Z"))
    try:
        return re.compile(translated)
    except re.error:
        return re.compile(go_to_python(pattern))


def entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values()) if text else 0.0


class Allowlist:
    def __init__(self, data: dict[str, Any]) -> None:
        self.regexes = [python_regex(r) for r in data.get("regexes", [])]
        self.target = data.get("regexTarget", "secret")
        self.stopwords = [w.lower() for w in data.get("stopwords", [])]
        self.needs_path_or_commit = bool(data.get("paths") or data.get("commits"))
        self.all = data.get("condition", "OR").upper() == "AND"

    def allows(self, secret: str, match: str, line: str) -> bool:
        target = {"match": match, "line": line}.get(self.target, secret)
        regex = any(r.search(target) for r in self.regexes) if self.regexes else None
        stop = any(w in secret.lower() for w in self.stopwords) if self.stopwords else None
        if self.all:
            checks = [c for c in (regex, stop) if c is not None]
            return not self.needs_path_or_commit and bool(checks) and all(checks)
        return bool(regex) or bool(stop)


class Rule:
    def __init__(self, data: dict[str, Any]) -> None:
        self.id: str = data["id"]
        self.regex = python_regex(data["regex"]) if data.get("regex") and not data.get("path") else None
        self.group = int(data.get("secretGroup", 0))
        self.entropy = float(data.get("entropy", 0.0))
        self.keywords = [k.lower() for k in data.get("keywords", [])]
        self.allowlists = [Allowlist(a) for a in data.get("allowlists", [])]
        if "allowlist" in data:
            self.allowlists.append(Allowlist(data["allowlist"]))

    def secrets(self, text: str, global_lists: list[Allowlist]) -> list[str]:
        if self.regex is None or (self.keywords and not any(k in text.lower() for k in self.keywords)):
            return []
        found = []
        for m in self.regex.finditer(text):
            match = m.group(0).strip("\n")
            sub = self.regex.search(match)  # gitleaks re-runs the regex on the match for the groups
            groups = sub.groups() if sub else ()
            secret = match
            if groups:
                if self.group:
                    if len(groups) < self.group:
                        continue
                    secret = groups[self.group - 1] or ""
                else:
                    secret = next((g for g in groups if g), match)
            if self.entropy and entropy(secret) <= self.entropy:
                continue
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            line = text[start:end if end >= 0 else len(text)]
            if any(a.allows(secret, match, line) for a in global_lists + self.allowlists):
                continue
            found.append(secret)
        return found


class RuleSet:
    def __init__(self, config_text: str) -> None:
        data = tomllib.loads(config_text)
        lists = data.get("allowlists", []) + ([data["allowlist"]] if "allowlist" in data else [])
        self.global_lists = [Allowlist(a) for a in lists]
        self.rules = [Rule(r) for r in data.get("rules", [])]

    @classmethod
    def from_checkout(cls, checkout: Path, rev: str = "HEAD") -> RuleSet:
        text = subprocess.run(["git", "--git-dir", str(_git_dir(checkout)), "show", f"{rev}:config/gitleaks.toml"],
                              capture_output=True, text=True, check=True).stdout
        return cls(text)

    def flagged_by(self, text: str) -> list[str]:
        """The ids of the rules that report a secret in `text`."""
        return [r.id for r in self.rules if r.secrets(text, self.global_lists)]


def _git_dir(checkout: Path) -> Path:
    return checkout / ".git" if (checkout / ".git").exists() else checkout


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    print("\n".join(RuleSet.from_checkout(Path(args[0])).flagged_by(args[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
