"""gitpython's object model against plain `git`, on the three jobs issue 12 offered it.

The jobs, all off the hook path:
1. the record at a revision (`stele review BASE..HEAD`, `doctor --base`): every fact file of a commit;
2. rename detection over history (anchor repair in `doctor --fix`);
3. commit trailers over a range (the co-change gate's `Stele-Ack:`).

Each job runs both ways in fresh processes, so the import of gitpython (and of gitdb, smmap) is paid
the way a command pays it. Both ways must give the same answer; the script checks that before it
reports a figure.

    .venv/bin/python bench/gitpython_vs_git.py --facts 10000 --commits 300 --runs 5

Needs gitpython installed in the venv (`pip install gitpython`): Stele itself no longer depends on it.
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

HERE = Path(__file__).resolve().parent
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


# --- the jobs, each written both ways; run in a child process as `python THIS job way root arg` ------

def record_plain(root: Path, rev: str) -> dict:
    from stele import gitrepo

    ids = [sha for p, sha in gitrepo.tree_blobs(root, rev, "docs/memory").items() if p.endswith(".md")]
    blobs = gitrepo.read_blobs(root, ids)  # what `record.load.load_at` does
    return {"files": len(blobs), "bytes": sum(len(b or b"") for b in blobs.values())}


def record_gitpython(root: Path, rev: str) -> dict:
    import git

    tree = git.Repo(root).commit(rev).tree / "docs" / "memory"
    files = sizes = 0
    for item in tree.traverse():
        if item.type == "blob" and item.path.endswith(".md"):
            files += 1
            sizes += len(item.data_stream.read())
    return {"files": files, "bytes": sizes}


def renames_plain(root: Path, _: str) -> dict:
    from stele import gitrepo

    found = gitrepo.renames(root)
    return {"renames": len(found), "sample": sorted(found)[:3]}


def renames_gitpython(root: Path, _: str) -> dict:
    import git

    repo = git.Repo(root)
    found: dict[str, str] = {}
    for commit in repo.iter_commits("HEAD"):
        if not commit.parents:
            continue
        for d in commit.parents[0].diff(commit, M=True):
            if d.renamed_file:
                found.setdefault(d.rename_from, d.rename_to)
    return {"renames": len(found), "sample": sorted(found)[:3]}


def trailers_plain(root: Path, rev_range: str) -> dict:
    from stele import gitrepo

    found = gitrepo.trailers(root, rev_range, "Stele-Ack")
    return {"trailers": len(found), "sample": sorted(v for _, v in found)[:3]}


def trailers_gitpython(root: Path, rev_range: str) -> dict:
    import git

    values = []
    for commit in git.Repo(root).iter_commits(rev_range):
        values += [v for k, v in commit.trailers_list if k == "Stele-Ack"]
    return {"trailers": len(values), "sample": sorted(values)[:3]}


JOBS = {"record": (record_plain, record_gitpython), "renames": (renames_plain, renames_gitpython),
        "trailers": (trailers_plain, trailers_gitpython)}


def child(job: str, way: str, root: str, arg: str) -> None:
    fn = JOBS[job][0 if way == "plain" else 1]
    print(json.dumps(fn(Path(root), arg)))


# --- the repository and the timing ----------------------------------------------------------------

def build(base: Path, facts: int, commits: int) -> tuple[Path, str]:
    """A repository holding a generated record, then `commits` commits on top: every tenth renames a
    source file, every third carries a `Stele-Ack:` trailer. Returns the root and the record's commit."""
    root = base / "repo"
    subprocess.run([sys.executable, str(HERE / "gen_record.py"), str(facts), str(root)], check=True,
                   capture_output=True)
    record_rev = git(root, "rev-parse", "HEAD").strip()
    src = root / "src"
    src.mkdir(exist_ok=True)
    for n in range(commits):
        name = src / f"mod{n % 40}.py"
        if n % 10 == 9 and name.exists():
            git(root, "mv", str(name.relative_to(root)), f"src/moved{n}.py")
        else:
            name.write_text("".join(f"def f{n}_{i}():\n    return {i}\n" for i in range(20)), encoding="utf-8")
            git(root, "add", "-A")
        message = f"change {n}" + (f"\n\nStele-Ack: RISK-{n:04d} still holds after change {n}" if n % 3 == 0 else "")
        git(root, "commit", "-q", "--allow-empty", "-m", message)
    return root, record_rev


def timed(job: str, way: str, root: Path, arg: str) -> tuple[float, dict]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--child", job, way, str(root), arg], check=True,
                         capture_output=True, text=True).stdout
    return time.perf_counter() - start, json.loads(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--child", nargs=4, metavar=("JOB", "WAY", "ROOT", "ARG"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    with tempfile.TemporaryDirectory(prefix="stele-gitpython-", ignore_cleanup_errors=True) as tmp:
        root, record_rev = build(Path(tmp), args.facts, args.commits)
        job_args = {"record": record_rev, "renames": "", "trailers": f"{record_rev}..HEAD"}
        rows = []
        for job, arg in job_args.items():
            times: dict[str, list[float]] = {"plain": [], "gitpython": []}
            answers = {}
            for _ in range(args.runs):
                for way in ("plain", "gitpython"):  # interleaved: load on a shared machine hits both
                    seconds, answers[way] = timed(job, way, root, arg)
                    times[way].append(seconds)
            same = answers["plain"] == answers["gitpython"]
            plain, gp = statistics.median(times["plain"]), statistics.median(times["gitpython"])
            rows.append({"job": job, "plain_ms": round(plain * 1000), "gitpython_ms": round(gp * 1000),
                         "ratio": round(gp / plain, 1), "same_answer": same, "answer": answers["plain"]})
        imports = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import git"], check=True)
            imports.append(time.perf_counter() - start)
        floor = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor.append(time.perf_counter() - start)
    print(f"{args.facts} facts, {args.commits} commits on top; medians of {args.runs} fresh processes each")
    print(f"{'job':<10}{'plain git':>12}{'gitpython':>12}{'ratio':>8}  same answer")
    for r in rows:
        print(f"{r['job']:<10}{r['plain_ms']:>9} ms{r['gitpython_ms']:>9} ms{r['ratio']:>7}x  {r['same_answer']}")
    print(f"`import git` in a fresh process: {round((statistics.median(imports) - statistics.median(floor)) * 1000)}"
          " ms over the bare interpreter")
    return 0 if all(r["same_answer"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
