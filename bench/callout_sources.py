#!/usr/bin/env python3
"""Where each risk callout comes from: for every risk called out on a set's cases, the seeds that
start it (`recall.lifts` of each start alone), the test each passed (`seeds.passed`: coverage, cosine,
named identifier, lead, agreement; or an anchor, a named id) and its margins, the risk's own figures
against the prompt, and which other seeds reach it. Measurement only (issue 26, docs/retrieval.md
"Measured, not merged: a callout margin").

    python eval/run_sets.py SET... --half tune --keep DIR           # lay the repositories out
    python bench/callout_sources.py DIR SET... --half tune [-v] [--json OUT]
    python bench/callout_sources.py SHOP_REPO --cases ../shared/eval/shop/queries.yaml   # run_eval.py --keep

Every case runs as `stele eval` runs it (one open index, sessions in file order, the case file's
`today:`). Each callout is classed by what the case asks of it: `required` (a `callout:` check),
`offtopic` (an off-topic prompt: false), `top` / `expect` (the risk is wanted, in any form), `other`.
`prompt_z` is the start's cosine in deviations above the prompt's mean cosine to the background
prompts, `gap` its cosine less the prompt's nearest background prompt. The last column simulates the
structural rule measured: a causal callout whose every start passed by the cosine (alone, or by
agreement) is withheld unless another seed, not the risk itself, reaches the risk too; a risk that
is itself a start keeps its callout.
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from stele import delivery
from stele.project import Project
from stele.retrieve import recall as R
from stele.retrieve import seeds as S
from stele.retrieve.callout import causal_risks
from stele.retrieve.evaluate import load_cases, opened, replay
from stele.retrieve.settings import Settings
from stele.retrieve.walk import Neighbourhood

SETS = Path(__file__).resolve().parent.parent / "eval" / "sets"


def _hood(index: Any) -> Neighbourhood:
    today = delivery.today()
    return Neighbourhood(index.catalog, lambda n: delivery.withheld(n, today, reached_by_edge=True) is None)


def by_cosine(h: S.Hit, s: Settings) -> bool:
    """It passed by the cosine (alone, or by agreement) and by nothing that points at words or names."""
    if S.by_name(h, s) or S.by_lead(h, s) or (S.by_text(h, s) >= 1.0 and not S.contradicted(h, s)):
        return False
    return S.passed(h, s) is not None


def start_figures(x: Any, s: Settings, prompt_bg: tuple[float, float, float] | None) -> dict[str, Any]:
    if x.hit is None:
        return {"seed": x.id, "test": x.origin + (f" {x.anchor}" if x.anchor else ""), "cosine_only": False}
    h = x.hit
    out: dict[str, Any] = {"seed": x.id, "test": S.passed(h, s), "cosine_only": by_cosine(h, s),
                           "strength": round(x.strength, 2), "coverage": round(h.coverage, 3),
                           "to_text_floor": round(S.by_text(h, s), 3), "cosine": h.cosine,
                           "z": None if h.z is None else round(h.z, 2),
                           "to_vector_test": round(S.by_vector(h, s, alone=True), 3),
                           "bm25_rank": h.bm25_rank, "vector_rank": h.vector_rank}
    if h.cosine is not None and prompt_bg is not None:
        mean, sd, top = prompt_bg
        out["prompt_z"] = round((h.cosine - mean) / sd, 2)
        out["gap"] = round(h.cosine - top, 3)
    return out


def own_figures(index: Any, text: str, risk: str, s: Settings, names: list[str]) -> dict[str, Any]:
    """The risk's own figures against the prompt (as if it were a search hit)."""
    found = S.hybrid(index, text, s, 1000, names=names)
    h = next((x for x in found.hits if x.id == risk), None)
    if h is None:
        h = S.Hit(risk)
        h.coverage = S.Coverage(index.text, text).of(risk)
    if h.cosine is None:
        h = S.consulted(index, text, [h]).get(risk, h)
    rank = next((n for n, x in enumerate(found.hits, 1) if x.id == risk), None)
    return {"coverage": round(h.coverage, 3), "cosine": None if h.cosine is None else round(h.cosine, 3),
            "to_vector_test": round(S.by_vector(h, s), 3), "fused_rank": rank}


