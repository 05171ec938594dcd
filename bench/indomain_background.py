#!/usr/bin/env python3
"""An in-domain background per record: does a seed that passed by the cosine stand out from the parts
of the repository no fact is anchored to? Measurement only (issue 26, docs/retrieval.md, "Measured on
2026-12-02 (bg30)").

    python eval/run_sets.py SET... --half tune -v --keep DIR    # lay the repositories out
    python bench/indomain_background.py DIR SET... --half tune [--json OUT]

For each kept repository, the pseudo-prompts are built from the paths of the commit checked out (as
`index.repowords` reads them: the record's folder and `.stele/` left out) that no fact is anchored to,
in three pools: every folder with no anchor inside it, on it or above it ("folders", its whole path);
those plus every file no anchor names in a folder that is anchored ("files"); and the same folders and
files by their last two parts only ("tails": `support/guid`, `path_reservation`). Each is "how does
<the path's words> work" (names split at `/ _ - .` and case changes, one-letter parts dropped), at
most `CAP` of them, evenly spread. Each fact's cosines to a pool (its stored vector against the
pseudo-prompts embedded by the index's query encoder) are its in-domain background.

Every case runs as `stele eval` runs it. For each search seed that passed the vector test
(`seeds.by_vector` at 1), per pool: `z`, its cosine's deviations above the in-domain background's mean;
`p90` and `max`, its cosine less that background's 90th percentile and maximum; `prompt`, its cosine
less the prompt's own best cosine to the pool (is the prompt nearer an unanchored part than this
fact?). Reported: the expected facts of answered on-topic prompts against the seeds of leaking
off-topic prompts, per hit; then per prompt, a simulated rule (a seed that passed by the cosine alone
and stands under the line is dropped): which leaks stop (no seed passing on its own left), which
answered on-topic prompts are emptied, and which lose an expected fact that was such a seed.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

SETS = Path(__file__).resolve().parent.parent / "eval" / "sets"
CAP = 10000  # pseudo-prompts per pool (the seven tune repositories give at most 1,286)
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


def words_of(path: str) -> list[str]:
    out: list[str] = []
    for part in re.split(r"[/_\-.\s]+", path):
        for w in _PART.findall(part):
            w = w.lower()
            if len(w) > 1 and w not in out:
                out.append(w)
    return out


def tracked(root: Path, memory_dir: str) -> list[str]:
    out = subprocess.run(["git", "ls-tree", "-r", "-z", "--name-only", "HEAD"], cwd=root,
                         capture_output=True, check=True)
    memory = memory_dir.strip("/") + "/"
    return [p for p in out.stdout.decode("utf-8", "replace").split("\0")
            if p and not p.startswith((memory, ".stele/"))]


def anchor_prefixes(index) -> list[str]:
    """Anchored paths (a glob by its literal head), without a trailing slash."""
    out = set()
    for path, glob in index.catalog.db.execute("SELECT DISTINCT path, glob FROM anchors"):
        p = str(path)
        if glob:
            p = re.split(r"[*?\[{]", p, maxsplit=1)[0].rsplit("/", 1)[0] if "/" in p else ""
        p = p.strip("/")
        if p:
            out.add(p)
    return sorted(out)


def pools(paths: list[str], anchors: list[str]) -> dict[str, list[str]]:
    def touches(d: str) -> bool:  # an anchor inside d, on d, or above d
        return any(a == d or a.startswith(d + "/") or d.startswith(a + "/") for a in anchors)

    folders = sorted({"/".join(p.split("/")[:n]) for p in paths for n in range(1, p.count("/") + 1)})
    free = [d for d in folders if not touches(d)]
    anchored = set(anchors)
    files = [p for p in paths if "/" in p and touches(p.rsplit("/", 1)[0])
             and p not in anchored and not any(p.startswith(a + "/") for a in anchors)]
    files += [p for p in paths if "/" not in p and p not in anchored]

    def prompts(items: list[str]) -> list[str]:
        texts = list(dict.fromkeys(f"how does {' '.join(w)} work" for w in map(words_of, items) if w))
        if len(texts) > CAP:
            texts = [texts[int(i * len(texts) / CAP)] for i in range(CAP)]
        return texts

    tails = ["/".join(d.split("/")[-2:]) for d in free] + [p.rsplit(".", 1)[0].split("/")[-1] for p in files]
    return {"folders": prompts(free), "files": prompts(free + files), "tails": prompts(tails)}


def unit(m: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(n > 0, n, 1)


def measure(root: Path, cases_path: Path) -> list[dict]:
    from stele.project import Project
    from stele.retrieve.evaluate import load_cases, opened, replay
    from stele.retrieve.seeds import by_vector, passed, query_encoder, vector_hits

    project = Project(root)
    cases = load_cases(cases_path)
    rows = []
    with opened(project, cases) as (index, s):
        enc = query_encoder(project)
        anchors = anchor_prefixes(index)
        pool_texts = pools(tracked(root, str(project.config["memory_dir"])), anchors)
        pool_vecs = {k: unit(np.asarray(enc.encode(v), dtype=np.float32)) for k, v in pool_texts.items()}
        print(f"{root.name}: {len(anchors)} anchored paths, pseudo-prompts "
              + ", ".join(f"{k} {len(v)}" for k, v in pool_texts.items()) + f"; e.g. {pool_texts['folders'][:3]}",
              file=sys.stderr)
        for case, result, window, fails in replay(index, cases.cases, s):
            trace = result.trace
            if trace is None or not case.prompt:
                continue
            seeds = {x.id for x in trace.seeds if x.origin == "text"}
            wanted = set(case.expect + case.expect_top + case.callout)
            found: dict[str, bytes] = {}
            text = trace.gate.text or case.prompt
            vector_hits(index, text, 200, rows=found)
            pv = unit(np.asarray(enc.encode([text]), dtype=np.float32))[0]
            near = {name: float((m @ pv).max()) for name, m in pool_vecs.items()}
            for h in trace.candidates:
                if h.id not in seeds:
                    continue
                why = passed(h, s) or ""
                kind = ("name" if why.startswith("names") else "lead" if why.startswith("leads")
                        else "coverage" if why.startswith("coverage") else "cosine" if why.startswith("cosine")
                        else "support" if not why else "other")
                figs: dict = {}
                if by_vector(h, s) >= 1.0 and h.id in found:
                    v = unit(np.frombuffer(found[h.id], dtype=np.float32))
                    for name, m in pool_vecs.items():
                        c = m @ v
                        mean, sd = float(c.mean()), float(c.std())
                        figs[f"{name}_z"] = (h.cosine - mean) / sd if sd > 0 else 0.0
                        figs[f"{name}_p90"] = h.cosine - float(np.quantile(c, 0.9))
                        figs[f"{name}_max"] = h.cosine - float(c.max())
                        figs[f"{name}_prompt"] = h.cosine - near[name]
                        figs[f"{name}_top"] = pool_texts[name][int(c.argmax())]
                rows.append({"set": root.name, "case": case.id, "type": case.type, "ok": not fails,
                             "window": len(window), "hit": h.id, "passed": kind,
                             "expected": h.id in wanted, "coverage": round(h.coverage, 3),
                             "cosine": None if h.cosine is None else round(h.cosine, 3), "z": round(h.z or 0, 2), **figs})
    return rows


FIGS = tuple(f"{pool}_{fig}" for pool in ("folders", "files", "tails") for fig in ("z", "p90", "max", "prompt"))


def report(rows: list[dict]) -> None:
    q = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))]  # noqa: E731
    for kind in ("cosine", "any"):
        sel = [r for r in rows if "folders_z" in r and (kind == "any" or r["passed"] == "cosine")]
        exp = [r for r in sel if r["type"] != "offtopic" and r["expected"] and r["ok"]]
        leak = [r for r in sel if r["type"] == "offtopic" and r["window"] > 0]
        print(f"seeds passing the vector test ({'by it alone' if kind == 'cosine' else 'any test'}): "
              f"{len(exp)} expected facts of answered on-topic prompts, {len(leak)} seeds of "
              f"{len({(r['set'], r['case']) for r in leak})} leaking off-topic prompts")
        for fig in FIGS:
            e = sorted(r[fig] for r in exp)
            lk = sorted(r[fig] for r in leak)
            if e and lk:
                print(f"  {fig:12} expected min {e[0]:6.2f} p10 {q(e, .1):6.2f} median {q(e, .5):6.2f} max {e[-1]:6.2f}"
                      f" | leaks min {lk[0]:6.2f} median {q(lk, .5):6.2f} p90 {q(lk, .9):6.2f} max {lk[-1]:6.2f}")
    by: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["set"], r["case"])].append(r)
    leaks = {k: v for k, v in by.items() if v[0]["type"] == "offtopic" and v[0]["window"] > 0}
    answered = {k: v for k, v in by.items() if v[0]["type"] != "offtopic" and v[0]["ok"]}
    print(f"per prompt, simulated: a seed that passed by the cosine alone and stands under the line is dropped; "
          f"a leak ({len(leaks)} with seeds) stops when no seed passing on its own is left; an answered on-topic "
          f"prompt ({len(answered)}) is lost when none is left (emptied) or when an expected fact that was such "
          f"a seed is dropped (at risk: it may still come as support)")

    def left(v: list[dict], fig: str, t: float) -> list[dict]:
        return [r for r in v if r["passed"] not in ("support",)
                and not (r["passed"] == "cosine" and r.get(fig, 1e9) < t)]

    for fig in FIGS:
        # the lines worth trying: just over each leak's highest cosine-alone seed
        tops = sorted({max(r.get(fig, -1e9) for r in v if r["passed"] == "cosine")
                       for v in leaks.values() if any(r["passed"] == "cosine" for r in v)})
        print(f"  {fig}: leaks' best cosine-alone seed " + " ".join(f"{x:.2f}" for x in tops))
        for t in [round(x + 0.005, 2) for x in tops]:
            stops = sorted(f"{k[0]}/{k[1]}" for k, v in leaks.items() if not left(v, fig, t))
            emptied = sorted(f"{k[0]}/{k[1]}" for k, v in answered.items() if not left(v, fig, t))
            risk = sorted(f"{k[0]}/{k[1]}" for k, v in answered.items() if left(v, fig, t)
                          and any(r["expected"] and r["passed"] == "cosine" and r.get(fig, 1e9) < t for r in v))
            print(f"      line {t:6.2f}: stops {len(stops)} {stops}; emptied {len(emptied)} {emptied[:5]}; "
                  f"at risk {len(risk)} {risk[:5]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="the --keep folder of eval/run_sets.py")
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--half", default="tune")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    for name in args.sets:
        rows += measure(args.root / name, SETS / name / f"{args.half}.yaml")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
