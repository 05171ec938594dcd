"""Team session sync, full size (too slow for the test suite): a real moto_server on 127.0.0.1.

    .venv/bin/python bench/session_sync.py [--lines 10000] [--team-lines 100000] [--recalls 7]

1. Clone A holds LINES session lines in 20 sessions: time `sync --push` (segments, heads, packs),
   then clone B's `sync --pull` of them.
2. Clone A holds TEAM_LINES lines; B pulls them, rebuilds its index (pack vectors reused), and
   `stele recall` runs RECALLS times in fresh processes: the median latency with that many team lines,
   against the median in the same clone before the pull (its own 1,000 lines only), measured in the
   same run so the ratio survives a shared machine. The recall JSON is checked to hold team entries
   with their agent and host.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(HERE / "src"), str(HERE)]


PROMPT = "why does the retry loop in worker 42 back off after error E17?"


def recalls(root: Path, env: dict, n: int) -> tuple[list[float], str]:
    runs = [stele(root, env, "recall", PROMPT, "--format", "json") for _ in range(n)]
    return [t for t, _ in runs], runs[-1][1]


def write_lines(root: Path, total: int, sessions: int, name: str = "bench") -> None:
    """Session logs written the way `wal.append` writes them, without an fsync per line."""
    from stele.ids import session_entry_id
    from stele.session.segment import line

    wal = root / ".stele" / "wal"
    wal.mkdir(parents=True, exist_ok=True)
    per = total // sessions
    for s in range(sessions):
        with open(wal / f"sess-{name}{s:03d}.jsonl", "wb") as f:
            for n in range(per):
                f.write(line({"v": 1, "id": session_entry_id(), "ts": "2026-11-29T10:00:00Z",
                              "session": f"sess-{name}{s:03d}", "agent": name, "type": "note",
                              "text": f"session {s} line {n}: the retry loop in worker {n % 97} backs off "
                                      f"{n % 13} seconds after error E{n % 211}"}))


def stele(root: Path, env: dict, *args: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run([str(HERE / ".venv/bin/stele"), *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=3600)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - t0, done.stdout


def clone_pair(tmp: Path, server, prefix: str, env: dict) -> tuple[Path, Path]:
    from tests.session.test_sync import configure

    origin = tmp / f"origin-{prefix}"
    origin.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=origin, check=True)
    stele(origin, env, "init")
    configure(origin, server.url, f"s3://team-memory/{prefix}")
    subprocess.run(["git", "add", "-A"], cwd=origin, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "i"], cwd=origin,
                   check=True)
    out = []
    for name in ("a", "b"):
        subprocess.run(["git", "clone", "-q", str(origin), str(tmp / f"{prefix}-{name}")], check=True)
        out.append(tmp / f"{prefix}-{name}")
    return out[0], out[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--team-lines", type=int, default=100_000)
    ap.add_argument("--recalls", type=int, default=7)
    args = ap.parse_args()
    from tests.session import s3server

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        server = s3server.start(tmp / "moto.log")
        env = {**os.environ, **server.env(), "AWS_EC2_METADATA_DISABLED": "true", "NO_COLOR": "1"}
        try:
            a, b = clone_pair(tmp, server, "small", env)
            write_lines(a, args.lines, 20)
            push_s, _ = stele(a, env, "session", "sync", "--push")
            pull_s, _ = stele(b, env, "session", "sync", "--pull")
            again_s, _ = stele(a, env, "session", "sync")
            print(f"sync {args.lines} lines: push {push_s:.2f} s, pull {pull_s:.2f} s, "
                  f"no-op sync {again_s:.2f} s")
            a, b = clone_pair(tmp, server, "big", env)
            write_lines(a, args.team_lines, 100)
            write_lines(b, 1_000, 2, name="own")
            stele(b, env, "rebuild")
            before, _ = recalls(b, env, args.recalls)
            build_a, _ = stele(a, env, "rebuild")
            push_s, _ = stele(a, env, "session", "sync", "--push")
            pull_s, _ = stele(b, env, "session", "sync", "--pull")
            build_b, _ = stele(b, env, "rebuild")
            times, out = recalls(b, env, args.recalls)
            team = [e for e in json.loads(out)["entries"] if e.get("host")]
            print(f"{args.team_lines} team lines: A rebuild {build_a:.1f} s, push {push_s:.1f} s, "
                  f"B pull {pull_s:.1f} s, B rebuild (packs) {build_b:.1f} s")
            median, base = statistics.median(times) * 1000, statistics.median(before) * 1000
            print(f"recall with {args.team_lines} team lines: median {median:.0f} ms "
                  f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, {args.recalls} runs); "
                  f"before the pull (1,000 own lines): median {base:.0f} ms; ratio {median / base:.2f}; "
                  f"{len(team)} of {len(json.loads(out)['entries'])} entries are team entries")
            assert all(e["agent"] == "bench" for e in team), out
        finally:
            server.stop()


if __name__ == "__main__":
    main()
