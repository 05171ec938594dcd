#!/usr/bin/env python3
"""Soft coverage (word-level alignment with the static model's own word vectors): does it separate
the expected facts of on-topic prompts from the seeds of off-topic prompts that leak? Measurement
only (issue 26, docs/retrieval.md "Measured, not merged: soft coverage").

    python eval/run_sets.py SET... --half tune -v --keep DIR    # lay the repositories out
    python bench/soft_coverage.py DIR SET... --half tune [--json OUT]
    python bench/soft_coverage.py DIR SET --pairs billed:charged delete:remove   # word-word cosines too

Every case of the half runs as `stele eval` runs it (one open index, sessions in file order, the case
file's `today:`). For each hit that passed a floor and became a search seed, soft coverage is: each
content word of the prompt (function words left out, rarity-weighted as `seeds.Coverage` weighs it;
a word no fact holds weighs as the rarest) is matched to its most similar word of the fact (title and
body; a fact longer than `seeds.LONG_FACT` by its best passage plus title) by the cosine of the words'
vectors (each word embedded alone by the index's encoder: the mean of its tokens); a word the fact
holds by the analyzer's term counts 1. Figures: the weighted share of prompt words whose best cosine
reaches t (0.5, 0.6, 0.7), and the weighted mean of the best cosines.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

SETS = Path(__file__).resolve().parent.parent / "eval" / "sets"
THRESHOLDS = (0.35, 0.4, 0.5, 0.6)
MISSED = 10  # candidates (in fused order) judged for a soft floor when no test passed them
_WORD = re.compile(r"\w+")


class Soft:
    """Word vectors of one encoder, cached."""

    def __init__(self, enc) -> None:
        self.enc = enc
        self.cache: dict[str, np.ndarray] = {}

    def vecs(self, words: list[str]) -> np.ndarray:
        new = [w for w in dict.fromkeys(words) if w not in self.cache]
        if new:
            rows = np.asarray(self.enc.encode(new), dtype=np.float32)
            for w, r in zip(new, rows, strict=True):
                n = float(np.linalg.norm(r))
                self.cache[w] = r / n if n > 0 else r
        if not words:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self.cache[w] for w in words])


def prompt_words(text_index, text: str) -> list[tuple[str, str, float]]:
    """(surface word, its term, weight) for each content word of `text`, as `Coverage` weighs them."""
    from stele.index.text import FUNCTION_WORDS

    function = {t for w in FUNCTION_WORDS for t in text_index.analyzer.analyze(w)}
    out: dict[str, str] = {}
    for word in dict.fromkeys(_WORD.findall(text)):
        own = [t for t in text_index.analyzer.analyze(word) if t not in function]
        if not own or own[0] in out.values():
            continue
        out[word] = own[0]
    rarity = text_index.rarity(list(out.values()))
    return [(w, t, rarity[t][0]) for w, t in out.items()]


def fact_words(text_index, text: str) -> tuple[list[str], set[str]]:
    from stele.index.text import FUNCTION_WORDS

    words = [w for w in dict.fromkeys(_WORD.findall(text)) if w.lower() not in FUNCTION_WORDS and not w.isdigit()]
    return words, set(text_index.terms(text))


def soft_figures(soft: Soft, pw: list[tuple[str, str, float]], fw: list[str], terms: set[str]) -> dict:
    total = sum(w for _, _, w in pw) or 1.0
    if not fw or not pw:
        best = np.zeros(len(pw))
    else:
        sims = soft.vecs([w for w, _, _ in pw]) @ soft.vecs(fw).T
        best = sims.max(axis=1)
    best = np.array([1.0 if t in terms else float(b) for (_, t, _), b in zip(pw, best, strict=True)])
    weights = np.array([w for _, _, w in pw])
    out = {f"share{t}": float(weights[best >= t].sum() / total) for t in THRESHOLDS}
    out["mean"] = float((weights * best).sum() / total)
    out["hard"] = float(weights[best >= 0.999].sum() / total)
    out["best"] = {w: round(float(b), 2) for (w, _, _), b in zip(pw, best, strict=True)}
    out["weight"] = {w: round(float(x) / total, 3) for w, _, x in pw}
    return out


def hit_soft(index, soft: Soft, pw, hit_id: str) -> dict:
    from stele.retrieve.seeds import LONG_FACT, passages

    node = index.catalog.nodes([hit_id]).get(hit_id)
    title = node.title if node else ""
    body = index.catalog.body(hit_id) or ""
    texts = [f"{title}\n{p}" for p in passages(body)] if len(body) > LONG_FACT else [f"{title}\n{body}"]
    best = None
    for text in texts:
        fw, terms = fact_words(index.text, text)
        f = soft_figures(soft, pw, fw, terms)
        if best is None or f["share0.6"] + f["mean"] > best["share0.6"] + best["mean"]:
            best = f
    return best or {}


def measure(root: Path, cases_path: Path) -> list[dict]:
    from stele.project import Project
    from stele.retrieve.evaluate import load_cases, opened, replay
    from stele.retrieve.seeds import contradicted, passed, query_encoder

    project = Project(root)
    cases = load_cases(cases_path)
    rows = []
    with opened(project, cases) as (index, s):
        soft = Soft(query_encoder(project))
        for case, result, window, fails in replay(index, cases.cases, s):
            trace = result.trace
            if trace is None or not case.prompt:
                continue
            seeds = {x.id for x in trace.seeds if x.origin == "text"}
            pw = prompt_words(index.text, trace.gate.text or case.prompt)
            wanted = set(case.expect + case.expect_top + case.callout)
            for n, h in enumerate(trace.candidates):
                why = passed(h, s)
                if why is not None and h.id in seeds:
                    kind = ("name" if why.startswith("names") else "lead" if why.startswith("leads")
                            else "coverage" if why.startswith("coverage") else "cosine")
                elif why is None and n < MISSED and (h.id in wanted or case.type == "offtopic"):
                    # would a soft coverage floor let it in? (`report`: rescued against new leaks)
                    kind = "missed-contradicted" if contradicted(h, s) else "missed"
                else:
                    continue
                f = hit_soft(index, soft, pw, h.id)
                rows.append({"set": root.name, "case": case.id, "type": case.type, "ok": not fails,
                             "hit": h.id, "passed": kind, "expected": h.id in wanted,
                             "coverage": round(h.coverage, 3), "cosine": h.cosine, "z": h.z,
                             "window": len(window), **f})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="the --keep folder of eval/run_sets.py")
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--half", default="tune")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--pairs", nargs="*", default=[], help="also print the cosine of word pairs a:b")
    args = ap.parse_args()
    if args.pairs:
        from stele.project import Project
        from stele.retrieve.seeds import query_encoder

        soft = Soft(query_encoder(Project(args.root / args.sets[0])))
        for pair in args.pairs:
            a, b = pair.split(":")
            print(f"{a} ~ {b}: {float((soft.vecs([a]) @ soft.vecs([b]).T)[0, 0]):.2f}")
    rows = []
    for name in args.sets:
        rows += measure(args.root / name, SETS / name / f"{args.half}.yaml")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    report(rows)
    return 0


def report(rows: list[dict]) -> None:
    """Expected facts of answered on-topic prompts against the seeds of leaking off-topic prompts."""
    seeds = [r for r in rows if not r["passed"].startswith("missed")]
    for kind in ("cosine", "any"):
        sel = [r for r in seeds if kind == "any" or r["passed"] == "cosine"]
        exp = [r for r in sel if r["type"] != "offtopic" and r["expected"]]
        leak = [r for r in sel if r["type"] == "offtopic"]
        print(f"hits passing by {kind}: {len(exp)} expected facts, {len(leak)} leaking seeds "
              f"({len({(r['set'], r['case']) for r in leak})} prompts)")
        for fig in (*(f"share{t}" for t in THRESHOLDS), "mean", "hard"):
            e = sorted(r[fig] for r in exp)
            lk = sorted(r[fig] for r in leak)
            if not e or not lk:
                continue
            q = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))]  # noqa: E731
            print(f"  {fig:9} expected min {e[0]:.3f} p10 {q(e, .1):.3f} median {q(e, .5):.3f} | "
                  f"leaks min {lk[0]:.3f} median {q(lk, .5):.3f} p90 {q(lk, .9):.3f} max {lk[-1]:.3f}")
            for t in sorted({round(x, 2) for x in (q(e, .05), q(e, .1), q(e, .2), q(e, .3))}):
                print(f"      line {t:.2f}: expected under {sum(x < t for x in e)}/{len(e)}, "
                      f"leaks under {sum(x < t for x in lk)}/{len(lk)}")

    by: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in seeds:
        by[(r["set"], r["case"])].append(r)
    leaks = [v for v in by.values() if v[0]["type"] == "offtopic" and all(r["passed"] == "cosine" for r in v)]
    answered = [v for v in by.values() if v[0]["type"] != "offtopic" and v[0]["ok"]
                and any(r["expected"] for r in v) and all(r["passed"] == "cosine" for r in v if r["expected"])]
    print(f"as a test of cosine-only seeds: {len(leaks)} leaking prompts whose every seed passed by the cosine "
          f"alone (their best seed), {len(answered)} answered on-topic prompts whose expected seeds did (the best)")
    for fig in (*(f"share{t}" for t in THRESHOLDS), "mean"):
        lk = [max(r[fig] for r in v) for v in leaks]
        ex = [max(r[fig] for r in v if r["expected"]) for v in answered]
        lines = sorted({round(x + 0.005, 2) for x in lk})
        print(f"  {fig:9} " + " | ".join(f"{t:.2f}: stops {sum(x < t for x in lk)}, loses {sum(x < t for x in ex)}"
                                          for t in lines))
    missed = [r for r in rows if r["passed"] == "missed"]
    ok_off = {(r["set"], r["case"]) for r in missed if r["type"] == "offtopic" and r["window"] == 0}
    for t in (0.3, 0.35, 0.4):
        new_leaks = {(r["set"], r["case"]) for r in missed if (r["set"], r["case"]) in ok_off and r["share0.6"] >= t}
        won = {(r["set"], r["case"]) for r in missed if r["type"] != "offtopic" and not r["ok"] and r["expected"]
               and r["share0.6"] >= t}
        print(f"as a coverage floor (share0.6 >= {t}, uncontradicted, on hits no test passed): "
              f"{len(won)} missed on-topic prompts whose expected fact reaches it {sorted(won)}, "
              f"{len(new_leaks)} silent off-topic prompts with a hit reaching it {sorted(new_leaks)}")


if __name__ == "__main__":
    sys.exit(main())
