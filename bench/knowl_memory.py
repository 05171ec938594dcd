#!/usr/bin/env python3
"""Run Knowl's public coding-memory accuracy benchmark (`coding-memory-v1`, normalized track) on Stele,
beside the benchmark's own BM25 baseline, in one run.

    # once: a copy of the benchmark (read-only; nothing of it is committed here)
    git clone https://github.com/dat999zx/knowl ~/.cache/stele-bench/knowl-repo   # or the `fetch` mirror
    .venv/bin/python bench/knowl_memory.py --mirror ~/.cache/stele-bench/knowl-repo/.git
    .venv/bin/python bench/knowl_memory.py --systems bm25,session-recall --runs 3
    .venv/bin/python bench/knowl_memory.py --as-of-flag=--as-of      # once `recall/search --as-of` exists

Inputs: the dataset files are read at the pinned commit `PIN` (`git show PIN:path` from the mirror),
copied to ~/.cache/stele-bench/knowl-<PIN>/ and checked against the SHA-256 digests the dataset's
manifest lists; a mismatch stops the run.

Protocol (the benchmark's `collect.ts`): records sorted by `availableAt` then `sourceId`, questions by
`issuedAt` then `questionId`; before each question every record available by its time is fed; the
question is then asked with topK 10. One fresh git repository per project (questions never leave
their project). A question with an `asOf` is not applicable (N/A, outside every denominator) unless
`--as-of-flag FLAG` names the option that makes `stele recall`/`search` answer as of a time: the
runner then passes `FLAG <asOf>` (plug in `--as-of` when it lands). The BM25 baseline, a port of
`baselines.ts`, always filters by `asOf` (as in the benchmark).

Records are fed as a user would, through the `stele` CLI (in-process by default, `--subprocess` for
real processes; both go through the same entry point):
- session-* systems: `stele session log note "TITLE\nCONTENT" --session SESSIONID --at OCCURREDAT` (the
  record's title is the note's first line, which is a session entry's title in Stele, as `--title` is
  for a fact);
- facts-* systems: `stele remember CONTENT --title TITLE --kind K` (KIND_MAP), `--link contradicts:ID`
  and `--link relates-to:ID` (for `resolves`), `stele supersede OLD --by NEW` for `supersedes`, and a
  git commit of docs/memory/ before each question (committed facts).
Times are moved back three years (`shifted`: the dataset runs to 2027 and `--at` refuses the future).
Locators (`path`, `symbol`, `command`) are appended to the text, as BM25 sees them.
Systems: `bm25`, `session-recall` (`stele recall` over the session log), `facts-recall` (`stele recall`
over facts with links), `facts-search` (`stele search`), `sessions-search` (`stele search --sessions`
over the session log, when the option exists). The returned ids (facts, `S-` entries) map back to the
records' source ids; an id that maps to nothing is an unattributed hit (forbidden, as the scorer says).
Each store's index is built (`stele rebuild`) before its first question, as after `stele init` in a
real repository. `recall` is asked with `--max-chars 8000` (the benchmark's 2,000-token budget at ~4 characters per
token); `search` with `--limit 10`.

Scoring: `bench/knowl_score.py`, a port of the benchmark's `score.ts`, is the only code that opens the
gold labels, after every answer is collected. Output: a table of every preregistered metric per system,
overall and strict accuracy by category, and the raw predictions and scores in `--out` (JSON).
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import io
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import knowl_score  # noqa: E402  (the scorer beside this file)

PIN = "4821ddf97a1d6b508a5975d39c7d24205a238c26"  # dat999zx/knowl, release 5.9.0
DATASET = "benchmarks/accuracy/datasets/coding-memory-v1"
DEFAULT_MIRROR = Path("/work/.mirror/dat999zx+knowl/repo")
CACHE = Path.home() / ".cache" / "stele-bench" / f"knowl-{PIN[:12]}"
TOP_K = 10
SHIFT = dt.timedelta(days=3 * 365)  # see `shifted`
MAX_CHARS = "8000"
SYSTEMS = ("bm25", "session-recall", "facts-recall", "facts-search", "sessions-search")
# benchmark record kind -> Stele fact kind (facts systems); everything else is a note
KIND_MAP = {"architecture": "architecture", "decision": "decision", "constraint": "constraint",
            "failure": "lesson", "gotcha": "lesson", "correction": "decision"}
CAPABILITIES = {"sourceProvenance": True, "retrievalAbstention": True}
SHOWN = ("strictAccuracyAtK", "recallAt1", "recallAt3", "recallAt5", "recallAt10", "mrr", "ndcgAt5", "ndcgAt10",
         "staleResultRate", "forbiddenResultRate", "duplicateResultRate", "abstentionAccuracy",
         "applicableCoverage", "currentStateAccuracy", "historicalAsOfAccuracy", "timelineOrderAccuracy",
         "contradictionResolutionAccuracy", "failureScenarioAccuracy", "failedApproachRetrievalRecall")


# ---- inputs -------------------------------------------------------------------------------------------

def fetch_inputs(mirror: Path) -> Path:
    """The dataset at PIN, in the cache, every file checked against the manifest's SHA-256."""
    if not (mirror / "objects").is_dir() and not (mirror / ".git").exists():
        sys.exit(f"{mirror}: not a git directory; clone https://github.com/dat999zx/knowl and pass --mirror")
    git_dir = mirror / ".git" if (mirror / ".git").is_dir() else mirror

    def show(path: str) -> bytes:
        done = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{PIN}:{DATASET}/{path}"],
                              capture_output=True)
        if done.returncode:
            sys.exit(f"{mirror}: cannot read {DATASET}/{path} at {PIN[:12]} ({done.stderr.decode().strip()}); "
                     "fetch the repository again")
        return done.stdout

    manifest = json.loads(show("manifest.json"))
    CACHE.mkdir(parents=True, exist_ok=True)
    for path, digest in manifest["digests"].items():
        target = CACHE / path
        data = target.read_bytes() if target.exists() else show(path)
        if hashlib.sha256(data).hexdigest() != digest:
            sys.exit(f"{path}: SHA-256 differs from the manifest at {PIN[:12]}; delete {CACHE} and fetch again")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return CACHE


