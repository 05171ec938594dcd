"""The resident server's spare warms up on the record without leaving anything behind that a call
could read stale, and without writing a file or catching the index up (`cli/resident/spare.py`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests import factfiles
from tests.helpers import git, write_fact

# Module state the warm-up may leave filled: the same thing a fresh process computes from the same files.
KEPT = {"stele.retrieve.seeds._ENCODERS",  # keyed by the model's content digest
        "stele.retrieve.unrecorded._VOCABS",  # the model's vocabulary, keyed by its model id as well
        "stele.redact._default"}  # the redactor of the built-in rules (constants)

CHECK = r"""
import functools, json, sys, types
from pathlib import Path
root = Path(sys.argv[1])
from stele.cli.resident import server
server.preload()
from stele.hooks import lookup
from stele.retrieve import recall, seeds
from stele.cli.resident.spare import warm

ran = []
def counted(module, name):
    real = getattr(module, name)
    def wrapper(*a, **k):
        ran.append(name)
        return real(*a, **k)
    setattr(module, name, wrapper)
for module, name in ((lookup, "always"), (lookup, "open_tasks"), (lookup, "anchored"), (recall, "recall_in"),
                     (seeds, "query_encoder")):
    counted(module, name)

SKIP = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, functools._lru_cache_wrapper)
def state():
    out = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != "stele":
            continue
        for key, value in list(vars(module).items()):
            if isinstance(value, type):  # a class's own mutable attributes
                for attr, v in vars(value).items():
                    if isinstance(v, (dict, list, set)):
                        out[f"{name}.{key}.{attr}"] = (id(v), len(v))
            elif not isinstance(value, SKIP):
                out[f"{name}.{key}"] = (id(value), len(value) if isinstance(value, (dict, list, set)) else None)
    return out

def files():
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in root.rglob("*") if p.is_file()}

from stele.index import sources, watch
from stele.project import Project
project = Project(root)
live = watch.LiveScan(project)  # as the server's spare has it: the sources' stamps from the live scan
sources.adopt(project.root, live.roots, live.current())
before, seen = state(), files()
warm(Project(root))
after, now = state(), files()
print(json.dumps({"changed": sorted(k for k in after if before.get(k) != after[k]),
                  "wrote": sorted(k for k in set(seen) | set(now) if seen.get(k) != now.get(k)),
                  "ran": ran, "encoders": len(seeds._ENCODERS)}))
"""


def check(repo) -> dict:
    """What the warm-up changed, after a first read has settled the caches any read keeps (the parsed
    config, the folders' listing): the spare comes after a call."""
    subprocess.run([sys.executable, "-m", "stele", "recall", "anything"], cwd=repo, capture_output=True)
    done = subprocess.run([sys.executable, "-c", CHECK, str(repo.resolve())], cwd=repo, capture_output=True,
                          text=True, env={**os.environ, "STELE_RESIDENT": "0"})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_warm_up_reads_what_the_hooks_read_and_leaves_nothing_behind(repo):
    write_fact(repo, "DEC-AAA1", "decision", "Payment webhooks are deduplicated by their event id",
               anchors=["src/pay.py"])
    write_fact(repo, "CON-BBB2", "constraint", "Every migration is reversible", delivery="always")
    write_fact(repo, "TSK-CCC3", "task", "Move the webhook queue to its own worker", status="open")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "facts")
    factfiles.backdate(repo)
    assert subprocess.run([sys.executable, "-m", "stele", "rebuild"], cwd=repo, capture_output=True).returncode == 0
    found = check(repo)
    assert sorted(found["ran"]) == ["always", "anchored", "open_tasks", "query_encoder", "recall_in"], found
    assert found["encoders"] == 1  # the real bundled model, loaded for the call that follows
    assert set(found["changed"]) <= KEPT, found["changed"]
    assert found["wrote"] == [], found["wrote"]


def test_a_stale_index_is_not_warmed_up_on_or_caught_up(repo):
    write_fact(repo, "DEC-AAA1", "decision", "Payment webhooks are deduplicated by their event id")
    assert subprocess.run([sys.executable, "-m", "stele", "rebuild"], cwd=repo, capture_output=True).returncode == 0
    write_fact(repo, "DEC-DDD4", "decision", "Refunds go through the ledger, never around it")
    found = check(repo)
    assert found["ran"] == [] and found["wrote"] == [], found  # the call catches up, not the spare
