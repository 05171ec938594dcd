"""Redaction: Stele's engine against a detector library, on the same corpus, in fresh processes.

For each engine: how many of the corpus's token shapes it would remove whole (every raw value of the
shape inside what it reports), how many look-alikes it would damage (anything reported in them), the
cold-start cost of importing it and redacting one prompt (median wall time of a fresh process, minus
a bare `python -c pass`) and its CPU time (steadier on a shared machine; `import json` is measured
the same way as a yardstick), and the warm per-prompt cost on a 2 KB prompt with code in it.

    .venv/bin/python bench/redaction.py                                       # Stele only
    .venv/bin/python bench/redaction.py --detect-secrets /tmp/ds/bin/python   # and detect-secrets
    .venv/bin/python bench/redaction.py --runs 30 --json
    .venv/bin/python bench/redaction.py --src /tmp/main/src   # another tree's engine (before/after)

Besides the prompt, two realistic writes, warm, CPU time: every fact file of this repository's own
record (`docs/memory/**/*.md`, as `record.write.save` redacts a rendered fact) and gitleaks' pasted
samples (tests/fixtures/gitleaks_samples.json.gz) in notes of 60 samples each, as the end-to-end test
writes them through `stele remember` and `stele session log note`.

detect-secrets runs in its own virtualenv (`python -m venv /tmp/ds && /tmp/ds/bin/pip install
detect-secrets`): it is not a dependency of Stele, only measured. The corpus is tests/secret_corpus.py.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROMPT = """Refactor the checkout flow so the retry budget lives in one place. In src/shop/checkout.py
the function `charge(order, token)` calls the payment client three times, and the session key is
rebuilt each time; use the cached one instead. Keep the public API:

    def charge(order: Order, token: str, *, retries: int = 3) -> Receipt:
        session = payments.session(api_key=settings.PAYMENTS_API_KEY)
        for attempt in range(retries):
            ...

Also the password reset mail must not include the user's email twice, and the secret sauce of the
cache (keyed by sha256 of the cart, e.g. 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08)
should stay. Tests are in tests/test_checkout.py; run them with `pytest -k checkout`. The CI token is
read from ${CI_TOKEN}. Don't touch the Authorization header logic in src/shop/http.py.
""" * 2

STELE_SCAN = """
import json, sys
sys.path.insert(0, {root!r})
from tests.secret_corpus import shapes, look_alikes
from stele.redact import Redactor
red = Redactor()
def found(text):
    return [text[s:e] for s, e, _ in red.spans(text)]
print(json.dumps({{"shapes": [[s.family, s.name, list(s.secrets), found(s.text)] for s in shapes()],
                  "look_alikes": [[t, found(t)] for t in look_alikes()]}}))
"""

DS_SCAN = """
import json, sys
sys.path.insert(0, {root!r})
from tests.secret_corpus import shapes, look_alikes
import os, tempfile
from detect_secrets import SecretsCollection
from detect_secrets.settings import default_settings
def found(text):
    # a file scan applies the entropy limits and the false-positive filters (scan_line does not)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "note.txt")
        open(path, "w").write(text)
        collection = SecretsCollection()
        collection.scan_file(path)
        # what it reports as the value, and the whole lines it flags (its regexes often capture
        # only a prefix: "ghp" for a GitHub token), so a redactor built on it would drop lines
        lines = text.splitlines()
        return ([s.secret_value or "" for _, s in collection],
                [lines[s.line_number - 1] for _, s in collection])
with default_settings():
    results = {{"shapes": [[s.family, s.name, list(s.secrets), found(s.text)] for s in shapes()],
               "look_alikes": [[t, found(t)] for t in look_alikes()]}}
    print(json.dumps({{
        "values": {{"shapes": [[a, b, c, f[0]] for a, b, c, f in results["shapes"]],
                    "look_alikes": [[t, f[0]] for t, f in results["look_alikes"]]}},
        "lines": {{"shapes": [[a, b, c, f[1]] for a, b, c, f in results["shapes"]],
                   "look_alikes": [[t, f[1]] for t, f in results["look_alikes"]]}}}}))
