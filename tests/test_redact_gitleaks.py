"""gitleaks' own rule samples (tests/gitleaks_corpus.py) through the engine and the write paths.

Every true-positive sample must lose its secret, through the library and through the real write
paths (`stele remember`, `stele session log note`, titles that become file names), after which no
file under docs/memory/ or .stele/ (WAL and archives, catalog, index terms) and no git object holds
a raw secret; `stele doctor` reports one written into a fact by hand. False positives that are not
placeholders nor another rule's secret are counted: the figure is in docs/security.md.
"""
from __future__ import annotations

import json

import pytest

from stele.redact import Redactor, redact
from tests import gitleaks_corpus as corpus
from tests.helpers import git, invoke
from tests.test_secrets_end_to_end import leaks as _leaks_in

TPS = corpus.true_positives()
# measured at this commit (`scripts/gitleaks_figures.py`; the goal is 2%, 4 of 227: not met,
# docs/security.md says why)
PLAIN_CHANGED_MAX = 13           # of 227
TUNE_CHANGED_MAX, HELD_OUT_CHANGED_MAX = 7, 6  # of 95 and of 132
UNREPORTED_CHANGED_MAX = 5       # of the 216 that no other gitleaks rule reports anything in


def test_the_pinned_corpus_is_what_the_docs_describe():
    assert len(corpus.corpus_commit()) == 40
    assert len(TPS) > 6000 and len({t["rule"] for t in TPS}) > 200
    assert len(corpus.load()["false_positives"]) > 350


def test_every_true_positive_sample_loses_its_secret():
    leaked = [(t["rule"], t["sample"]) for t in TPS if t["secret"] in redact(t["sample"]).text]
    assert leaked == [], f"{len(leaked)} samples keep their secret, e.g. {leaked[:5]}"


def test_the_batch_scan_agrees_with_the_single_scan():
    texts = [t["sample"] for t in TPS[::7]]
    assert [r.text for r in Redactor().redact_many(texts)] == [redact(t).text for t in texts]


def _changed(fps: list[dict]) -> list[str]:
    return [f["sample"] for f in fps if redact(f["sample"]).text != f["sample"]]


def test_false_positives_that_are_plain_text_mostly_survive():
    plain = corpus.false_positives("plain")
    changed = _changed(plain)
    assert len(changed) <= PLAIN_CHANGED_MAX, (len(changed), len(plain), changed[:10])


def test_held_out_rules_are_reported_apart_and_no_worse_than_measured():
    """The mechanisms were chosen on the tune half (docs/security.md); the held-out half is measured
    the same way and must not regress."""
    plain = corpus.false_positives("plain")
    tune = [f for f in plain if not corpus.held_out(f["rule"])]
    held = [f for f in plain if corpus.held_out(f["rule"])]
    assert (len(tune), len(held)) == (95, 132)
    assert len(_changed(tune)) <= TUNE_CHANGED_MAX and len(_changed(held)) <= HELD_OUT_CHANGED_MAX
    assert not [t for t in TPS if corpus.held_out(t["rule"]) and t["secret"] in redact(t["sample"]).text]


def test_plain_false_positives_gitleaks_itself_reports_nothing_in():
    """Without the plain false positives in which another gitleaks rule reports a secret."""
    unreported = [f for f in corpus.false_positives("plain") if not corpus.reported_by_gitleaks(f)]
    assert len(unreported) == 216
    assert len(_changed(unreported)) <= UNREPORTED_CHANGED_MAX, _changed(unreported)


def _one_per_secret() -> list[dict]:
    seen: dict[str, dict] = {}
    for t in TPS:
        seen.setdefault(t["secret"], t)
    return list(seen.values())


@pytest.mark.slow  # ~30 s: every distinct secret through the CLI, then every byte on disk
def test_no_gitleaks_secret_lands_on_any_write_path(tmp_path, monkeypatch):
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    monkeypatch.chdir(root)
    monkeypatch.delenv("STELE_SESSION", raising=False)
    assert invoke("init").code == 0
    samples = _one_per_secret()
    chunk = 60
    for n in range(0, len(samples), chunk):
        body = "\n\n".join(t["sample"] for t in samples[n:n + chunk])
        r = invoke("remember", "-", "--kind", "note", "--title", f"Pasted config {n}", input=body)
        assert r.code == 0, r.err
        r = invoke("session", "log", "note", body, "--session", "sess-gitleaks")
        assert r.code == 0, r.err
    # one-line samples as titles: the title becomes the file name
    titled = [t for t in samples if "\n" not in t["sample"] and len(t["sample"]) <= 110][:40]
    for t in titled:  # two secrets of one kind redact to the same fact: a repeat, written anyway here
        r = invoke("remember", "Config line.", "--kind", "note", "--title", t["sample"], "--allow-duplicate")
        assert r.code == 0, r.err
    assert invoke("rebuild").code == 0
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "memory")
    import tests.test_secrets_end_to_end as e2e

    monkeypatch.setattr(e2e, "SECRETS", sorted({t["secret"] for t in samples if len(t["secret"]) >= 8}))
    found = _leaks_in(root)
    assert found == {}, f"{len(found)} secrets on disk: {sorted(found.items())[:5]}"
    names = [p.name for p in (root / "docs" / "memory").rglob("*.md")]
    assert not any(t["secret"] in name for t in titled for name in names)


def test_doctor_reports_a_gitleaks_secret_written_by_hand(tmp_path, monkeypatch):
    from tests.helpers import write_fact

    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    monkeypatch.chdir(root)
    assert invoke("init").code == 0
    sample = next(t for t in TPS if t["sample"].startswith("$") and ".=" in t["sample"])
    write_fact(root, "NOTE-7K2M", "note", "Pasted by hand", body=sample["sample"])
    r = invoke("doctor", "--json")
    findings = json.loads(r.out)["findings"]
    assert any(f["check"] == "secret" and "NOTE-7K2M" in json.dumps(f) for f in findings), findings
    assert sample["secret"] not in r.out + r.err
