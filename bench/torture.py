"""The long kill -9 run over the record's write paths (the test suite runs 12 trials of the same).

    .venv/bin/python bench/torture.py [--trials 240] [--seed 7] [--start 0.3] [--spread 1.3]

Each trial starts a real `stele remember`, `edit --add-tag`, `supersede`, `note`, `rebuild` or
`task claim` and SIGKILLs its process group after a random delay of `start` to `spread` times that
operation's measured run time; see tests/torture.py for what is checked after every kill. Prints the
tally as JSON (per operation: trials, killed, and `landed`: killed with the change already on disk,
so inside the operation) and exits 1 when a fact was torn, a temporary file strayed into
docs/memory, an acknowledged write was lost or a lock stuck.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from tests import torture


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=240)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--start", type=float, default=0.3, help="kill delays from this many command run times")
    ap.add_argument("--spread", type=float, default=1.3, help="kill delays up to this many command run times")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        tally = torture.run(Path(tmp) / "repo", args.trials, args.seed, args.spread, args.start)
        out = {**asdict(tally), "claimed": len(tally.claimed), "problems": tally.problems[:20],
               "seconds": round(time.monotonic() - started, 1)}
    print(json.dumps(out, indent=2))
    return 0 if tally.ok() else 1


if __name__ == "__main__":
    raise SystemExit(main())
