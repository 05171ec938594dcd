#!/usr/bin/env python3
"""A long session log does not slow recall, and one more line is indexed at once (issue 19), in one run.

    .venv/bin/python bench/wal_scale.py                     # 10k facts, 100,000 WAL lines, 20 rounds

Copies bench/out/rec-FACTS (generated and indexed once if missing) twice: as it is, and with
`--lines` session lines added (10 live logs, realistic notes, prompts and decisions), indexed once.
Then, interleaved round by round in fresh processes: `stele recall --json` on both copies (p50 and
the ratio; target within 20%). Last, the refresh after one line appended to a live log, read as a
hook reads (with a deadline), timed inside one process with the imports already done (target <= 50
ms): it reads only the new line and commits it to the text index; its vector and tantivy's merges are
left to the background builder, which is run (and timed) in the same process right after.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_record import CROCKFORD, sentence  # noqa: E402
from hooks_bench import TIMED_SCAN, child_env  # noqa: E402
from recall_bench import PROMPTS  # noqa: E402

STELE = str(Path(sys.executable).parent / "stele")
REFRESH = """
import json, sys, time
from pathlib import Path
from stele.index import background, build, sources
from stele.project import Project
import stele.index.text, stele.index.vectors, stele.index.encoder, stele.session.wal, stele.session.sessions
import stele.record.model, tantivy, simsimd
p = Project(Path(sys.argv[1]))
started = []
background.start = lambda project: started.append(1) or True  # run here, timed apart from the hook
""" + TIMED_SCAN + """
build.open_index(p).close()
build.finish(p)
times = []
for n in range(int(sys.argv[3])):
    with open(sys.argv[2], "a") as f:
        f.write(json.dumps({"v": 1, "id": "S-01JZZ" + f"{n:020d}", "ts": "2026-11-29T10:00:00Z",
                            "session": "sess-0", "type": "note",
                            "text": f"appended note {n}: the refund worker retries the ledger export"}) + "\\n")
    started.clear()
    scanned.clear()
    t, c = time.perf_counter(), time.process_time()
    with build.open_index(p, deadline=time.monotonic() + 8) as index:  # as a hook reads
        assert index.behind is None
    hook = ((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000, sum(scanned))
    c = time.process_time()
    if started:
        build.finish(p)  # what the builder the hook started does, in its own process
    times.append((*hook, (time.process_time() - c) * 1000))
print(json.dumps(times))
"""


def add_wal(repo: Path, lines: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    wal = repo / ".stele" / "wal"
    per = lines // 10
    for s in range(10):
        with open(wal / f"long-{s}.jsonl", "w", encoding="utf-8") as f:
            for e in range(per):
                eid = "S-01K" + "".join(rng.choice(CROCKFORD) for _ in range(23))
                kind = rng.choice(["note", "decision", "outcome", "prompt", "stage"])
                f.write(json.dumps({"v": 1, "id": eid, "ts": f"2026-11-{1 + s:02d}T{(e // 600) % 24:02d}:"
                                    f"{(e // 10) % 60:02d}:{e % 60:02d}Z", "session": f"long-{s}", "type": kind,
                                    "text": sentence(rng, rng.randint(8, 24))}) + "\n")


def timed(cmd: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    """(wall ms, CPU ms: the child's user + system time, which a shared machine disturbs less)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t) * 1000
    problem = p.stderr.read().decode() if p.stderr else ""
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{cmd[:3]} failed: {problem[:300]}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--appends", type=int, default=15)
    args = ap.parse_args()
    source = HERE / "out" / f"rec-{args.facts}"
    env = child_env()
    if not source.exists():
        subprocess.run([sys.executable, str(HERE / "gen_record.py"), str(args.facts), str(source)], check=True)
        subprocess.run([STELE, "init"], cwd=source, env=env, check=True, capture_output=True)
    tmp = Path(tempfile.mkdtemp(prefix="stele-wal-"))
    try:
        plain, long = tmp / "plain", tmp / "long"
        for dest in (plain, long):
            shutil.copytree(source, dest, symlinks=True)
        add_wal(long, args.lines)
        for dest in (plain, long):
            t = time.perf_counter()
            subprocess.run([STELE, "rebuild"], cwd=dest, env=env, check=True, capture_output=True)
            print(f"indexed {dest.name}: {time.perf_counter() - t:.1f} s")
        print(f"{args.facts} facts, with and without {args.lines:,} session lines; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        walls: dict[str, list[float]] = {"plain": [], "long": []}
        cpus: dict[str, list[float]] = {"plain": [], "long": []}
        for n in range(args.runs):
            for name, dest in (("plain", plain), ("long", long)):
                wall, cpu = timed([STELE, "recall", "--json", PROMPTS[n % len(PROMPTS)]], dest, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
        a, b = statistics.median(walls["plain"]), statistics.median(walls["long"])
        ca, cb = statistics.median(cpus["plain"]), statistics.median(cpus["long"])
        print(f"stele recall wall p50: {a:.0f} ms without, {b:.0f} ms with the long log: {b / a:.2f}x; "
              f"CPU p50 {ca:.0f} / {cb:.0f} ms: {cb / ca:.2f}x (target <= 1.20x)")
        r = subprocess.run([sys.executable, "-c", REFRESH, str(long), str(long / ".stele/wal/long-0.jsonl"),
                            str(args.appends)], cwd=long, env=env, capture_output=True, text=True, check=True)
        times = json.loads(r.stdout)
        wall_t, cpu_t = [w for w, *_ in times], [c for _, c, *_ in times]
        scan_t, later = [s for _, _, s, _ in times], [b for *_, b in times]
        print(f"refresh after one appended line (a hook's read, with its deadline): wall p50 "
              f"{statistics.median(wall_t):.0f} ms, max {max(wall_t):.0f} ms; CPU p50 "
              f"{statistics.median(cpu_t):.0f} ms, of which the freshness scan {statistics.median(scan_t):.0f} ms "
              f"(without it {statistics.median(c - s for c, s in zip(cpu_t, scan_t, strict=True)):.0f} ms), over "
              f"{len(times)} appends to a {args.lines // 10:,}-line log (target <= 50 ms); then the background "
              f"builder (embeds the line, merges): CPU p50 {statistics.median(later):.0f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
