#!/usr/bin/env python3
"""The prompt hook against its floor (issue 19), in one run: every figure is a ratio to a floor measured
in the same run, interleaved with the hook calls, because the machine may be shared and loaded.

    .venv/bin/python bench/hook_floor.py                    # 10k facts, 30 rounds
    .venv/bin/python bench/hook_floor.py --facts 50000 --runs 20

The floor is what no Stele hook can beat: a fresh interpreter that imports tantivy, opens the record's
text index, runs one BM25 query and reads ten stored documents. Each round runs, each in a fresh
process (what a harness pays) with a new session id: the floor, `stele hook prompt --harness claude`
with a prompt full text answers, the same with a prompt that needs the embeddings (a paraphrase: the
best BM25 hit holds less than `retrieval.strong_match` of what its words could score, so the vectors are
consulted), `session-start` and `pre-edit`. Prompts are sorted into the two kinds in-process before
timing, by watching whether recall consults the vectors. Printed: wall p50 / p90, CPU p50 (user +
system, which load disturbs less) and the ratio of the p50 to the floor's, and the peak RSS of each
event. The record is bench/out/rec-FACTS (generated and indexed once, reused).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hooks_bench import anchored_files, child_env  # noqa: E402
from recall_bench import FLOOR, PROMPTS  # noqa: E402

STELE = str(Path(sys.executable).parent / "stele")
# Said differently from the record's words: most of these need the embeddings.
GAP_MS = 100  # below any model's turn; the resident server's warm spare is ready ~60 ms after a call at 10k
PARAPHRASES = [
    "our clients got charged two times for one purchase when the shop was busy",
    "what happens to the things a shopper put aside but never paid for?",
    "how do we stop robots from hammering the sign in page with stolen credentials",
    "which machine takes over when the in-memory store goes down at night",
    "the money owed to sellers does not add up at the end of the month",
    "people complain that messages about their parcel arrive far too late",
    "is there a written procedure for when the primary store dies",
    "why does the system wait longer and longer between attempts to reach a partner",
]


def timed(cmd: list[str], cwd: Path, env: dict, stdin: str = "") -> tuple[float, float, int, str]:
    """(wall ms, CPU ms, peak RSS KiB, stdout) of one child process (os.wait4 gives its own usage).
    A call the resident server answered adds its forked child's CPU and counts the larger of the two
    peak RSS figures (the server reports them through STELE_RESIDENT_USAGE)."""
    import tempfile

    usage = env.get("STELE_RESIDENT_USAGE")
    if usage:
        Path(usage).unlink(missing_ok=True)

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.TemporaryFile("w+") as inp:
        inp.write(stdin)
        inp.seek(0)
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=inp, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        wall = (time.perf_counter() - t0) * 1000
        out.seek(0)
        err.seek(0)
        text, problem = out.read(), err.read()
    if os.waitstatus_to_exitcode(status) != 0 or problem.strip():
        if "ran out of its time budget" not in problem:
            raise SystemExit(f"{' '.join(cmd[:3])} failed: {problem.strip()[:500]}")
        print(f"{' '.join(cmd[2:4])}: over the hook budget after {wall:.0f} ms wall, {(usage.ru_utime + usage.ru_stime) * 1000:.0f} ms CPU (counted as it is)")
    cpu, rss = (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss
    if env.get("STELE_RESIDENT_USAGE") and Path(env["STELE_RESIDENT_USAGE"]).exists():
        _code, utime, stime, maxrss = Path(env["STELE_RESIDENT_USAGE"]).read_text().split()[:4]
        cpu, rss = cpu + (float(utime) + float(stime)) * 1000, max(rss, int(maxrss))
    return wall, cpu, rss, text


def resident_env(repo: Path, env: dict) -> dict:
    """The environment of calls the resident server answers, once it is up (started here the way a
    first hook starts it, and waited for)."""
    import tempfile

    root = str(repo.resolve())
    env = {**env, "STELE_RESIDENT": "1"}  # off by default (docs/hooks.md)
    subprocess.Popen([STELE, "resident-serve", root], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while '"running": true' not in subprocess.run([STELE, "resident", "status", "--json"], cwd=repo, env=env,
                                                  capture_output=True, text=True).stdout:
        if time.monotonic() > deadline:
            raise SystemExit("the resident server did not come up (see .stele/run/resident.log)")
        time.sleep(0.2)
    usage = Path(tempfile.mkdtemp()) / "usage"
    return {**env, "STELE_RESIDENT": "1", "STELE_RESIDENT_USAGE": str(usage)}


def record_titles(repo: Path, n: int = 40) -> list[str]:
    """Titles of `n` facts of the record, chosen with a fixed seed: since the relevance floors (issue
    13) the generated record's word salad answers none of the hand-written prompts above, so the
    record's own titles are the prompts it answers (short ones by full text, long ones, whose BM25 best
    match holds less of what they could score, through the embeddings)."""
    import random
    import re

    files = sorted(str(p) for p in (repo / "docs/memory").rglob("*.md") if p.name != "README.md")
    out = []
    for f in random.Random(19).sample(files, min(n, len(files))):
        m = re.search(r'^title: "(.*)"$', Path(f).read_text(encoding="utf-8"), re.M)
        if m:
            out.append(m.group(1))
    return out


def sort_prompts(repo: Path, prompts: list[str]) -> tuple[list[str], list[str]]:
    """(prompts full text answers, prompts that consult the embeddings), by running recall in a child
    that records whether the vectors were searched."""
    code = """
