#!/usr/bin/env python3
"""The session start's table of contents: its size and what it costs, on a record of any size.

    python bench/gen_record.py 10000 /tmp/rec-10k && (cd /tmp/rec-10k && stele rebuild)
    python bench/session_contents.py /tmp/rec-10k --runs 10

Prints the table's size in characters, the whole session-start answer's size, and the median wall time
of `stele hook session-start` in its own process with and without the table (`--runs` each)."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

STELE = str(Path(sys.executable).parent / "stele")


def session_start(root: Path, n: int, env: dict[str, str]) -> tuple[str, float]:
    payload = {"session_id": f"bench-{n}", "hook_event_name": "SessionStart", "source": "startup", "cwd": str(root)}
    t0 = time.perf_counter()
    out = subprocess.run([STELE, "hook", "session-start", "--harness", "claude"], input=json.dumps(payload),
                         capture_output=True, text=True, cwd=root, env=env, check=True).stdout
    return json.loads(out)["hookSpecificOutput"]["additionalContext"], time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    os.chdir(args.root)
    from stele.index.build import open_index
    from stele.index.contents import table
    from stele.project import Project

    with open_index(Project(args.root)) as index:
        t0 = time.perf_counter()
        toc = table(index.catalog)
        built = time.perf_counter() - t0
    env = {**os.environ, "STELE_RESIDENT": "0"}
    text, _ = session_start(args.root, 0, env)
    times = [session_start(args.root, n, env)[1] for n in range(1, args.runs + 1)]
    print(f"table of contents: {len(toc)} characters, built in {1000 * built:.1f} ms in process")
    print(f"session-start answer: {len(text)} characters; the table is {'in it' if toc and toc in text else 'not in it'}")
    print(f"stele hook session-start, own process: median {1000 * statistics.median(times):.0f} ms over {args.runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