def ndjson(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def ordered(records: list[dict[str, Any]], queries: list[dict[str, Any]]) -> tuple[list, list]:
    return (sorted(records, key=lambda r: (r["availableAt"], r["sourceId"])),
            sorted(queries, key=lambda q: (q["issuedAt"], q["questionId"])))


# ---- the BM25 baseline (baselines.ts) -------------------------------------------------------------------

_CAMEL = re.compile(r"([a-z\d])([A-Z])")
_TOKEN = re.compile(r"[\w./-]+")


def tokenize(value: str) -> list[str]:
    text = _CAMEL.sub(r"\1 \2", unicodedata.normalize("NFKC", value)).lower()
    return list(_TOKEN.findall(text))


def record_text(r: dict[str, Any]) -> str:
    loc = r.get("locators") or {}
    return " ".join(x for x in (r["title"], r["content"], loc.get("path"), loc.get("symbol"), loc.get("command")) if x)


class Bm25:
    name = "bm25"

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def ingest(self, record: dict[str, Any]) -> None:
        self.records.append(record)

    def retrieve(self, query: dict[str, Any]) -> dict[str, Any]:
        records = [r for r in self.records if r["projectId"] == query["projectId"]
                   and (not query.get("asOf") or r["occurredAt"] <= query["asOf"])]
        query_tokens = list(dict.fromkeys(tokenize(query["text"])))
        if not records or not query_tokens:
            return {"decision": "abstain", "hits": []}
        docs = [(r, tokenize(record_text(r))) for r in records]
        avg = sum(len(t) for _, t in docs) / len(docs) or 1
        k1, b = 1.2, 0.75
        df = {tok: sum(1 for _, t in docs if tok in t) for tok in query_tokens}
        scored = []
        for r, toks in docs:
            counts: dict[str, int] = {}
            for t in toks:
                counts[t] = counts.get(t, 0) + 1
            s = 0.0
            for tok in query_tokens:
                tf = counts.get(tok, 0)
                if tf:
                    idf = math.log(1 + (len(docs) - df[tok] + 0.5) / (df[tok] + 0.5))
                    s += idf * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * (len(toks) / avg)))
            scored.append((r, s))
        scored = [x for x in scored if x[1] > 0]
        scored.sort(key=lambda x: x[0]["sourceId"])
        scored.sort(key=lambda x: x[0]["occurredAt"], reverse=True)
        scored.sort(key=lambda x: x[1], reverse=True)
        hits = [{"memoryId": r["sourceId"], "sourceIds": [r["sourceId"]]} for r, _ in scored[:TOP_K]]
        return {"decision": "results", "hits": hits} if hits else {"decision": "abstain", "hits": []}