"""

COLD = {
    "stele": "import sys; sys.path.insert(0, {src!r}); from stele.redact import redact; redact({prompt!r})",
    "detect-secrets": ("import tempfile\nfrom detect_secrets import SecretsCollection\n"
                       "from detect_secrets.settings import default_settings\n"
                       "f = tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False)\n"
                       "f.write({prompt!r}); f.close()\n"
                       "with default_settings():\n"
                       "    SecretsCollection().scan_file(f.name)"),
}

WARM = {
    "stele": ("import sys, time; sys.path.insert(0, {src!r}); from stele.redact import redact; redact('x')\n"
              "t = time.perf_counter()\nfor _ in range(200): redact({prompt!r})\n"
              "print((time.perf_counter() - t) / 200 * 1000)"),
    "detect-secrets": ("import tempfile, time\nfrom detect_secrets import SecretsCollection\n"
                       "from detect_secrets.settings import default_settings\n"
                       "f = tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False)\n"
                       "f.write({prompt!r}); f.close()\n"
                       "with default_settings():\n"
                       "    SecretsCollection().scan_file(f.name)\n"
                       "    t = time.perf_counter()\n"
                       "    for _ in range(20): SecretsCollection().scan_file(f.name)\n"
                       "    print((time.perf_counter() - t) / 20 * 1000)"),
}


CPU = ("import time, re, dataclasses, collections, functools, math, typing\n"
       "t = time.process_time()\n{code}\nprint((time.process_time() - t) * 1000)")


WRITES = ("import sys, json, time; sys.path.insert(0, {src!r}); from stele.redact import redact; redact('x')\n"
          "groups = json.load(open({path!r}))\nout = {{}}\n"
          "for name, texts in groups.items():\n"
          "    best = None\n"
          "    for _ in range(5):\n"
          "        t = time.process_time()\n"
          "        for text in texts: redact(text)\n"
          "        took = (time.process_time() - t) / len(texts) * 1000\n"
          "        best = took if best is None else min(best, took)\n"
          "    out[name] = round(best, 3)\n"
          "print(json.dumps(out))")


def write_texts() -> dict[str, list[str]]:
    """The two realistic writes: this record's fact files, and gitleaks' samples pasted 60 to a note."""
    import gzip

    facts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs" / "memory").rglob("*.md"))]
    data = json.loads(gzip.decompress((ROOT / "tests" / "fixtures" / "gitleaks_samples.json.gz").read_bytes()))
    seen: dict[str, str] = {}
    for t in data["true_positives"]:
        seen.setdefault(t["secret"], t["sample"])
    samples = list(seen.values())
    notes = ["\n\n".join(samples[n:n + 60]) for n in range(0, len(samples), 60)]
    return {"fact_file": facts, "gitleaks_note_of_60": notes}


def cpu(python: str, code: str, runs: int) -> float:
    """Median CPU time of `code` in a fresh process (steadier than wall time on a shared machine)."""
    times = [float(subprocess.run([python, "-c", CPU.format(code=code)], check=True, capture_output=True,
                                  text=True).stdout) for _ in range(runs)]
    return statistics.median(times)


def wall(python: str, code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([python, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def score(result: dict) -> dict:
    covered = [all(any(v in f for f in found) for v in secrets) for _, _, secrets, found in result["shapes"]]
    families = {fam for fam, *_ in result["shapes"]}
    missed = [f"{fam}: {name}" for (fam, name, *_), ok in zip(result["shapes"], covered, strict=True)
              if not ok]
    damaged = [t for t, found in result["look_alikes"] if found]
    return {"shapes": len(covered), "covered": sum(covered), "families": len(families),
            "families_fully_covered": len(families - {m.split(":")[0] for m in missed}),
            "look_alikes": len(result["look_alikes"]), "damaged": len(damaged),
            "missed": missed, "damaged_texts": damaged}


def measure(name: str, python: str, scan: str, runs: int, src: Path = ROOT / "src") -> dict:
    out = subprocess.run([python, "-c", scan.format(root=str(ROOT))], check=True, capture_output=True,
                         text=True, env=_env(src)).stdout
    base = wall(python, "pass", runs)
    code = COLD[name].format(src=str(src), prompt=PROMPT)
    warm = subprocess.run([python, "-c", WARM[name].format(src=str(src), prompt=PROMPT)], check=True,
                          capture_output=True, text=True).stdout
    writes = {}
    if name == "stele":
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(write_texts(), f)
        writes = json.loads(subprocess.run([python, "-c", WRITES.format(src=str(src), path=f.name)], check=True,
                                           capture_output=True, text=True).stdout)
        Path(f.name).unlink()
    data = json.loads(out)
    scored = score(data) if "shapes" in data else {**score(data["values"]),
                                                   "whole_lines": score(data["lines"])}
    return {**scored, "cold_ms_over_bare_python": round(wall(python, code, runs) - base, 1),
            "cold_cpu_ms": round(cpu(python, code, runs), 1),
            "json_import_cpu_ms": round(cpu(python, "import json", runs), 1),
            "bare_python_ms": round(base, 1), "warm_ms_per_2kb_prompt": round(float(warm), 2),
            **{f"warm_cpu_ms_per_{k}": v for k, v in writes.items()}}


def _env(src: Path) -> dict[str, str]:
    """The scan imports `stele` from `src` (another tree's engine, for a before/after)."""
    import os

    return {**os.environ, "PYTHONPATH": str(src)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--detect-secrets", metavar="PYTHON", help="a python with detect-secrets installed")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="the source tree whose engine is measured")
    args = ap.parse_args()
    results = {"stele": measure("stele", sys.executable, STELE_SCAN, args.runs, args.src.resolve())}
    if args.detect_secrets:
        results["detect-secrets"] = measure("detect-secrets", args.detect_secrets, DS_SCAN, args.runs)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"prompt: {len(PROMPT)} characters; medians of {args.runs} fresh processes")
    for name, r in results.items():
        print(f"\n{name}: {r['covered']}/{r['shapes']} shapes removed whole, "
              f"{r['families_fully_covered']}/{r['families']} families fully, "
              f"{r['damaged']}/{r['look_alikes']} look-alikes damaged; "
              f"cold start +{r['cold_ms_over_bare_python']} ms over bare python ({r['bare_python_ms']} ms), "
              f"{r['warm_ms_per_2kb_prompt']} ms per prompt warm; import and first redaction "
              f"{r['cold_cpu_ms']} ms CPU (import json: {r['json_import_cpu_ms']} ms CPU)")
        for k in ("warm_cpu_ms_per_fact_file", "warm_cpu_ms_per_gitleaks_note_of_60"):
            if k in r:
                print(f"  {k.replace('_', ' ')}: {r[k]} ms (best of 5 passes)")
        if "whole_lines" in r:
            w = r["whole_lines"]
            print(f"  redacting every flagged line whole instead: {w['covered']}/{w['shapes']} shapes, "
                  f"{w['damaged']}/{w['look_alikes']} look-alikes damaged")
        for m in r["missed"]:
            print(f"  missed  {m}")
        for t in r["damaged_texts"]:
            print(f"  damaged {t[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
