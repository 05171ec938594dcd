#!/usr/bin/env python3
"""A generated battery of prompts no project record answers, run against real records.

    python bench/offtopic_battery.py                    # the demo and every set in eval/sets
    python bench/offtopic_battery.py --work /tmp/bat -v # keep the repositories, list what leaked

The battery is generated, not written against any record: 120 everyday and general-knowledge prompts
(templates x fillers below, fixed), plus, for each record, 12 prompts that share one common word with
it: the record's most frequent title words (5+ letters, not function words), each put in an everyday
sentence about something else ("is 'compactor' a good name for a cat?"). A prompt passes when the
recall injects nothing and raises no risk. The issue's bar: nothing on at least 98%, never a risk.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
STELE = str(Path(sys.executable).parent / "stele")

TEMPLATES = [
    "what is a good recipe for {x} that a beginner can cook on a weeknight?",
    "can you recommend three novels about {x} for a long train journey?",
    "how do I explain {x} to a seven year old in simple words?",
    "write a short poem about {x} in the style of a children's rhyme",
    "what are the health benefits and risks of {x} for adults?",
    "plan a relaxed weekend trip around {x} on a small budget",
    "what is the history of {x} in a few paragraphs?",
    "give me five fun facts about {x} to share at dinner",
    "what should I know before buying {x} for the first time?",
    "how do professional photographers take good pictures of {x}?",
]
FILLERS = ["lemon tart", "the Roman empire", "sea otters", "mountain biking", "jazz piano", "tulip bulbs",
           "volcanoes", "knitting a scarf", "the northern lights", "sourdough bread", "chess openings",
           "hot air balloons"]
SHARED = [
    "is '{w}' a good name for a cat or a dog?",
    "what does the word '{w}' mean in everyday English, and where does it come from?",
    "write a two-line birthday card that mentions a {w}",
]
STOP = {"about", "after", "before", "every", "their", "there", "which", "while", "where", "should", "would",
        "could", "these", "those", "other", "never", "always", "being", "through", "under", "because"}


def battery() -> list[str]:
    return [t.format(x=f) for t in TEMPLATES for f in FILLERS]


def shared_word_prompts(memory: Path, n_words: int = 4) -> list[str]:
    words: Counter[str] = Counter()
    for path in memory.rglob("*.md"):
        m = re.search(r"^title:\s*(.+)$", path.read_text(encoding="utf-8", errors="replace"), re.M)
        if m:
            words.update(w.lower() for w in re.findall(r"[A-Za-z]{5,}", m.group(1)) if w.lower() not in STOP)
    common = [w for w, _ in words.most_common(n_words)]
    return [t.format(w=w) for w in common for t in SHARED]


def run(cmd: list[str], cwd: Path) -> None:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{' '.join(cmd)} failed in {cwd}:\n{r.stdout}\n{r.stderr}")


def build(work: Path) -> dict[str, Path]:
    sys.path.insert(0, str(REPO / "eval"))
    from run_sets import SETS, lay_out

    roots = {}
    demo = work / "demo"
    if not (demo / ".git").is_dir():
        shutil.rmtree(demo, ignore_errors=True)
        run([STELE, "demo", "--keep", str(demo)], REPO)
    roots["demo"] = demo
    for src in sorted(p for p in SETS.iterdir() if (p / "record").is_dir()):
        root = work / src.name
        if not (root / ".git").is_dir():
            shutil.rmtree(root, ignore_errors=True)
            lay_out(src, root, STELE)
        roots[src.name] = root
    return roots


def measure(root: Path, prompts: list[str], verbose: bool) -> tuple[int, int, int]:
    """(prompts that injected something, prompts that raised a risk, prompts)."""
    os.chdir(root)
    from stele.project import Project
    from stele.retrieve.recall import recall

    project = Project(root)
    injected = risky = 0
    for prompt in prompts:
        r = recall(project, prompt)
        if r.entries or r.risks:
            injected += 1
            risky += bool(r.risks)
            if verbose:
                print(f"    leaked: {prompt!r} -> {[x.id for x in r.risks] + [x.id for x in r.entries][:5]}")
    return injected, risky, len(prompts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, help="where the repositories are built (default: a temp folder)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="stele-battery-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("STELE_TODAY", "2026-12-01")
    os.environ["STELE_RESIDENT"] = "0"
    total = [0, 0, 0]
    for name, root in build(work).items():
        prompts = battery() + shared_word_prompts(root / "docs" / "memory")
        injected, risky, n = measure(root, prompts, args.verbose)
        print(f"{name}: {n - injected}/{n} inject nothing ({100 * (n - injected) / n:.1f}%), {risky} raise a risk")
        total = [total[0] + injected, total[1] + risky, total[2] + n]
    injected, risky, n = total
    print(f"all: {n - injected}/{n} inject nothing ({100 * (n - injected) / n:.1f}%), {risky} raise a risk")
    return 0


if __name__ == "__main__":
    sys.exit(main())
