#!/usr/bin/env python3
"""The least a prompt hook could do in a fresh Python process (issue 34), timed beside hook_floor.py's
floor and the real prompt hook in one run, interleaved, so that the ratios hold on a loaded machine.

    .venv/bin/python bench/hook_lower_bound.py                        # bench/out/rec-10000, 20 rounds
    .venv/bin/python bench/hook_lower_bound.py --repo /tmp/recA --runs 30

Issue 34 asks the own-process prompt hook for p50 <= 2x the floor of hook_floor.py (a bare interpreter
that imports tantivy, opens the text index, runs one BM25 query and reads ten stored documents). That
floor does less than any hook can: it embeds nothing and maps nothing to the catalog. The lower bound
here is what a prompt hook cannot do without, written as plainly as it can be, with the libraries Stele
uses and nothing of Stele's but its pure-Python WordPiece tokenizer (`stele.index.wordpiece`, standard
library only; `tokenizers` and numpy cost a hook more than all of this):

1. a fresh interpreter reads the harness's JSON payload from stdin;
2. imports tantivy, simsimd and sqlite3; opens the text index and runs one BM25 query over title and
   body, ten stored documents read (the floor's work);
3. embeds the prompt: the compiled vocabulary (`tokenizer.wp` in the model's store), the prompt's
   token rows read from model.safetensors, their mean, normalised;
4. scans the memory-mapped int8 rows with simsimd, re-ranks the nearest by their float32 rows, and
   maps the ten best rows to item ids in the catalog (SQLite);
5. prints one JSON answer.

No freshness check, no session, no ranking beyond BM25 and the cosine, no rendering. `lower bound +
stat` adds, in the same process and before the queries, one `os.stat` of every source file (facts and
session logs, the scan a hook needs to know the index is fresh when nothing watches the files), taken
from the index folder's listing; the hook runs that scan in a forked child on the other core
(`index/early.py`), so on an idle second core the real hook pays it in CPU more than in wall time.

Each round, each in a fresh process with the same prompt (one that the real hook answers through the
embeddings; hook_floor.py's choice): the floor, the lower bound, the lower bound + stat, and `stele hook
prompt --harness claude` in its own process (`STELE_RESIDENT=0`, a new session id). Printed: wall p50 /
p90, CPU p50 (user + system, children included) and each wall p50 as a ratio to the floor's.
"""
from __future__ import annotations

import argparse
import marshal
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hook_floor import GAP_MS, PARAPHRASES, STELE, payload, record_titles, sort_prompts, summary, timed  # noqa: E402
from hooks_bench import child_env  # noqa: E402
from recall_bench import FLOOR, PROMPTS  # noqa: E402