# ---- Stele through its CLI ------------------------------------------------------------------------------

class Cli:
    """`stele ARGS` in a repository: in-process through the real entry point, or as a subprocess."""

    def __init__(self, root: Path, subprocess_: bool) -> None:
        self.root, self.subprocess = root, subprocess_
        self.exe = str(Path(sys.executable).parent / "stele")

    def __call__(self, *args: str) -> str:
        if self.subprocess:
            done = subprocess.run([self.exe, *args], cwd=self.root, capture_output=True, text=True)
            code, out, err = done.returncode, done.stdout, done.stderr
        else:
            code, out, err = self._inprocess(list(args))
        if code:
            raise RuntimeError(f"stele {' '.join(args)[:200]}: exit {code}: {err.strip()[:400]}")
        return out

    def _inprocess(self, args: list[str]) -> tuple[int, str, str]:
        from stele.cli.entry import main

        out, err = io.StringIO(), io.StringIO()
        old = Path.cwd()
        os.chdir(self.root)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(args) or 0
                except SystemExit as e:
                    code = e.code if isinstance(e.code, int) else 1
        finally:
            os.chdir(old)
        return code, out.getvalue(), err.getvalue()


def git(root: Path, *args: str, when: str | None = None) -> None:
    """`git ARGS` in `root`; `when` (ISO) dates a commit, as a record committed when it became available."""
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else None
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def shifted(moment: str) -> str:
    """A benchmark time moved back by SHIFT: the dataset runs to 2027, and Stele refuses to log an
    entry in the future. Every time the runner passes (`--at`, the as-of flag) moves by the same
    amount, so order and spacing are kept; the benchmark's own fields are never changed."""
    when = dt.datetime.fromisoformat(moment.replace("Z", "+00:00")) - SHIFT
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def record_body(r: dict[str, Any]) -> str:
    loc = r.get("locators") or {}
    extra = [f"{k}: {loc[k]}" for k in ("path", "symbol", "command") if loc.get(k)]
    return r["content"] + ("\n" + "\n".join(extra) if extra else "")


