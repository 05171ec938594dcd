#!/usr/bin/env python3
"""Calibrate the relevance floors: how well the best hit matches prompts on and off a record.

    python bench/floors.py                       # shop, the demo and this repository's own record
    python bench/floors.py --work /tmp/floors    # keep (and reuse) the three repositories there

For every prompt, the best full-text coverage among the search hits (the share of the prompt's
content-term weight a hit holds, `retrieve.seeds.cover`) and the best cosine of the embedding ranking
(the bundled model), whether or not the recall would have consulted the embeddings. Prompts are
labelled `on` (the record has something on them) or `off` (it has nothing). The floors
(`retrieval.text_floor`, `retrieval.vector_floor`) belong where the two distributions part; the last
table counts, for a grid of floors, the `on` prompts with a passing hit and the `off` prompts with one.

The sets:
- shop: `../shared/eval/shop` (its queries.yaml: every case with a prompt; `offtopic` ones are off).
- demo: the bundled example (`stele demo`), its prompts.txt (on) and OFF_TOPIC below (off).
- self: this repository's docs/memory, SELF_ON below (on) and OFF_TOPIC (off).
OFF_TOPIC is run against every record: a prompt unrelated to the project gets nothing on any record.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHOP = next((p / "shared" / "eval" / "shop" for p in (REPO.parent, REPO.parent.parent)  # main/ or wt/NAME/
             if (p / "shared" / "eval" / "shop").is_dir()), REPO.parent / "shared" / "eval" / "shop")
STELE = [str(Path(sys.executable).parent / "stele")]

OFF_TOPIC = [
    "what is the capital of Australia and why is it not Sydney?",
    "write a limerick about a cat who learns to play the piano",
    "how many tablespoons are in a quarter cup of butter?",
    "summarize the plot of Pride and Prejudice in three sentences",
    "what is the time complexity of quicksort in the worst case?",
    "give me a weekly running plan to train for a 10k race",
    "how do I convert a list of tuples into a dictionary in Python?",
    "what are good names for a golden retriever puppy?",
    "explain how photosynthesis turns sunlight into chemical energy",
    "recommend three science fiction novels for a long flight",
    "how do I change the default shell to zsh on macOS?",
    "what is the difference between TCP and UDP for video streaming?",
    "solve for x: three x plus seven equals twenty two",
    "what should I pack for a week of hiking in the Alps in September?",
    "translate 'where is the train station' into German",
    "how do I center a div horizontally and vertically with flexbox?",
    "why is the sky blue during the day and red at sunset?",
    "write a SQL query that finds the second highest salary in an employees table",
    "what year did the Berlin wall fall and what led to it?",
    "compose a polite email declining a wedding invitation",
]
SELF_ON = [
    "why does the prompt hook avoid importing typer and rich?",
    "where do we put the stele block in an existing git pre-commit hook script?",
    "what happens to the code index when I run a full rebuild?",
    "can a process killed with SIGKILL leave half a line in the WAL?",
    "why is there no CORS header on stele serve responses?",
    "my CliRunner test sees empty output, what am I doing wrong?",
    "how does a task claim decide between two agents and when is the snapshot stored?",
    "why do redaction regexes need the token body and not only the prefix?",
    "git rev-parse exits 128 when the branch has no upstream",
    "editing a fact should only rewrite the frontmatter keys that changed",
    "print statements are corrupting the MCP stdio stream",
    "does every recall stat all the fact files, and does that get slow on a big record?",
    "a symbol anchor in a Go file was reported as gone although the function still exists",
    "when are the embeddings consulted during search fusion?",
]


def run(cmd: list[str], cwd: Path) -> None:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{' '.join(cmd)} failed in {cwd}:\n{r.stdout}\n{r.stderr}")


def git_repo(root: Path) -> None:
    env = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    run(["git", "init", "-q"], root)
    run(["git", "add", "-A"], root)
    run(["git", *env, "commit", "-q", "-m", "record"], root)


def build_shop(dest: Path) -> None:
    shutil.copytree(SHOP / "code", dest, dirs_exist_ok=True)
    shutil.copytree(SHOP / "record", dest / "docs" / "memory")
    (dest / ".stele" / "wal").mkdir(parents=True)
    shutil.copy(SHOP / "session.jsonl", dest / ".stele" / "wal" / "eval.jsonl")
    git_repo(dest)


def build_self(dest: Path) -> None:
    shutil.copytree(REPO / "docs" / "memory", dest / "docs" / "memory")
    git_repo(dest)


def build_demo(dest: Path) -> None:
    run(STELE + ["demo", "--keep", str(dest)], REPO)


def ensure(work: Path, name: str, build) -> Path:
    root = work / name
    if not (root / ".stele").is_dir() or not (root / ".git").is_dir():
        shutil.rmtree(root, ignore_errors=True)
        if name != "demo":
            root.mkdir(parents=True)
        build(root)
        run(STELE + ["init"], root)
    run(STELE + ["rebuild"], root)
    return root


def prompts(name: str) -> list[tuple[str, str]]:
    """(label, prompt) of one set."""
    if name == "shop":
        import yaml

        cases = yaml.safe_load((SHOP / "queries.yaml").read_text())["queries"]
        return [("off" if c["type"] == "offtopic" else "on", c["prompt"]) for c in cases
                if len(c.get("prompt") or "") >= 25 and c["type"] != "identifier"] + [("off", p) for p in OFF_TOPIC]
    if name == "demo":
        lines = (REPO / "src/stele/examples/harbor/prompts.txt").read_text().splitlines()
        return [("on", p) for p in lines if p.strip() and not p.startswith("#")] + [("off", p) for p in OFF_TOPIC]
    return [("on", p) for p in SELF_ON] + [("off", p) for p in OFF_TOPIC]


def measure(root: Path, pairs: list[tuple[str, str]]) -> list[tuple[str, str, float, float]]:
    """(label, prompt, best coverage, best cosine) for every prompt, over the items a recall may use."""
    os.chdir(root)
    from stele.delivery import today, withheld
    from stele.index.build import open_index
    from stele.project import find
    from stele.retrieve.gate import check
    from stele.retrieve.seeds import Coverage, vector_hits
    from stele.retrieve.settings import Settings

    project = find()
    s = Settings.from_config(project.config)
    out = []
    on = today()
    with open_index(project) as index:
        for label, prompt in pairs:
            text = check(prompt, [], s.min_prompt_chars).text
            boosts = {"title": s.title_boost, "body": 1.0, "tags": 1.0, "anchors": 0.5}
            ids = [i for i, _ in index.text.search(text, 100, boosts)]
            vec, _ = vector_hits(index, text, 100)
            nodes = index.catalog.nodes(ids + [i for i, _ in vec])
            usable = {i for i, n in nodes.items() if withheld(n, on) is None}
            best_cov = Coverage(index.text, text).best([i for i in ids if i in usable][:20])
            best_cos = max((c for i, c in vec if i in usable), default=0.0)
            out.append((label, prompt, best_cov, best_cos))
    return out


def quantiles(values: list[float]) -> str:
    if not values:
        return "-"
    v = sorted(values)
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
    return f"min {v[0]:.2f}  q1 {q[0]:.2f}  median {q[1]:.2f}  q3 {q[2]:.2f}  max {v[-1]:.2f}  (n={len(v)})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, help="where the repositories are built (default: a temp folder)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every prompt's two figures")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="stele-floors-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("STELE_TODAY", "2026-11-29")
    rows: dict[str, list[tuple[str, str, float, float]]] = {}
    for name, build in (("shop", build_shop), ("demo", build_demo), ("self", build_self)):
        rows[name] = measure(ensure(work, name, build), prompts(name))
    for name, found in rows.items():
        print(f"\n{name}")
        for label in ("on", "off"):
            mine = [r for r in found if r[0] == label]
            print(f"  {label:<3} coverage {quantiles([r[2] for r in mine])}")
            print(f"      cosine   {quantiles([r[3] for r in mine])}")
        if args.verbose:
            for label, prompt, cov, cos in sorted(found, key=lambda r: (r[0], -r[2])):
                print(f"    {label:<3} cov {cov:.2f} cos {cos:.2f}  {prompt[:80]}")
    every = [r for found in rows.values() for r in found]
    n_on = sum(r[0] == "on" for r in every)
    n_off = len(every) - n_on
    print(f"\nprompts whose best hit reaches a floor, all sets together (on: want {n_on}/{n_on}; off: want 0/{n_off})")
    for name, key, grid in (("coverage", 2, (0.25, 0.3, 0.35, 0.4, 0.45, 0.5)),
                            ("cosine", 3, (0.5, 0.55, 0.58, 0.6, 0.62, 0.65))):
        cells = []
        for floor in grid:
            on = sum(r[0] == "on" and r[key] >= floor for r in every)
            off = sum(r[0] == "off" and r[key] >= floor for r in every)
            cells.append(f"{floor:.2f}: on {on} off {off}")
        print(f"  {name:<9} " + "   ".join(cells))
    from stele.retrieve.settings import Settings

    d = Settings.defaults()
    on = sum(r[0] == "on" and (r[2] >= d.text_floor or r[3] >= d.vector_floor) for r in every)
    off = sum(r[0] == "off" and (r[2] >= d.text_floor or r[3] >= d.vector_floor) for r in every)
    print(f"  the defaults (coverage {d.text_floor:g} or cosine {d.vector_floor:g}): on {on}/{n_on}, off {off}/{n_off}")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
