#!/usr/bin/env python3
"""`stele search` quality in one process, for trying a ranking change in seconds rather than minutes.

    # nDCG@10 on a BEIR set, over the repository run_beir.py kept (--keep): the same facts and scoring
    python bench/search_quality.py beir /tmp/stele-scifact-XXXX/repo ../shared/eval/scifact
    # known-item MRR@10 on code-project records: each fact searched by the first N content words of
    # its title (what a person types to find a fact they remember), over kept repos (run_eval.py --keep,
    # eval/run_sets.py --keep DIR)
    python bench/search_quality.py known-item --words 2 /tmp/stele-eval-XXXX/repo /tmp/sets/go-sdk ...

`beir` matches run_beir.py's figure to the third decimal (search_in over one open index instead of a
process per query); `known-item` is the check that a change made for BEIR's topical queries does not
cost the lookups a project record mostly serves (docs/retrieval.md, "Tried for issue 26").
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import re
from pathlib import Path

from stele.index.build import open_index
from stele.index.text import FUNCTION_WORDS
from stele.project import find
from stele.retrieve.search import search_in
from stele.retrieve.settings import Settings

SUFFIX_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{3,}$")  # run_beir.py's test for ids that fit NOTE-<id>


def beir(repo: Path, data: Path) -> float:
    with gzip.open(data / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f if line.strip()]
    numbered = not all(SUFFIX_RE.match(d["_id"]) for d in docs)
    width = max(3, len(str(len(docs))))
    fid = {d["_id"]: (f"{n:0{width}d}" if numbered else d["_id"]) for n, d in enumerate(docs, 1)}
    qrels: dict[str, dict[str, int]] = {}
    for line in (data / "qrels-test.tsv").read_text().splitlines()[1:]:
        q, d, s = line.split("\t")
        qrels.setdefault(q, {})[f"NOTE-{fid[d]}" if d in fid else f"ABSENT-{d}"] = int(s)
    queries = [json.loads(x) for x in (data / "queries.jsonl").read_text().splitlines() if x.strip()]
    project = find(repo)
    settings = Settings.from_config(project.config)
    total = 0.0
    with open_index(project) as index:
        for q in queries:
            ranked = [h.id for h in search_in(index, q["text"], settings, 10, (), False, []).results]
            rel = qrels.get(q["_id"], {})
            dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked))
            ideal = sorted((g for g in rel.values() if g > 0), reverse=True)[:10]
            idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
            total += dcg / idcg if idcg else 0.0
    return total / len(queries)


def known_item(repo: Path, words: int) -> tuple[float, int]:
    project = find(repo)
    settings = Settings.from_config(project.config)
    total, n = 0.0, 0
    with open_index(project) as index:
        ids = sorted({m.group(0) for p in (repo / "docs" / "memory").rglob("*.md")
                      if (m := re.match(r"[A-Z]+-[0-9A-Z]+", p.name))})
        for fact_id, node in sorted(index.catalog.nodes(ids).items()):
            query = [w for w in re.findall(r"\w+", node.title) if w.lower() not in FUNCTION_WORDS][:words]
            if node.source != "committed" or len(query) < words:
                continue
            found = [h.id for h in search_in(index, " ".join(query), settings, 10, (), True, []).results]
            total += 1 / (found.index(fact_id) + 1) if fact_id in found else 0.0
            n += 1
    return (total / n if n else 0.0), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("beir")
    b.add_argument("repo", type=Path)
    b.add_argument("data", type=Path)
    k = sub.add_parser("known-item")
    k.add_argument("repos", type=Path, nargs="+")
    k.add_argument("--words", type=int, default=2)
    args = ap.parse_args()
    if args.what == "beir":
        print(f"{args.data.name}: nDCG@10 {beir(args.repo, args.data):.4f}")
        return
    total, count = 0.0, 0
    for repo in args.repos:
        mrr, n = known_item(repo, args.words)
        print(f"{repo}: known-item MRR@10 {mrr:.3f} over {n} facts ({args.words} title words)")
        total, count = total + mrr * n, count + n
    print(f"all: known-item MRR@10 {total / max(1, count):.3f} over {count} facts")


if __name__ == "__main__":
    main()