class Stele:
    """One Stele system over one project's fresh repository."""

    def __init__(self, name: str, work: Path, project: str, subprocess_: bool, as_of_flag: str | None) -> None:
        self.name, self.as_of_flag = name, as_of_flag
        self.facts = name.startswith("facts")
        self.root = work / f"{name}-{project}"
        self.root.mkdir(parents=True)
        git(self.root, "init", "-q")
        # dated before every record, so `--as-of` any question's time has a commit to answer from
        git(self.root, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q",
            "--allow-empty", "-m", "init", when="2000-01-01T00:00:00Z")
        self.cli = Cli(self.root, subprocess_)
        self.cli("init")
        self.sources: dict[str, str] = {}  # stele id -> source id
        self.ids: dict[str, str] = {}  # source id -> stele id
        self.asked = False

    def ingest(self, r: dict[str, Any]) -> None:
        rel = r.get("relations") or {}
        if not self.facts:
            text = f"{r['title']}\n{record_body(r)}"
            out = self.cli("session", "log", "note", text, "--session", r["sessionId"], "--at", shifted(r["occurredAt"]),
                           "--json")
            sid = json.loads(out)["entry"]["id"]
        else:
            links = [f"contradicts:{self.ids[s]}" for s in rel.get("contradicts", []) if s in self.ids]
            links += [f"relates-to:{self.ids[s]}" for s in rel.get("resolves", [])
                      if s in self.ids and s not in rel.get("supersedes", [])]
            args = ["remember", record_body(r), "--title", r["title"][:120],
                    "--kind", KIND_MAP.get(r["kind"], "note"), "--allow-duplicate", "--json"]
            for link in links:
                args += ["--link", link]
            sid = json.loads(self.cli(*args))["id"]
            for old in rel.get("supersedes", []):
                if old in self.ids:
                    self.cli("supersede", self.ids[old], "--by", sid)
            # committed as it became available, as a team commits what it learns: `--as-of` a
            # question's time then finds the record as it stood (one commit per question would date
            # earlier records with the latest one's time and hide them from a time between the two)
            git(self.root, "add", "-A", "docs")
            git(self.root, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q",
                "-m", r["sourceId"], when=shifted(r["occurredAt"]))
        self.sources[sid], self.ids[r["sourceId"]] = r["sourceId"], sid

    def retrieve(self, query: dict[str, Any]) -> dict[str, Any]:
        if not self.asked:  # the first index of a store is built before its first question, as after
            self.cli("rebuild")  # `stele init` in a real repository (built inside the 8 s recall budget
            self.asked = True    # under load it fell back to recent session notes, 0-2 questions a run)
        extra = [self.as_of_flag, shifted(query["asOf"])] if query.get("asOf") and self.as_of_flag else []
        if self.name.endswith("recall"):
            out = json.loads(self.cli("recall", query["text"], "--json", "--max-chars", MAX_CHARS, *extra))
            ids = [e["id"] for e in out.get("entries", [])]
            labels = {e["id"]: {k: v for k, v in e.items() if k.endswith("_by") or k in ("score", "replaces")}
                      for e in out.get("entries", [])}
        else:
            flags = ["--sessions"] if self.name == "sessions-search" else []
            out = json.loads(self.cli("search", query["text"], "--json", "--limit", str(TOP_K), *flags, *extra))
            ids = [e["id"] for e in out.get("results", [])]
            labels = {}
        # `labels`: what Stele said of each hit (replaced, contradicted...), for reading failures; unscored
        hits = [{"memoryId": i, "sourceIds": [self.sources[i]] if i in self.sources else [],
                 **({"stele": labels[i]} if labels.get(i) else {})} for i in ids[:TOP_K]]
        return {"decision": "results", "hits": hits} if hits else {"decision": "abstain", "hits": []}


# ---- the protocol ---------------------------------------------------------------------------------------

