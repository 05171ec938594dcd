"""Extract the true- and false-positive samples from gitleaks' rule files into a pinned test corpus.

gitleaks (github.com/gitleaks/gitleaks, MIT) validates each rule in `cmd/generate/config/rules/*.go`
against samples written beside it: `tps` that its rule must find and `fps` that it must not. Those
samples are the widest public collection of how secrets are actually written (an `.env` line, a PHP
`.=`, a Makefile `:::=`, `System.setProperty(...)`), so Stele's redaction is tested against them.

Go is not needed: this script reads the Go source as text and evaluates the small expression
language the samples are written in (string and raw-string literals, `+`, `[]string{...}`,
`append(...)`, `fmt.Sprintf`, `utils.GenerateSampleSecrets`, the `utils.*` pattern helpers, and
`secrets.NewSecret(regex)`, which draws a random string matching a regular expression; here that draw
is made with a seeded generator, so a rerun is identical). A rule's own regular expression is
evaluated the same way and used to say which part of each literal sample is the secret, as gitleaks
would report it. What cannot be evaluated is counted and skipped, never guessed.

Each false positive also records `flagged_by`: the rules of gitleaks' whole default configuration
that report a secret in it (`gitleaks_ruleset.py`), since a sample one rule must not match may be
another rule's finding.

Only data is kept: `tests/fixtures/gitleaks_samples.json.gz`, gzipped so that the realistic-looking
fake tokens in it are not plain text for secret scanners and push protection. No gitleaks code is
copied. Regenerate (a release tool, not run in CI):

    python scripts/gitleaks_samples.py /path/to/gitleaks-checkout [--commit REV]
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

try:  # Python 3.11+
    import re._constants as sre_c  # type: ignore[import-not-found]
    import re._parser as sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gitleaks_samples.json.gz"
RULES_DIR = "cmd/generate/config/rules"

# ---------------------------------------------------------------- tokens and expressions

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+)|(?P<nl>\n)|(?P<comment>//[^\n]*|/\*.*?\*/)|
    (?P<raw>`[^`]*`)|(?P<str>"(?:\\.|[^"\\\n])*")|(?P<chr>'(?:\\.|[^'\\\n])*')|
    (?P<num>\d+(?:\.\d+)?)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)|
    (?P<op>\.\.\.|:=|\+=|==|!=|&&|\|\||[-+*/%(){}\[\],:;=<>!&.|^])""", re.S | re.X)


