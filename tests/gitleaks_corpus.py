"""gitleaks' own rule samples as a redaction corpus (pinned; regenerate with scripts/gitleaks_samples.py).

`tests/fixtures/gitleaks_samples.json.gz` holds, for the gitleaks commit named inside it, every
true-positive sample of `cmd/generate/config/rules/*.go` with the secret its rule reports, and every
false-positive sample. The file is gzipped so its realistic fake tokens are not plain text for
secret scanners. Used by tests/test_redact_gitleaks.py, the end-to-end write-path test and
docs/security.md's figures.

A gitleaks false positive is a sample that one rule must not match; it is not always free of
secrets. `classify` sorts them into:

- "placeholder": a run of six identical characters (`ghp_xxxx...`, `0000...`), a template or
  environment reference (`${X}`, `{{ x }}`, `%X%`, `$1`), eight letters or digits in alphabet order
  (`abc123xyz-...-klmnopqrstuvwx`), or words that say so (`EXAMPLE`, `YOUR_..._HERE`). Masking
  one is harmless.
- "other rule": the sample is, or holds the secret of, another rule's true positive (a Cloudflare
  global key is a false positive of the Cloudflare API-key rule). Masking it is right.
- "plain": everything else; these must come through unchanged (at most 2% may change).

`reported_by_gitleaks` says whether gitleaks' whole default rule set reports a secret in a false
positive through a rule other than the one it was written for (recorded in the fixture as
`flagged_by` by scripts/gitleaks_ruleset.py): a JWT in a `curl` line, `key = <45 random characters>`.
docs/security.md gives the figure with and without these.

`held_out` splits the rules in halves by a hash of the rule id: the redactor's mechanisms were
tuned on the other half, and the held-out half is reported apart.
"""
from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "gitleaks_samples.json.gz"

# Samples whose "secret" is not a credential by Stele's documented rule (docs/security.md): an
# identifier named `..._ID`, or a marker that a file is a service-account key (no value in it).
NOT_CREDENTIALS = {
    ("messagebird-client-id", "12345678-ABCD-ABCD-ABCD-1234567890AB"),
    ("gcp-service-account", '"type": "service_account"'),
}

_PLACEHOLDER = re.compile(
    r"(.)\1{5,}|\$\{|\{\{|%[A-Za-z]\w*%|\$\d\b|abcdefghij|EXAMPLE|_HERE\b|HERE_|YOUR_|PUT_YOUR|<[a-z-]+>",
    re.IGNORECASE)


def _alphabet_run(text: str, run: int = 8) -> bool:
    """Eight letters or digits in alphabet order (`klmnopqr`, `12345678`): typed, not drawn."""
    count = 1
    for a, b in itertools.pairwise(text):
        count = count + 1 if ord(b) == ord(a) + 1 and a.isalnum() and b.isalnum() else 1
        if count >= run:
            return True
    return False


@cache
def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    return data


def true_positives() -> list[dict[str, Any]]:
    return [t for t in load()["true_positives"] if (t["rule"], t["secret"]) not in NOT_CREDENTIALS]


@cache
def _other_rules() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    samples: dict[str, set[str]] = {}
    secrets: dict[str, set[str]] = {}
    for t in load()["true_positives"]:
        samples.setdefault(t["sample"], set()).add(t["rule"])
        if t["secret"] and len(t["secret"]) >= 8:
            secrets.setdefault(t["secret"], set()).add(t["rule"])
    return samples, secrets


def classify(fp: dict[str, Any], data: dict[str, Any] | None = None) -> str:
    text, rule = fp["sample"], fp["rule"]
    samples, secrets = _other_rules()
    if samples.get(text, set()) - {rule} or any(rules - {rule} for s, rules in secrets.items() if s in text):
        return "other rule"
    if _PLACEHOLDER.search(text) or _alphabet_run(text):
        return "placeholder"
    return "plain"


def false_positives(kind: str | None = None) -> list[dict[str, Any]]:
    return [f for f in load()["false_positives"] if kind is None or classify(f) == kind]


def corpus_commit() -> str:
    return str(load()["corpus"]["commit"])


def reported_by_gitleaks(fp: dict[str, Any]) -> bool:
    """Another rule of gitleaks' default configuration reports a secret in this false positive."""
    return any(rule != fp["rule"] for rule in fp.get("flagged_by", []))


def held_out(rule: str) -> bool:
    """The rules whose samples the redactor was not tuned on: an odd first byte of sha256(rule id)."""
    return hashlib.sha256(rule.encode()).digest()[0] % 2 == 1
