"""Print docs/security.md's figures for gitleaks' pinned samples, and what each changed plain false positive is.

The figures are those `tests/test_redact_gitleaks.py` holds as ceilings: true positives whose secret
survives, and false positives changed by redaction, by class (tests/gitleaks_corpus.py), by half
(tuned on / held out) and without those in which another gitleaks rule reports a secret. Each changed
plain false positive is listed by rule, half, the kind that replaced it, whether gitleaks itself
reports it, and whether its text is also a true-positive sample of its own rule (gitleaks tells the
two apart by file name only). `--samples` prints the samples too (fake tokens, as in the fixture).

    .venv/bin/python scripts/gitleaks_figures.py [--samples]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import gitleaks_corpus as corpus

from stele.redact import redact


def _changed(fps: list[dict]) -> list[dict]:
    return [f for f in fps if redact(f["sample"]).text != f["sample"]]


def _line(label: str, changed: int, total: int) -> str:
    return f"{label}: {changed} of {total} ({100 * changed / total:.1f}%)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", action="store_true", help="print each changed plain sample")
    args = ap.parse_args()
    tps = corpus.true_positives()
    leaked = [t for t in tps if t["secret"] in redact(t["sample"]).text]
    print(f"corpus: gitleaks {corpus.corpus_commit()}")
    print(f"true positives whose secret survives: {len(leaked)} of {len(tps)}")
    for kind in ("placeholder", "other rule", "plain"):
        fps = corpus.false_positives(kind)
        print(_line(f"false positives, {kind}, changed", len(_changed(fps)), len(fps)))
    plain = corpus.false_positives("plain")
    tune = [f for f in plain if not corpus.held_out(f["rule"])]
    held = [f for f in plain if corpus.held_out(f["rule"])]
    print(_line("  tuned-on half", len(_changed(tune)), len(tune)))
    print(_line("  held-out half", len(_changed(held)), len(held)))
    unreported = [f for f in plain if not corpus.reported_by_gitleaks(f)]
    print(_line("  none reported by another gitleaks rule", len(_changed(unreported)), len(unreported)))
    tp_texts = {(t["rule"], t["sample"]) for t in corpus.load()["true_positives"]}
    print("changed plain false positives:")
    for f in _changed(plain):
        kinds = sorted({kind for kind, _ in redact(f["sample"]).secrets})
        notes = ["held out" if corpus.held_out(f["rule"]) else "tuned on"]
        if corpus.reported_by_gitleaks(f):
            notes.append("gitleaks reports it (" + ", ".join(r for r in f["flagged_by"] if r != f["rule"]) + ")")
        if (f["rule"], f["sample"]) in tp_texts:
            notes.append("same text as a true positive of its rule")
        print(f"  {f['rule']}: {', '.join(kinds)}; {'; '.join(notes)}")
        if args.samples:
            print("    " + repr(f["sample"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
