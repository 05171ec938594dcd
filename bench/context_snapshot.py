"""Snapshot cost: building the code index, keeping it fresh, and `stele context --task` per process.

A synthetic repository: FILES Python modules of ~120 lines each (about 20 functions per file), FACTS
facts (always rules, ranked decisions anchored to functions, current documents) and one task. Reports:
- the first `stele context` (code index built from nothing, record index built) wall time;
- `stele context --task` per fresh process, p50/p95 over RUNS, nothing changed;
- the same right after one source file was edited (one file re-chunked);
- the in-process share of the code index refresh with nothing changed.

    .venv/bin/python bench/context_snapshot.py                     # 2,000 files, 1,000 facts
    .venv/bin/python bench/context_snapshot.py --files 10000 --facts 1000 --runs 10 --json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
WORDS = [
    "order", "invoice", "payment", "refund", "ledger", "account", "customer", "shipment", "stock", "price",
    "discount", "tax", "session", "token", "limiter", "cache", "queue", "retry", "webhook", "export",
    "report", "audit"
]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def module(n: int) -> str:
    out = [f'"""Module {n}."""', "import os", ""]
    for f in range(20):
        a, b = WORDS[(n + f) % len(WORDS)], WORDS[(n * 7 + f) % len(WORDS)]
        out += ["", f"def {a}_{b}_{f}(value):", f"    # handles the {a} of a {b}",
                f"    total = compute_{a}(value)", f"    return total + {f}", ""]
    return "\n".join(out) + "\n"


def fact(fid: str, kind: str, title: str, body: str, extra: str = "") -> str:
    return f"---\nid: {fid}\nkind: {kind}\ntitle: {title}\n{extra}---\n{body}\n"


def build(root: Path, files: int, facts: int) -> str:
    git(root, "init", "-q")
    for n in range(files):
        path = root / "src" / f"pkg{n // 100}" / f"mod{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module(n))
    mem = root / "docs" / "memory"
    mem.mkdir(parents=True)
    for n in range(facts):
        a, b = WORDS[n % len(WORDS)], WORDS[(n * 3) % len(WORDS)]
        if n < 10:
            text = fact(f"INS-{n:04d}", "instruction", f"Rule {n} about {a}",
                        f"Always check the {a} before {b}.")
        elif n % 10 == 0:
            text = fact(f"DOC-{n:04d}", "document", f"How {a} works", f"The {a} flow and its {b}.",
                        "status: current\n")
        else:
            m = n % files  # anchored to the first function of module m
            anchor = f"src/pkg{m // 100}/mod{m}.py::{a}_{WORDS[(m * 7) % len(WORDS)]}_0"
            text = fact(f"DEC-{n:04d}", "decision", f"The {a} {b} decision {n}",
                        f"We keep the {a} apart from the {b} because of {n}.", f"anchors:\n  - {anchor}\n")
        (mem / f"{n:05d}.md").write_text(text)
    body = "Refund a payment to the customer account and record it in the ledger."
    (mem / "task.md").write_text(fact("TASK-0001", "task", "Refund an invoice payment", body))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "bench")
    return "TASK-0001"


def timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--facts", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    stele = str(Path(sys.executable).with_name("stele"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        task = build(root, args.files, args.facts)
        subprocess.run([stele, "init"], cwd=root, check=True, capture_output=True)
        cmd = [stele, "context", "--task", task, "--json"]
        cold = timed(cmd, root)
        warm = [timed(cmd, root) for _ in range(args.runs)]
        edited = []
        for n in range(args.runs):
            path = root / "src" / "pkg0" / "mod0.py"
            path.write_text(path.read_text() + f"\n\ndef refund_step_{n}(payment):\n    return payment\n")
            edited.append(timed(cmd, root))
        snap = json.loads(subprocess.run(cmd, cwd=root, check=True, capture_output=True, text=True).stdout)
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        from stele.index import code
        from stele.project import Project

        t0 = time.perf_counter()
        code.refresh(Project(root))
        refresh = time.perf_counter() - t0
    q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]  # noqa: E731
    result = {
        "files": args.files, "facts": args.facts, "runs": args.runs, "cold_s": round(cold, 3),
        "warm_p50_s": round(statistics.median(warm), 3), "warm_p95_s": round(q(warm, 0.95), 3),
        "after_edit_p50_s": round(statistics.median(edited), 3), "refresh_unchanged_s": round(refresh, 3),
        "usage": {row["part"]: [row["items"], row["bytes"]] for row in snap["usage"]},
    }
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for key, value in result.items():
            print(f"{key:>20}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