def prompt_background(index: Any, text: str) -> tuple[float, float, float] | None:
    try:
        enc = S.query_encoder(index.project)
        q = np.asarray(enc.encode([text])[0], dtype=np.float32)
        bg = np.frombuffer(S.background_rows(index, enc), dtype=np.float32).reshape(-1, q.shape[0])
    except Exception:
        return None
    cos = bg @ q
    return float(cos.mean()), float(cos.std()), float(cos.max())


def verdict(row: dict[str, Any]) -> str:
    starts = row["starts"]
    if any(x["seed"] == row["risk"] for x in starts):
        return "kept (the risk is a start)"
    if any(not x["cosine_only"] for x in starts):
        return "kept (a start passed by words, a name, an anchor)"
    others = [i for i in row["reached_by"] if i not in {x["seed"] for x in starts} and i != row["risk"]]
    return f"kept (also reached from {', '.join(others)})" if others else "WITHHELD"


def measure(repo: Path, cases_path: Path, label: str) -> list[dict[str, Any]]:
    project = Project(repo)
    cases = load_cases(cases_path, repo)
    rows = []
    with opened(project, cases) as (index, s):
        for case, r, _window, _fails in replay(index, cases.cases, s):  # as `stele eval` runs them
            risks = [x.id for x in r.risks]
            if not risks or r.trace is None:
                continue
            tr = r.trace
            starts = [x for x in tr.seeds if x.strength >= s.callout_strength and R.confident(x, s)
                      and x.id not in tr.unconfirmed]
            bg = prompt_background(index, tr.gate.text) if tr.gate.text else None
            for risk in risks:
                lifting = []
                for x in starts:
                    hood = _hood(index)
                    hood.load_nodes([x.id])
                    if risk in R.lifts([x], hood, s):
                        lifting.append(start_figures(x, s, bg))
                reached = []
                for x in tr.seeds:
                    hood = _hood(index)
                    hood.load_nodes([x.id])
                    if x.id == risk or risk in causal_risks([x.id], hood, s.callout_hops):
                        reached.append(x.id)
                need = ("offtopic" if case.type == "offtopic" else "required" if risk in case.callout
                        else "top" if risk in case.expect_top else "expect" if risk in case.expect else "other")
                row = {"set": label, "case": case.id, "risk": risk, "need": need,
                       "hops": next(x.via.hops for x in r.risks if x.id == risk), "starts": lifting,
                       "reached_by": reached,
                       "own": own_figures(index, tr.gate.text, risk, s, list(tr.gate.identifiers))
                       if tr.gate.text else None}
                row["rule"] = verdict(row)
                rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path, help="the --keep folder of run_sets.py (or one repository with --cases)")
    ap.add_argument("sets", nargs="*")
    ap.add_argument("--half", default="tune")
    ap.add_argument("--cases", type=Path, help="one case file, run in DIR itself")
    ap.add_argument("-v", action="store_true", help="every callout, not only required and off-topic ones")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    runs = [(a.dir, a.cases, a.dir.name)] if a.cases else [
        (a.dir / name, SETS / name / f"{a.half}.yaml", f"{name}:{a.half}") for name in a.sets]
    rows = [row for repo, cases, label in runs for row in measure(repo, cases, label)]
    for row in rows:
        if not a.v and row["need"] not in ("required", "offtopic") and row["rule"] != "WITHHELD":
            continue
        print(f"{row['need']:<9} {row['set']:<24} {row['case']:<22} {row['risk']:<10} hops {row['hops']}  "
              f"{row['rule']}")
        for x in row["starts"]:
            print("    start", json.dumps(x))
        print("    own", json.dumps(row["own"]))
    by_need: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        by_need[row["need"]][0] += 1
        by_need[row["need"]][1] += row["rule"] == "WITHHELD"
    print("callouts (raised, withheld by the simulated rule):",
          ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(by_need.items())))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