def collect(system: str, records: list, queries: list, work: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Predictions of one system, by the benchmark's protocol (collect.ts), one fresh store per project."""
    predictions: dict[str, dict[str, Any]] = {}
    as_of_supported = system == "bm25" or bool(args.as_of_flag)
    for project in sorted({q["projectId"] for q in queries}):
        mine = [r for r in records if r["projectId"] == project]
        store: Any = Bm25() if system == "bm25" else Stele(system, work, project, args.subprocess, args.as_of_flag)
        i = 0
        for q in (q for q in queries if q["projectId"] == project):
            while i < len(mine) and mine[i]["availableAt"] <= q["issuedAt"]:
                store.ingest(mine[i])
                i += 1
            if q.get("asOf") and not as_of_supported:
                predictions[q["questionId"]] = {"questionId": q["questionId"],
                                                "notApplicableReason": "adapter does not support strict as-of retrieval"}
                continue
            try:
                predictions[q["questionId"]] = {"questionId": q["questionId"], "response": store.retrieve(q)}
            except RuntimeError as e:
                predictions[q["questionId"]] = {"questionId": q["questionId"], "error": str(e)}
    return [predictions[q["questionId"]] for q in queries]


def median_metrics(runs: list[dict[str, Any]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in knowl_score.METRICS:
        values = [r["metrics"][name]["value"] for r in runs]
        out[name] = None if None in values else statistics.median(values)
    return out


def by_category(score: dict[str, Any]) -> dict[str, str]:
    cats: dict[str, list[dict[str, Any]]] = {}
    for row in score["perQuery"]:
        cats.setdefault(row["category"], []).append(row)
    out = {}
    for cat, rows in sorted(cats.items()):
        applicable = [r for r in rows if r["strictCorrect"] is not None]
        out[cat] = (f"{sum(1 for r in applicable if r['strictCorrect'])}/{len(applicable)}" if applicable
                    else f"N/A ({len(rows)})")
    return out


def fmt(v: float | None) -> str:
    return "N/A" if v is None else f"{v:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR, help="a git clone of dat999zx/knowl")
    ap.add_argument("--systems", default="bm25,session-recall,facts-recall,facts-search")
    ap.add_argument("--runs", type=int, default=1, help="clean runs (the benchmark's is 3; median reported)")
    ap.add_argument("--as-of-flag", default=None, help="the recall/search option taking the asOf time")
    ap.add_argument("--subprocess", action="store_true", help="one `stele` process per command")
    ap.add_argument("--project", action="append", help="only these projects (p01...); a partial run")
    ap.add_argument("--out", type=Path, default=CACHE / "results.json")
    args = ap.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in SYSTEMS:
            sys.exit(f"--systems: {s!r} is not one of {', '.join(SYSTEMS)}")
    data = fetch_inputs(args.mirror)
    records, queries = ordered(ndjson(data / "public/normalized-records.ndjson"),
                               ndjson(data / "public/queries.ndjson"))
    if args.project:
        queries = [q for q in queries if q["projectId"] in args.project]
    collected: dict[str, list[list[dict[str, Any]]]] = {}
    for system in systems:
        collected[system] = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix=f"knowl-{system}-", ignore_cleanup_errors=True) as work:
                collected[system].append(collect(system, records, queries, Path(work), args))
            print(f"collected {system}", file=sys.stderr)
    # scoring: the only place the gold is read
    gold = ndjson(data / "gold/question-labels.ndjson")
    if args.project:
        gold = [g for g in gold if g["questionId"] in {q["questionId"] for q in queries}]
    results: dict[str, Any] = {"benchmark": f"github:dat999zx/knowl@{PIN}", "dataset": DATASET, "systems": {}}
    print(f"coding-memory-v1 normalized, knowl@{PIN[:12]}, {len(queries)} questions, runs={args.runs}, "
          f"as-of flag={args.as_of_flag or 'none (asOf questions N/A for Stele)'}\n")
    print("| metric | " + " | ".join(systems) + " |")
    print("|---|" + "---|" * len(systems))
    scores = {}
    for system in systems:
        runs = [knowl_score.score_retrieval(records, queries, gold, p, CAPABILITIES, TOP_K) for p in collected[system]]
        identical = all(json.dumps(r["perQuery"]) == json.dumps(runs[0]["perQuery"]) for r in runs)
        scores[system] = (median_metrics(runs), by_category(runs[0]), identical)
        results["systems"][system] = {"median": scores[system][0], "byCategory": scores[system][1],
                                      "runsIdentical": identical, "runs": runs, "predictions": collected[system]}
    for name in SHOWN:
        print(f"| {name} | " + " | ".join(fmt(scores[s][0][name]) for s in systems) + " |")
    cats = sorted({c for s in systems for c in scores[s][1]})
    for cat in cats:
        print(f"| strict: {cat} | " + " | ".join(scores[s][1].get(cat, "-") for s in systems) + " |")
    if args.runs > 1:
        print("| runs identical | " + " | ".join(str(scores[s][2]) for s in systems) + " |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(f"\nraw predictions and per-query scores: {args.out}")


if __name__ == "__main__":
    main()
