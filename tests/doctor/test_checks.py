"""The record-wide checks on a generated record give the findings of checking each file on its own.

doctor reads the record once and redacts and reviews it in batches (`Record.working_files`,
`Redactor.spans_many`, `assemble.record_texts`, the fast paths of `neutralize.suspects`); these tests
compute the same findings the plain way (walk, read, redact and review each file by itself) on
`bench/gen_record.py`'s record with secrets, hidden characters, commands and oversized bodies mixed in.
"""
import datetime as dt
import subprocess
import sys
from pathlib import Path

from stele import neutralize
from stele.doctor import checks
from stele.doctor.findings import Finding
from stele.doctor.untrusted import untrusted
from stele.project import Project
from stele.record.load import _is_candidate, from_texts, load
from stele.redact import Redactor
from stele.snapshot.assemble import record_text
from stele.snapshot.model import Budgets
from tests.secret_corpus import look_alikes, shapes
from tests.untrusted_payloads import PAYLOADS

ON = dt.date(2026, 11, 29)
GEN = Path(__file__).resolve().parents[2] / "bench" / "gen_record.py"


def _record(tmp_path: Path) -> Project:
    root = tmp_path / "repo"
    subprocess.run([sys.executable, str(GEN), "240", str(root)], check=True, capture_output=True)
    files = sorted((root / "docs" / "memory").rglob("*.md"))
    extras = [s.text for s in shapes()] + look_alikes() + [text for _, text, _ in PAYLOADS]
    extras += ["rm -rf / is how the old cleanup job ran", "word " * 900, "line\rover", "x" * 5000]
    for n, extra in enumerate(extras):  # into the bodies of every other file
        path = files[(2 * n) % len(files)]
        path.write_bytes(path.read_bytes() + f"\n{extra}\n".encode())
    return Project(root)


def _plain_files(project: Project) -> list[tuple[str, Path]]:
    memory = project.memory_dir
    return [(project.rel(p), p) for p in sorted(memory.rglob("*.md"))
            if _is_candidate(p.relative_to(memory).as_posix()) and p.is_file()]


def test_batched_checks_find_what_file_by_file_checks_find(tmp_path, monkeypatch):
    project = _record(tmp_path)
    record = load(project)
    plain = from_texts(project, ((rel, p.read_text(encoding="utf-8"), "") for rel, p in _plain_files(project)))
    assert [(f.id, f.title, f.body, f.links) for f in record.facts.values()] == \
        [(f.id, f.title, f.body, f.links) for f in plain.facts.values()]
    assert record.problems == plain.problems

    redactor = Redactor(project.config["redaction.patterns"])
    expected = [Finding("secret", rel, text.count("\n", 0, offset) + 1, f"{kind} in committed memory: remove it "
                        "and rotate the credential (it is in git history once pushed)")
                for rel, path in _plain_files(project)
                for text in [path.read_text(encoding="utf-8")] for kind, offset in redactor.find(text)]
    assert checks.secrets(record, redactor) == expected and len(expected) >= 60

    budgets = Budgets.from_config(project.config)
    sizes = {f.id: len(record_text(f, ON).encode()) for f in record.facts.values()}
    found = checks.oversized(record, 2000, budgets, ON)
    assert {f.fact for f in found} == {fid for fid, size in sizes.items()
                                       if size > 2000 and record.facts[fid].status not in checks.CLOSED}
    assert found and all(f"is {sizes[f.fact]} bytes" in f.message for f in found)

    batched = untrusted(record, 4000)
    monkeypatch.setattr(neutralize, "_starts", lambda text: None)
    monkeypatch.setattr(neutralize, "_plain_ascii", lambda text: False)
    by_path = {f.path: f for f in record.facts.values()}
    expected = []
    for rel, path in _plain_files(project):
        text = path.read_bytes().decode("utf-8")
        fact = by_path.get(rel)
        for s in neutralize.suspects(text, kind=fact.kind if fact else None, max_line=4000):
            expected.append(Finding(s.check, rel, text.count("\n", 0, s.offset) + 1, s.message,
                                    fact.id if fact else None))
    assert batched == expected and {f.check for f in expected} >= {"hidden-character", "escape-sequence",
                                                                  "instruction-like", "long-line"}
