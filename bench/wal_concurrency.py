"""The WAL acceptance numbers, full size (too slow for the test suite: every line is fsynced).

    .venv/bin/python bench/wal_concurrency.py [--writers 8] [--lines 500] [--kills 20]

1. WRITERS processes append LINES entries each to one session at once: every line must be there,
   valid JSON, none torn, none interleaved.
2. KILLS rounds: a writer is killed with SIGKILL after its first acknowledged line, either after a
   random pause or (every other round) the moment its next, 8 MiB line starts to land in the file, so
   the kill cuts a write. Each time the log must read with at most one torn line and keep every
   acknowledged line; the next writer starts its line after the torn one.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
WRITER = HERE / "tests" / "walwriter.py"


def spawn(root: Path, session: str, count: int, size: int, tag: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(HERE / "src"))
    return subprocess.Popen([sys.executable, str(WRITER), str(root), session, str(count), str(size), tag],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


def concurrent(root: Path, writers: int, lines: int) -> dict:
    from stele.session import wal

    procs = [spawn(root, "bench", lines, 200, str(i)) for i in range(writers)]
    t0 = time.perf_counter()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    acked = set()
    for p in procs:
        out, _ = p.communicate()
        assert p.returncode == 0
        acked.update(out.split())
    elapsed = time.perf_counter() - t0
    path = root / ".stele" / "wal" / "bench.jsonl"
    raw = path.read_bytes().split(b"\n")
    assert raw[-1] == b"", "the log must end with a newline"
    valid = [json.loads(line) for line in raw[:-1]]  # raises on any torn or interleaved line
    report = wal.ReadReport()
    read = {e.id for e in wal.read_file(path, report)}
    per_writer = {}
    for d in valid:
        w = d["text"].split()[0]
        per_writer.setdefault(w, []).append(int(d["text"].split()[2]))
    in_order = all(v == sorted(v) for v in per_writer.values())
    assert len(valid) == writers * lines and read == acked and not report.skipped and in_order
    return {"writers": writers, "lines_each": lines, "valid_lines": len(valid), "torn": len(report.skipped),
            "acknowledged_missing": len(acked - read), "each_writer_in_order": in_order,
            "seconds": round(elapsed, 2), "lines_per_second": round(len(valid) / elapsed)}


def kills(root: Path, rounds: int, seed: int = 7) -> dict:
    """Half the rounds kill at a random moment; the other half watch the file and kill the moment a
    large line starts to land, which is what cuts a line in practice."""
    from stele.session import wal

    rng = random.Random(seed)
    path = root / ".stele" / "wal" / "killed.jsonl"
    acked: set[str] = set()
    worst_torn, cut_rounds = 0, 0
    for r in range(rounds):
        mid_write = r % 2 == 1
        size = 8 * 1024 * 1024 if mid_write else rng.choice((200, 64 * 1024))
        p = spawn(root, "killed", 0, size, f"k{r}")
        p.stdin.write("go\n")
        p.stdin.flush()
        acked.add(p.stdout.readline().strip())
        if mid_write:
            before = path.stat().st_size
            while path.stat().st_size == before:
                pass
        else:
            time.sleep(rng.uniform(0, 0.05))
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        p.stdout.close()
        report = wal.ReadReport()
        ids = {e.id for e in wal.read_file(path, report)}
        torn = [s for s in report.skipped if "torn last line" in s]
        worst_torn = max(worst_torn, len(torn))
        cut_rounds += bool(torn)
        assert len(torn) <= 1 and acked <= ids, (report.skipped, len(acked - ids))
    report = wal.ReadReport()
    final = {e.id for e in wal.read_file(path, report)}
    return {"rounds": rounds, "rounds_that_cut_a_line": cut_rounds, "max_torn_per_read": worst_torn,
            "acknowledged": len(acked), "acknowledged_missing": len(acked - final),
            "lines_readable": len(final),
            "lines_skipped_in_the_end": len(report.skipped)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--lines", type=int, default=500)
    ap.add_argument("--kills", type=int, default=20)
    args = ap.parse_args()
    sys.path.insert(0, str(HERE / "src"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        print(json.dumps({"concurrent": concurrent(root, args.writers, args.lines),
                          "kill9": kills(root, args.kills)}, indent=2))


if __name__ == "__main__":
    main()
