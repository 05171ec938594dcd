#!/usr/bin/env python3
"""The embedding half of a prompt (issue 19), stage by stage, in fresh processes: loading the query
encoder (its tokenizer), embedding the prompt, and the vector scan (`vectors.top_k` over the record's
rows, k = the pool recall asks for). With `--base SRC` (a `src` folder of another checkout, e.g.
`git archive <commit> src | tar -x -C /tmp/base`) the same stages of that code run interleaved with
this tree's, round by round, so the two are measured under the same load.

    .venv/bin/python bench/query_path.py --runs 10
    .venv/bin/python bench/query_path.py --runs 10 --base /tmp/base/src

Prompts: the record's prompts that consult the embeddings (sorted in-process as hook_floor.py does,
but keeping those that then find nothing too: the embedding work is done either way). CPU per stage
is `time.process_time` in the child; the whole child's CPU (user + system) comes from `os.wait4`.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(HERE))
from hook_floor import PARAPHRASES, record_titles, sort_prompts  # noqa: E402
from recall_bench import PROMPTS  # noqa: E402

STAGES = """
import json, sys, time
t0 = time.process_time()
from stele.index import vectors
from stele.index.build import open_index
from stele.project import find
from stele.retrieve import seeds
p = find()
with open_index(p) as index:
    t1 = time.process_time()
    enc = seeds.query_encoder(p)
    t2 = time.process_time()
    q = enc.encode([sys.argv[1]])
    t3 = time.process_time()
    top = vectors.top_k(index.matrix(), q[0], seeds.POOL)
    t4 = time.process_time()
print(json.dumps({"load encoder": (t2 - t1) * 1e3, "encode": (t3 - t2) * 1e3, "top_k": (t4 - t3) * 1e3,
                  "numpy": "numpy" in sys.modules, "tokenizers": "tokenizers" in sys.modules}))
"""


def run(src: Path, repo: Path, prompt: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src), STELE_RESIDENT="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen([sys.executable, "-c", STAGES, prompt], cwd=repo, env=env, stdout=out)
        _, status, usage = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"the stages failed under {src}")
        out.seek(0)
        found = json.loads(out.read())
    found["process CPU"] = (usage.ru_utime + usage.ru_stime) * 1000
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--repo", type=Path, default=HERE / "out" / "rec-10000")
    ap.add_argument("--base", type=Path, help="a src folder to measure against, interleaved")
    args = ap.parse_args()
    import compileall

    trees = {"this tree": SRC} | ({"base": args.base.resolve()} if args.base else {})
    for src in trees.values():
        compileall.compile_dir(str(src / "stele"), quiet=1)
    _, prompts = sort_prompts(args.repo, PROMPTS + PARAPHRASES + record_titles(args.repo))
    print(f"{len(prompts)} prompts consult the embeddings; load average {os.getloadavg()[0]:.1f}")
    rows: dict[str, list[dict]] = {name: [] for name in trees}
    for n in range(args.runs):
        order = list(trees.items()) if n % 2 == 0 else list(trees.items())[::-1]
        for name, src in order:
            rows[name].append(run(src, args.repo, prompts[n % len(prompts)]))
    for name, found in rows.items():
        stages = "  ".join(f"{k} {statistics.median(r[k] for r in found):6.1f} ms"
                           for k in ("load encoder", "encode", "top_k", "process CPU"))
        heavy = sorted({m for r in found for m in ("numpy", "tokenizers") if r[m]})
        print(f"{name:<10} CPU p50: {stages}  imports {heavy or 'neither numpy nor tokenizers'}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