def tokens(src: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m:
            out.append(("op", src[pos]))
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup or "op"
        if kind in ("ws", "comment"):
            if kind == "comment" and "\n" in m.group():
                out.append(("nl", "\n"))
            continue
        out.append((kind, m.group()))
    return out


def go_string(tok: str) -> str:
    if tok.startswith("`"):
        return tok[1:-1].replace("\r", "")
    body = tok[1:-1]
    # Go's escapes are a subset of Python's (plus \x, \u, \U); decode via JSON-like rules
    return body.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in body \
        else body


class Unknown(Exception):
    """An expression this evaluator does not model: the sample is skipped and counted."""


class Eval:
    def __init__(self, toks: list[tuple[str, str]], env: dict[str, Any], rnd: random.Random) -> None:
        self.t = [t for t in toks if t[0] != "nl"]
        self.i = 0
        self.env = env
        self.rnd = rnd

    def peek(self, k: int = 0) -> tuple[str, str]:
        j = self.i + k
        return self.t[j] if j < len(self.t) else ("eof", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise Unknown(f"expected {value!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def expr(self) -> Any:
        left = self.primary()
        while self.peek()[1] == "+":
            self.take()
            right = self.primary()
            if not (isinstance(left, str) and isinstance(right, str)):
                raise Unknown("+ of non-strings")
            left = left + right
        return left

    def args(self) -> list[Any]:
        self.take("(")
        out: list[Any] = []
        while self.peek()[1] != ")":
            value = self.expr()
            if self.peek()[1] == "...":
                self.take()
                if not isinstance(value, list):
                    raise Unknown("spread of non-list")
                out.append(("spread", value))
            else:
                out.append(value)
            if self.peek()[1] == ",":
                self.take()
        self.take(")")
        return out

    def composite(self) -> Any:
        """`{...}` after a type: a list of values, or a dict for `Key: value` fields."""
        self.take("{")
        items: list[Any] = []
        fields: dict[str, Any] = {}
        while self.peek()[1] != "}":
            if self.peek()[0] == "ident" and self.peek(1)[1] == ":":
                key = self.take()[1]
                self.take(":")
                try:
                    fields[key] = self.expr()
                except Unknown:
                    fields[key] = None
                    self.skip_value()
            elif self.peek()[0] in ("str", "raw") and self.peek(1)[1] == ":":
                key = go_string(self.take()[1])
                self.take(":")
                fields[key] = self.expr()
            elif self.peek()[1] == "{":
                self.skip_value()
            else:
                items.append(self.expr())
            if self.peek()[1] == ",":
                self.take()
        self.take("}")
        return fields if fields else items

    def skip_value(self) -> None:
        depth = 0
        while self.peek()[0] != "eof":
            v = self.peek()[1]
            if v in "([{":
                depth += 1
            elif v in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif v == "," and depth == 0:
                return
            self.take()

    def to_brace(self) -> None:
        while self.peek()[1] != "{":
            if self.take()[0] == "eof":
                raise Unknown("no composite literal")

    def primary(self) -> Any:
        kind, value = self.peek()
        if kind in ("str", "raw"):
            self.take()
            return go_string(value)
        if kind == "num":
            self.take()
            return float(value) if "." in value else int(value)
        if [v for _, v in self.t[self.i:self.i + 4]] == ["[", "]", "byte", "("]:
            self.i += 3
            return self.args()[0]
        if value == "[":  # []string{...} or map[...]...{...}
            self.to_brace()
            return self.composite()
        if kind == "ident":
            self.take()
            if value.startswith("map") and self.peek()[1] == "[":
                self.to_brace()
                return self.composite()
            if self.peek()[1] == "{" and value in ("config.Rule", "config.Allowlist"):
                return self.composite()
            if self.peek()[1] == "(":
                return self.call(value, self.args())
            if value in ("true", "false"):
                return value == "true"
            if value in self.env:
                return self.env[value]
            raise Unknown(f"unknown name {value}")
        if value == "&":
            self.take()
            return self.primary()
        raise Unknown(f"unexpected {value!r}")

    def call(self, name: str, args: list[Any]) -> Any:
        flat: list[Any] = []
        for a in args:
            flat.extend(a[1] if isinstance(a, tuple) and a[0] == "spread" else [a])
        helpers = {
            "utils.Numeric": "[0-9]{%s}", "utils.Hex": "[a-f0-9]{%s}",
            "utils.AlphaNumeric": "[a-z0-9]{%s}", "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
            "utils.AlphaNumericExtended": r"[a-z0-9=_\-]{%s}",
            "utils.AlphaNumericExtendedLong": r"[a-z0-9\/=_\+\-]{%s}",
        }
        if name in helpers:
            return helpers[name] % flat[0]
        if name == "utils.Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name in ("secrets.NewSecret", "newPlausibleSecret"):
            return generate(flat[0], self.rnd, plausible=name == "newPlausibleSecret")
        if name == "utils.GenerateSampleSecrets":
            return [dict(sample=s, secret=flat[1]) for s in sample_secrets(flat[0], flat[1])]
        if name == "utils.GenerateSampleSecret":
            return dict(sample=f'{flat[0]}_api_token = "{flat[1]}"', secret=flat[1])
        if name == "append":
            if not isinstance(flat[0], list):
                raise Unknown("append to non-list")
            return list(flat[0]) + flat[1:]
        if name == "fmt.Sprintf":
            fmt, rest = flat[0], flat[1:]
            if not isinstance(fmt, str) or re.search(r"%[^s%]", fmt):
                raise Unknown("Sprintf verb")
            return fmt.replace("%%", "\0") % tuple(rest) if rest else fmt
        if name == "strings.Repeat":
            return flat[0] * flat[1]
        if name.startswith("base64.") and name.endswith(".EncodeToString"):
            import base64
            raw = flat[0].encode()
            enc = base64.urlsafe_b64encode(raw) if "URL" in name else base64.b64encode(raw)
            return (enc.rstrip(b"=") if "Raw" in name else enc).decode()
        if name in ("regexp.MustCompile", "string"):
            return flat[0]
        if name == "utils.GenerateUniqueTokenRegex":
            return ("(?i)" if flat[1] else "") + r"\b(" + flat[0] + r")(?:[\x60'\"\s;]|\\[nr]|$)"
        if name == "utils.GenerateSemiGenericRegex":
            ids = "|".join(flat[0])
            head = ("(?i)" + r"[\w.-]{0,50}?(?:" + ids + ")") if flat[2] else \
                (r"[\w.-]{0,50}?(?i:" + r"[\w.-]{0,50}?(?:" + ids + ")")
            tail = r")(?:[ \t\w.-]{0,20})[\s'\"]{0,3}"
            return (head + tail if flat[2] else head + tail + ")") + \
                r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)" + r"[\x60'\"\s=]{0,5}(" + flat[1] + \
                r")(?:[\x60'\"\s;]|\\[nr]|$)"
        raise Unknown(f"call {name}")


# gitleaks' sample templates (cmd/generate/config/utils/generate.go): the assignment shapes a
# secret is written in. Data, restated so the corpus can be regenerated without Go.
TEMPLATES = (
    '{i}Token="{s}"', '{i}Token = "{s}"', "{i}Token={s}", "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}', '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}", "{i}_token: '{s}'", '{i}_token: "{s}"',
    'string {i}Token = "{s}";', 'var {i}Token string = "{s}"', '{i}Token := "{s}"',
    "{i}Token := `{s}`", 'String {i}Token = "{s}";', 'var {i}Token = "{s}"', '${i}Token .= "{s}"',
    "{i}Token = '{s}'", '{i}Token = "{s}"', 'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"', '{i}_TOKEN = "{s}"', '{i}_TOKEN := "{s}"', '{i}_TOKEN ::= "{s}"',
    '{i}_TOKEN :::= "{s}"', '{i}_TOKEN ?= "{s}"',
)


def sample_secrets(identifier: str, secret: str) -> list[str]:
    return [t.replace("{i}", identifier).replace("{I}", identifier.upper()).replace("{s}", secret)
            for t in TEMPLATES]


# ---------------------------------------------------------------- drawing a string from a regex

_PRINTABLE = [chr(c) for c in range(32, 127)]


def generate(pattern: str, rnd: random.Random, plausible: bool = False) -> str:
    try:
        parsed = sre_parse.parse(go_to_python(pattern))
    except Exception as exc:
        raise Unknown(f"regex {pattern!r}: {exc}") from None
    for _ in range(200):
        out = _gen(parsed, rnd)
        if not plausible or re.search("[1-9]", out):
            return out
    return out


def _gen(items: Any, rnd: random.Random) -> str:
    out = []
    for op, av in items:
        if op is sre_c.LITERAL:
            out.append(chr(av))
        elif op is sre_c.NOT_LITERAL:
            out.append(rnd.choice([c for c in _PRINTABLE if ord(c) != av]))
        elif op is sre_c.ANY:
            out.append(rnd.choice(_PRINTABLE))
        elif op is sre_c.IN:
            out.append(rnd.choice(_class(av)))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            hi = lo + 10 if hi is sre_c.MAXREPEAT else hi
            out.extend(_gen(sub, rnd) for _ in range(rnd.randint(lo, hi)))
        elif op is sre_c.SUBPATTERN:
            out.append(_gen(av[-1], rnd))
        elif op is sre_c.BRANCH:
            out.append(_gen(rnd.choice(av[1]), rnd))
        elif op is sre_c.AT:
            continue
        elif op is sre_c.CATEGORY:
            out.append(rnd.choice(_category(av)))
        else:
            raise Unknown(f"regex op {op}")
    return "".join(out)


def _category(cat: Any) -> list[str]:
    name = str(cat)
    if "DIGIT" in name:
        chars = [c for c in _PRINTABLE if c.isdigit()]
    elif "WORD" in name:
        chars = [c for c in _PRINTABLE if c.isalnum() or c == "_"]
    elif "SPACE" in name:
        chars = [" "]
    else:
        chars = _PRINTABLE
    if "NOT" in name:
        chars = [c for c in _PRINTABLE if c not in chars and c != " "]
    return chars


def _class(av: Any) -> list[str]:
    chars: set[str] = set()
    negate = False
    for op, v in av:
        if op is sre_c.NEGATE:
            negate = True
        elif op is sre_c.LITERAL:
            chars.add(chr(v))
        elif op is sre_c.RANGE:
            chars.update(chr(c) for c in range(v[0], v[1] + 1))
        elif op is sre_c.CATEGORY:
            chars.update(_category(v))
    if negate:
        return [c for c in _PRINTABLE if c not in chars]
    return sorted(chars)


_POSIX = {"[:alnum:]": "a-zA-Z0-9", "[:alpha:]": "a-zA-Z", "[:digit:]": "0-9", "[:upper:]": "A-Z",
          "[:lower:]": "a-z", "[:space:]": r"\s", "[:xdigit:]": "0-9a-fA-F", "[:punct:]": r"!-/:-@\[-`{-~",
          "[:word:]": r"\w"}


def go_to_python(pattern: str) -> str:
    """RE2 syntax -> Python's: POSIX classes, `\\z`, and a global flag group not at the start."""
    for k, v in _POSIX.items():
        pattern = pattern.replace(k, v)
    pattern = pattern.replace(r"\z", r"\Z")
    if "(?i)" in pattern[1:]:
        pattern = "(?i)" + pattern[:1] + pattern[1:].replace("(?i)", "")
    return pattern


# ---------------------------------------------------------------- rule files

# a rule function's body runs to the next top-level `func` (a raw string may hold a `}` line)
_FUNC = re.compile(r"^func (\w+)\(\) \*config\.Rule \{\n(.*?)(?=^func |\Z)", re.M | re.S)
_VAR_BLOCK = re.compile(r"^\s*var \(\n(.*?)^\s*\)[ \t]*$", re.M | re.S)


def statements(body: str) -> list[list[tuple[str, str]]]:
    out: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    depth = 0
    for tok in tokens(body):
        if tok[1] in "([{" and tok[0] == "op":
            depth += 1
        elif tok[1] in ")]}" and tok[0] == "op":
            depth -= 1
        if tok[0] == "nl" and depth == 0:
            if current and current[-1][1] not in ("+", ",", "(", "{", "||", "&&"):
                out.append(current)
                current = []
            continue
        current.append(tok)
    if current:
        out.append(current)
    return out


def secret_of(sample: str, regex: str | None, group: int | None) -> str | None:
    if not regex:
        return None
    try:
        m = re.search(go_to_python(regex), sample)
    except re.error:
        return None
    if not m:
        return None
    if group and group <= (m.re.groups or 0) and m.group(group):
        return m.group(group)
    for g in m.groups():
        if g:
            return g
    return m.group()


def assigned_value(sample: str) -> str | None:
    """The value a literal sample assigns, when its rule's regex could not be evaluated here: the
    longest run of token characters after the last operator, quotes stripped."""
    runs = re.findall(r"[\w+/=~.:@-]{6,}", re.split(r"(?:=|:=|:|=>|,)\s*", sample, maxsplit=1)[-1])
    runs = [r.strip(".:=") for r in runs]
    return max(runs, key=len) if runs else None


def extract(checkout: Path, rev: str) -> dict[str, Any]:
    rnd = random.Random(27)
    names = subprocess.run(["git", "ls-tree", "--name-only", rev, RULES_DIR + "/"], cwd=checkout,
                           capture_output=True, text=True, check=True).stdout.split()
    tps: list[dict[str, Any]] = []
    fps: list[dict[str, Any]] = []
    skipped: list[str] = []
    for name in sorted(n for n in names if n.endswith(".go") and not n.endswith("_test.go")):
        src = subprocess.run(["git", "show", f"{rev}:{name}"], cwd=checkout, capture_output=True,
                             text=True, check=True).stdout
        top: dict[str, Any] = {}
        for m in re.finditer(r"^var (\w+) = (.*?)^\)?$", src, re.M | re.S):
            try:
                top[m.group(1)] = Eval(tokens(m.group(2)), {}, rnd).expr()
            except (Unknown, IndexError):
                pass
        for fn in _FUNC.finditer(src):
            env: dict[str, Any] = dict(top)
            rule: dict[str, Any] = {}
            body = _VAR_BLOCK.sub(lambda m: m.group(1), fn.group(2))
            for stmt in statements(body):
                vals = [v for _, v in stmt]
                if vals[:1] == ["return"] and "utils.Validate" in vals[1:2] + vals[1:3]:
                    ev = Eval(stmt[2:], env, rnd)
                    try:
                        args = ev.args()
                        env["tps"], env["fps"] = args[1], args[2]
                    except (Unknown, IndexError):
                        pass
                    continue
                if vals[:1] == ["return"] and vals[1:2] == ["utils.ValidateWithPaths"]:
                    try:
                        args = Eval(stmt[2:], env, rnd).args()
                        env["tps"] = list(args[1].values())
                        env["fps"] = list(args[2].values())
                    except (Unknown, IndexError, AttributeError):
                        pass
                    continue
                if len(stmt) > 2 and stmt[0][0] == "ident" and stmt[1][1] in (":=", "="):
                    target, start = stmt[0][1], 2
                elif vals[:1] == ["var"] and len(stmt) > 3 and "=" in vals:
                    target, start = stmt[1][1], vals.index("=") + 1
                else:
                    continue
                try:
                    value = Eval(stmt[start:], env, rnd).expr()
                except (Unknown, IndexError, TypeError, KeyError, ValueError) as exc:
                    if target in ("tps", "fps", "r"):
                        skipped.append(f"{name}:{fn.group(1)}:{target}: {exc}")
                    env.pop(target, None)
                    continue
                env[target] = value
                if target == "r" and isinstance(value, dict):
                    rule = value
            rule_id = rule.get("RuleID") or fn.group(1)
            regex = rule.get("Regex") if isinstance(rule.get("Regex"), str) else None
            group = rule.get("SecretGroup") if isinstance(rule.get("SecretGroup"), int) else None
            for item in env.get("tps") or []:
                if isinstance(item, dict):
                    tps.append(dict(rule=rule_id, file=Path(name).name, **item))
                elif isinstance(item, str) and item.strip():
                    secret = secret_of(item, regex, group)
                    tps.append(dict(rule=rule_id, file=Path(name).name, sample=item,
                                    secret=secret or assigned_value(item)))
            for item in env.get("fps") or []:
                text = item["sample"] if isinstance(item, dict) else item
                if isinstance(text, str):
                    fps.append(dict(rule=rule_id, file=Path(name).name, sample=text))
    return dict(true_positives=tps, false_positives=fps, skipped=skipped)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout", type=Path, help="a gitleaks clone (a bare mirror works)")
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--out", type=Path, default=OUT)
    opts = ap.parse_args(argv)
    rev = subprocess.run(["git", "rev-parse", opts.commit], cwd=opts.checkout, capture_output=True,
                         text=True, check=True).stdout.strip()
    data = extract(opts.checkout, rev)
    # what gitleaks' whole default rule set reports in each false positive of one rule (another rule
    # may report it: a JWT in a `curl` line is a false positive of `curl-auth-header` only)
    from gitleaks_ruleset import RuleSet

    ruleset = RuleSet.from_checkout(opts.checkout, rev)
    for fp in data["false_positives"]:
        fp["flagged_by"] = ruleset.flagged_by(fp["sample"])
    data = dict(corpus=dict(repo="github.com/gitleaks/gitleaks", commit=rev, path=RULES_DIR + "/*.go",
                            license="MIT"), **data)
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True).encode()
    opts.out.write_bytes(gzip.compress(payload, mtime=0))
    tp, fp = data["true_positives"], data["false_positives"]
    print(f"{rev[:12]}: {len(tp)} true positives ({len({t['secret'] for t in tp})} distinct secrets, "
          f"{sum(t['secret'] is None for t in tp)} without one), {len({t['rule'] for t in tp})} rules, "
          f"{len(fp)} false positives, {len(data['skipped'])} statements skipped -> {opts.out}")
    for s in data["skipped"]:
        print("  skipped", s, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