import json, sys
from stele.project import find
from stele.retrieve import seeds
from stele.retrieve.recall import recall
used = []
real = seeds.vector_hits
seeds.vector_hits = lambda *a, **k: (used.append(1), real(*a, **k))[1]
out = []
for p in json.loads(sys.stdin.read()):
    used.clear()
    r = recall(find(), p)
    out.append([p, bool(used), r.mode, len(r.entries)])
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(prompts), cwd=repo,
                          capture_output=True, text=True, check=True)
    fts, emb = [], []
    for prompt, vectors, _mode, n in json.loads(done.stdout):
        if n:  # a prompt that finds nothing is not what this measures
            (emb if vectors else fts).append(prompt)
    return fts, emb


def payload(repo: Path, event: str, n: int, prompt: str, files: list[str]) -> str:
    # what Claude Code sends; its session id is a UUID, which skips the redactor
    base = {"session_id": str(uuid.uuid4()), "transcript_path": "/tmp/t.jsonl", "cwd": str(repo),
            "permission_mode": "default"}
    if event == "prompt":
        base.update(hook_event_name="UserPromptSubmit", prompt=prompt)
    elif event == "session-start":
        base.update(hook_event_name="SessionStart", source="startup")
    else:
        base.update(hook_event_name="PreToolUse", tool_name="Edit", tool_input={
            "file_path": str(repo / files[n % len(files)]), "old_string": "a", "new_string": "b"})
    return json.dumps(base)


