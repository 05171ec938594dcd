#!/usr/bin/env python3
"""What the unrecorded-part test (`retrieve/unrecorded.py`) adds to a prompt, timed in-process.

    .venv/bin/python bench/unrecorded_cost.py --repo bench/out/rec-10000 --paths 20000

The test runs only when some search hit passed the floors and none passed by a named identifier or a
clear lead; this times it on every prompt, so the figures are an upper bound. Three states:
- `cold`: the repository's vocabulary is built (`git ls-tree` and analysing every path word), once
  per commit that adds, removes or renames a path;
- `commit`: a new commit that changed no path: `git ls-tree` shows the paths are the same;
- `hook`: a fresh process with the vocabulary cached in `.stele/index/repo-words` and the model's
  vocabulary table not yet loaded: what a prompt hook pays;
- `warm`: both in memory (the resident server, or a second prompt in one process).
`--paths N` first adds N empty tracked files under `src/` (a repository of realistic size: the
generated record tracks none) and commits them; it changes the repository given.
"""
from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_record import WORDS  # noqa: E402
from recall_bench import PROMPTS  # noqa: E402

EXTRA = ["how does the exemplars endpoint reach the bigquery exporter in the grafana chart?",
         "the actionlint step fails on the dependabot workflow, what should I check?",
         "where is the solr schema for ckan deployed and who owns the terraform module?"]


def add_paths(root: Path, n: int) -> None:
    have = int(subprocess.run(["git", "ls-files", "src"], cwd=root, capture_output=True, text=True)
               .stdout.count("\n"))
    if have >= n:
        return
    rng = random.Random(7)
    syllables = ["ka", "lo", "mi", "ter", "vex", "dra", "quo", "zil", "pan", "rho", "sy", "nu"]
    paths = set()
    while len(paths) < n - have:
        name = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        paths.add(f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{name}/{name}_{rng.choice(WORDS)}.py")
    for rel in paths:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.touch()
    subprocess.run(["git", "add", "src"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q",
                    "-m", "bench: tracked paths"], cwd=root, check=True)


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(p * len(s)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=HERE / "out" / "rec-10000")
    ap.add_argument("--paths", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.paths:
        add_paths(args.repo, args.paths)
    from stele.index import repowords
    from stele.index.build import open_index
    from stele.project import Project
    from stele.retrieve import unrecorded as mod
    from stele.retrieve.gate import check

    project = Project(args.repo)
    prompts = [t for t in (check(p, [], 25).text for p in [*PROMPTS, *EXTRA]) if t]
    tracked = subprocess.run(["git", "ls-files"], cwd=args.repo, capture_output=True, text=True).stdout.count("\n")
    times: dict[str, list[float]] = {"cold": [], "commit": [], "hook": [], "warm": []}
    with open_index(project) as index:
        mod.unrecorded(index, prompts[0])  # the index's own first-query costs out of the way
        for _ in range(args.rounds):
            for text in prompts:
                for state in ("cold", "commit", "hook", "warm"):
                    cache = project.index_dir / repowords.CACHE
                    if state == "cold":
                        cache.unlink(missing_ok=True)
                    elif state == "commit":  # the cache as an older commit with the same paths left it
                        repowords._table(project, index.text)
                        cache.write_bytes(b"another commit\n" + cache.read_bytes().partition(b"\n")[2])
                    if state != "warm":
                        repowords._MEMO.clear()
                        mod._VOCABS.clear()
                    t0 = time.perf_counter()
                    if state in ("cold", "commit"):  # what the test costs at worst: the table is needed
                        repowords.known(project, index.text, ["exemplar"])
                    mod.unrecorded(index, text)
                    times[state].append((time.perf_counter() - t0) * 1000)
        words = repowords._table(project, index.text).count(b"\n")
    print(f"{args.repo}: {tracked} tracked files, {words} path terms, {len(prompts)} prompts x {args.rounds}")
    for state, ms in times.items():
        print(f"  {state:<5} p50 {statistics.median(ms):6.2f} ms   p90 {pct(ms, 0.9):6.2f} ms   max {max(ms):6.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
