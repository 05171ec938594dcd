"""The same record and prompt give the same window, whatever the index's history (issue 26, item 4).

tantivy counts a deleted document in its BM25 statistics (documents, document frequencies, average
field lengths) until a merge purges it, and the vectors' rows follow the order facts were embedded in.
So an index that saw facts added and deleted, or edited and put back, used to answer differently from
one built from the same record in one go. Here: the bundled example record (56 facts) and the bundled
model, a list of prompts, and the windows (mode, entries, risks) after a fresh build, after 24 facts
came and went and 6 were edited and restored, and after `stele rebuild`, which must all be equal.
"""
from __future__ import annotations

from pathlib import Path

from stele.cli.demo import example_inputs
from stele.index.build import open_index, rebuild
from stele.project import Project
from stele.record.scaffold import example_repository
from stele.retrieve.recall import recall
from tests.fakes import write_fact

# Beside the example's own prompts: paraphrases, follow-ups, pasted errors and unrelated requests.
PROMPTS = [
    "how long is the grace period before unreferenced layers are swept?",
    "the push failed with blob unknown to registry while gc was running",
    "can we convert docker v2 manifests to OCI when someone pulls them?",
    "what size are the parts of a multipart upload to S3?",
    "who may overwrite a release tag after it was pushed?",
    "why is the Frankfurt site paying for cross-region egress?",
    "the console should load fonts from a CDN to look nicer",
    "how do I rotate the key that signs registry tokens?",
    "builds are slow again, what did we decide about the layer cache?",
    "add a new index to the tags table in a migration",
    "quota exceeded: pushes to the monorepo namespace fail with 413",
    "what happens to abandoned multipart uploads in the bucket?",
    "write a haiku about autumn leaves drifting across a quiet pond",
    "how do I center a div horizontally and vertically with flexbox?",
]
# Facts that come and go: the example's own vocabulary, so they move its statistics.
CHURN = [
    ("registry garbage collection sweeps blobs", "The garbage collector sweeps registry blobs in batches of 500."),
    ("layer cache of the build workers", "BuildKit workers keep a layer cache per branch in the registry."),
    ("token expiry for registry pulls", "Pull tokens for the registry expire after one hour."),
    ("S3 multipart uploads and parts", "Multipart uploads to S3 send parts of 16 MiB."),
    ("manifest conversion on push", "A pushed manifest is stored as it came, byte for byte."),
    ("Postgres job queue for builds", "Build jobs are claimed from the Postgres queue with SKIP LOCKED."),
]


def _windows(project: Project, prompts: list[str]) -> dict[str, tuple]:
    out = {}
    for prompt in prompts:
        r = recall(project, prompt)
        out[prompt] = (r.mode, [e.id for e in r.entries], [x.id for x in r.risks])
    return out


def _refresh(project: Project) -> None:
    with open_index(project):
        pass


def test_windows_do_not_depend_on_the_index_history(tmp_path, monkeypatch):
    root = example_repository(tmp_path / "harbor")
    monkeypatch.chdir(root)
    project = Project(root)
    prompts = list(example_inputs()[0]) + PROMPTS
    rebuild(project)
    fresh = _windows(project, prompts)
    assert sum(1 for mode, entries, _ in fresh.values() if entries) >= len(prompts) // 2  # a real test

    added = []
    for n in range(24):
        title, body = CHURN[n % len(CHURN)]
        added.append(write_fact(root, f"NOTE-{9000 + n}", "note", f"{title} ({n})", body * (1 + n % 3)))
        if n % 8 == 7:
            _refresh(project)  # several commits, as hooks make them: several segments
    facts = sorted((root / "docs" / "memory").rglob("*.md"))
    edited = {p: p.read_text(encoding="utf-8") for p in facts if "NOTE-9" not in p.name and p.name != "README.md"}
    edited = dict(list(edited.items())[:6])
    for path, text in edited.items():
        path.write_text(text + "\nAn edit that mentions registry garbage collection and tokens.\n", encoding="utf-8")
    _refresh(project)
    for path in added:
        path.unlink()
    _refresh(project)
    for path, text in edited.items():
        path.write_text(text, encoding="utf-8")
    churned = _windows(project, prompts)

    rebuild(project)
    rebuilt = _windows(project, prompts)
    assert rebuilt == fresh
    assert {p: w for p, w in churned.items() if w != fresh[p]} == {}


def test_the_example_repository_has_the_facts_the_test_counts_on(tmp_path):
    root: Path = example_repository(tmp_path / "harbor")
    assert len([p for p in (root / "docs" / "memory").rglob("*.md") if p.name != "README.md"]) >= 40
