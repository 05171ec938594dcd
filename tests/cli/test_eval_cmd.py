"""`stele eval` through the real entry point: the JSON contract, the CI gate, the starter file and
the recall gap, and one clear line for every misuse."""
import json

import pytest

from tests.fakes import fake_model  # noqa: F401  (fixture)
from tests.helpers import invoke, write_fact


@pytest.fixture
def record(repo, fake_model):
    write_fact(repo, "DEC-AGHA", "decision", "Payment retries back off exponentially, at most 3 attempts",
               "Retry a failed charge with jittered backoff.")
    (repo / "cases.yaml").write_text("""
today: 2026-11-29
queries:
  - {id: lex-1, type: lexical, prompt: "why do payment retries back off exponentially?", expect: [DEC-AGHA]}
  - {id: lex-2, type: lexical, prompt: "why do payment retries back off exponentially?", expect: [DEC-NOPE]}
  - {id: off-1, type: offtopic, prompt: "write a haiku about autumn leaves drifting across a quiet pond"}
""")
    return repo


def test_json_has_the_documented_shape_and_min_gates(record):
    r = invoke("eval", "cases.yaml", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert list(data)[:5] == ["passed", "total", "by_type", "mean_window", "elapsed_ms"]
    assert data["total"] == 3 and data["by_type"]["lexical"] == {"passed": 1, "total": 2}
    miss = next(c for c in data["cases"] if c["id"] == "lex-2")
    assert miss["fails"] == ["missing DEC-NOPE"] and "not in the index" in miss["why"][0]
    assert invoke("eval", "cases.yaml", "--min", "30").code == 0
    gated = invoke("eval", "cases.yaml", "--min", "90")
    assert gated.code == 1 and "under --min 90" in gated.err
    text = invoke("eval", "cases.yaml", "--only", "lex")
    assert text.out.splitlines()[-1].startswith("eval cases.yaml: passed 1/2 (50%), mean window")


@pytest.mark.parametrize("args,message", [
    ((), "give a case file, --init, or --recall-gap"),
    (("cases.yaml", "--init"), "give a case file, --init, or --recall-gap"),
    (("cases.yaml", "--since", "HEAD"), "--since only applies to --recall-gap"),
    (("cases.yaml", "--min", "120"), "--min 120 is not a percentage"),
    (("missing.yaml",), "missing.yaml: cannot read the case file"),
    (("cases.yaml", "--only", "zzz"), "no case in cases.yaml has an id or type starting with 'zzz'"),
])
def test_misuse_is_one_line(record, args, message):
    r = invoke("eval", *args)
    assert r.code in (1, 2) and message in r.err and r.err.strip().count("\n") == 0, r.err


def test_init_writes_a_starter_and_refuses_to_overwrite(record):
    r = invoke("eval", "--init")
    assert r.code == 0 and "wrote docs/memory/eval.yaml" in r.out
    assert invoke("eval", "docs/memory/eval.yaml").code == 0
    again = invoke("eval", "--init")
    assert again.code == 1 and "--force" in again.err
    assert invoke("eval", "--init", "--force").code == 0


def test_recall_gap_json_shape(record):
    data = json.loads(invoke("eval", "--recall-gap", "--json").out)
    assert data == {"sessions": 0, "edits": 0, "anchored_edits": 0, "missed": [], "gap": 0.0, "since": None}