def summary(rows: list[tuple[float, float, int]], floor_p50: float | None) -> str:
    walls = sorted(r[0] for r in rows)
    p50 = statistics.median(walls)
    ratio = f"  {p50 / floor_p50:4.2f}x floor" if floor_p50 else ""
    return (f"wall p50 {p50:6.1f} ms  p90 {walls[int(0.9 * (len(walls) - 1))]:6.1f}  "
            f"cpu p50 {statistics.median(r[1] for r in rows):6.1f} ms  "
            f"peak RSS {max(r[2] for r in rows) / 1024:5.1f} MiB{ratio}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--repo", type=Path, help="default: bench/out/rec-FACTS (generated when missing)")
    ap.add_argument("--mode", choices=("both", "resident", "own process"), default="both",
                    help="hooks answered by the resident server, each in its own process, or both")
    ap.add_argument("--gap-ms", type=int, default=GAP_MS,
                    help=f"pause before each call (default {GAP_MS}: less than a model's turn between two hooks of "
                         "an agent session); 0 runs them back to back, and no warm spare is ready in time")
    args = ap.parse_args()
    repo = args.repo or HERE / "out" / f"rec-{args.facts}"
    env = child_env()
    if not repo.exists():
        subprocess.run([sys.executable, str(HERE / "gen_record.py"), str(args.facts), str(repo)], check=True)
        subprocess.run([STELE, "init"], cwd=repo, env=env, check=True, capture_output=True)
        # in the foreground: a first read would hand the embedding to a detached builder still at
        # work while the rounds are timed
        subprocess.run([STELE, "rebuild"], cwd=repo, env=env, check=True, capture_output=True)
    # build or refresh the whole index (vectors and merges too) in the foreground, outside the timings: a
    # read would hand a whole build (an index of an older schema) to a detached builder still at work
    subprocess.run([sys.executable, "-c", "from stele.index import build; from stele.project import find; "
                    "build.finish(find())"], cwd=repo, env=env, check=True, capture_output=True)
    fts, emb = sort_prompts(repo, PROMPTS + PARAPHRASES + record_titles(repo))
    files = anchored_files(repo)
    print(f"record: {repo} ({args.facts} facts), {len(fts)} full-text prompts, {len(emb)} embedding prompts; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if not fts and not emb:
        raise SystemExit("no prompt answers anything here")
    if not fts:  # since the callout rule (DEC-4RD4) a coverage seed asks the embeddings before it warns
        print("no prompt here is answered by full text alone: that case is left out")
    if not emb:
        print("no prompt here consults the embeddings: that case is left out")
    index = str(repo / ".stele/index/text")
    modes = {"resident": resident_env(repo, env), "own process": {**env, "STELE_RESIDENT": "0"}}
    if args.mode != "both":
        modes = {args.mode: modes[args.mode]}
    print("modes: " + ", ".join(modes) + " (the resident server forks a child per call: its CPU and RSS are counted)")
    events = (("prompt (full text)", "prompt"), ("prompt (embeddings)", "prompt"),
              ("session-start", "session-start"), ("pre-edit", "pre-edit"))
    cases: dict[str, list] = {"floor": []}
    for n in range(args.runs):
        f, e = (fts[n % len(fts)] if fts else ""), (emb[n % len(emb)] if emb else "")
        time.sleep(args.gap_ms / 1000)
        cases["floor"].append(timed([sys.executable, "-c", FLOOR, index, f or e], repo, env)[:3])
        hook = [STELE, "hook"]
        for mode, mode_env in modes.items():
            for name, event in events:
                if (name == "prompt (embeddings)" and not emb) or (name == "prompt (full text)" and not fts):
                    continue
                prompt = f if name == "prompt (full text)" else e
                time.sleep(args.gap_ms / 1000)
                cases.setdefault(f"{name}, {mode}", []).append(timed(
                    [*hook, event, "--harness", "claude"], repo, mode_env, payload(repo, event, n, prompt, files))[:3])
    if "resident" in modes:
        status = json.loads(subprocess.run([STELE, "resident", "status", "--json"], cwd=repo, env=modes["resident"],
                                           capture_output=True, text=True).stdout or "{}")
        print(f"resident server: {status.get('calls')} calls, {status.get('spared')} answered by a warm spare, "
              f"{status.get('refreshes')} refreshes")
        subprocess.run([STELE, "resident", "stop"], cwd=repo, env=env, capture_output=True)
    cases = {k: v for k, v in cases.items() if v}
    floor_p50 = statistics.median(r[0] for r in cases["floor"])
    for name, rows in cases.items():
        print(f"{name:<35} {summary(rows, None if name == 'floor' else floor_p50)}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / f"hook_floor-{args.facts}.json").write_text(json.dumps(
        {"facts": args.facts, "runs": args.runs, "load_avg_1m": round(os.getloadavg()[0], 1),
         "cases": {k: {"wall_p50_ms": round(statistics.median(r[0] for r in v), 1),
                       "cpu_p50_ms": round(statistics.median(r[1] for r in v), 1),
                       "peak_rss_kib": max(r[2] for r in v)} for k, v in cases.items()}}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