LOWER = r"""
import json, sys
prompt = json.loads(sys.stdin.read())["prompt"]
text_dir, catalog, store, model, dim, rows, listing = sys.argv[1:8]
dim, rows = int(dim), int(rows)
if listing:  # the freshness scan, serial: one stat of every source file
    import marshal, os
    for folder, entry in marshal.loads(open(listing, "rb").read())[1].items():
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        for name in entry[3]:
            os.stat(name, dir_fd=fd)
        os.close(fd)
import heapq, mmap, sqlite3
from array import array
import simsimd, tantivy
from stele.index import wordpiece

idx = tantivy.Index.open(text_dir)
idx.register_tokenizer("stele_terms", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\w+"))
                       .filter(tantivy.Filter.lowercase()).build())
searcher = idx.searcher()
query = idx.parse_query_lenient(prompt, ["title", "body"])[0]
text_ids = [searcher.doc(a)["id"][0] for _, a in searcher.search(query, 10).hits]

# the prompt's vector: WordPiece ids, their int8 rows from the model file, the mean, normalised
wp = wordpiece.WordPiece(open(store + "/tokenizer.wp", "rb").read())
ids = [t for t in (wp.encode(prompt) or []) if t != wp.unk_id][:512]
with open(model + "/model.safetensors", "rb") as f:
    size = int.from_bytes(f.read(8), "little")
    header = json.loads(f.read(size))["embeddings"]
    width = header["shape"][1]
    start = 8 + size + header["data_offsets"][0]
    sums = [0.0] * width
    for t in ids:
        f.seek(start + t * width)
        sums = [a + b for a, b in zip(sums, array("b", f.read(width)))]
norm = sum(x * x for x in sums) ** 0.5 or 1.0
vector = [x / norm for x in sums]
top = max(abs(x) for x in vector) or 1.0
q8 = array("b", [round(x * 127 / top) for x in vector])

# the int8 scan over every row, then the float32 rows of the nearest few
with open(store + "/rows.i8", "rb") as f:
    i8 = mmap.mmap(f.fileno(), rows * dim, access=mmap.ACCESS_READ)
with open(store + "/rows.f32", "rb") as f:
    f32 = mmap.mmap(f.fileno(), rows * dim * 4, access=mmap.ACCESS_READ)
found = simsimd.cdist(memoryview(q8).cast("b", (1, dim)), memoryview(i8).cast("b", (rows, dim)),
                      metric="cosine", dtype="int8")
values = memoryview(found).cast("B").cast("d").tolist()
near = heapq.nsmallest(30, range(len(values)), key=values.__getitem__)
gathered = b"".join([f32[r * 4 * dim:(r + 1) * 4 * dim] for r in near])
dots = simsimd.cdist(memoryview(array("f", vector)).cast("B").cast("f", (1, dim)),
                     memoryview(gathered).cast("B").cast("f", (len(near), dim)), metric="dot", dtype="float32")
dots = memoryview(dots).cast("B").cast("d").tolist()
best = [r for _, r in sorted(zip(dots, near), key=lambda x: -x[0])[:10]]
db = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
marks = ",".join("?" * len(best))
vector_ids = [i for (i,) in db.execute(f"SELECT id FROM items WHERE vec_row IN ({marks})", best)]
print(json.dumps({"text": text_ids, "vectors": vector_ids}))
"""


def lower_args(repo: Path) -> list[str]:
    """The lower bound's arguments, resolved here (not timed): the text index, the catalog, the model's
    store, the model folder, the store's dim and rows (as the catalog's meta holds them)."""
    import sqlite3

    from stele.index import vectors
    from stele.project import Project

    project = Project(repo)
    index = project.index_dir
    meta = dict(sqlite3.connect(index / "catalog.sqlite").execute("SELECT key, value FROM meta"))
    ref = vectors.model_ref(project)
    store = vectors.store_dir(index, meta["model_id"])
    assert (store / vectors.TOKENIZER).exists(), "the compiled vocabulary is written by the first query"
    return [str(index / "text"), str(index / "catalog.sqlite"), str(store), str(ref.path), str(meta["dim"]),
            str(meta["rows"])]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=HERE / "out" / "rec-10000")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    repo = args.repo
    env = child_env()
    hook_env = {**env, "STELE_RESIDENT": "0"}
    _fts, emb = sort_prompts(repo, PROMPTS + PARAPHRASES + record_titles(repo))
    if not emb:
        raise SystemExit("no prompt here consults the embeddings")
    base = lower_args(repo)
    listing = str(repo / ".stele/index/listing.marshal")
    stats = sum(len(e[3]) for e in marshal.loads(Path(listing).read_bytes())[1].values())
    print(f"record: {repo}, {len(emb)} embedding prompts, {stats} source files in the listing; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    cases: dict[str, list] = {}
    py = sys.executable
    for n in range(args.runs):
        prompt = emb[n % len(emb)]
        body = payload(repo, "prompt", n, prompt, [])
        calls = [("floor", [py, "-c", FLOOR, base[0], prompt], hook_env, ""),
                 ("lower bound", [py, "-c", LOWER, *base, ""], hook_env, body),
                 ("lower bound + stat", [py, "-c", LOWER, *base, listing], hook_env, body),
                 ("prompt hook, own process", [STELE, "hook", "prompt", "--harness", "claude"], hook_env, body)]
        for name, cmd, e, stdin in (calls if n % 2 == 0 else calls[::-1]):
            time.sleep(GAP_MS / 1000)
            cases.setdefault(name, []).append(timed(cmd, repo, e, stdin)[:3])
    floor_p50 = statistics.median(r[0] for r in cases["floor"])
    for name in ("floor", "lower bound", "lower bound + stat", "prompt hook, own process"):
        print(f"{name:<26} {summary(cases[name], None if name == 'floor' else floor_p50)}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
