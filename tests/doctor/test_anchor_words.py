"""An anchor that resolves only by word matching is reported, and a path git never held is said to
have never existed (not "gone")."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import git, invoke


def _findings(check: str) -> list[dict]:
    return [f for f in json.loads(invoke("doctor", "--json").out)["findings"] if f["check"] == check]


def test_a_symbol_found_only_as_a_word_is_reported(repo: Path):
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs" / "runbook.md").write_text("# Runbook\n\nRotate the TTL before failover.\n", encoding="utf-8")
    r = invoke("remember", "Failover waits for the TTL.", "--kind", "fyi", "--anchor", "docs/runbook.md::failover")
    assert r.code == 0 and "found only as a word on line 3" in r.err
    found = _findings("word-anchor")
    assert len(found) == 1 and "resolves only by the word 'failover' (line 3 of docs/runbook.md)" in found[0]["message"]


def test_terraform_anchors_are_definitions_not_words(repo: Path):
    (repo / "main.tf").write_text('module "vpc" {\n  tags = ["eks"]\n}\n\nmodule "eks" {\n  source = "x"\n}\n',
                                  encoding="utf-8")
    r = invoke("remember", "The EKS module pins 20.x.", "--kind", "decision", "--anchor", "main.tf::module.eks",
               "--anchor", "main.tf::eks", "--json")
    assert r.code == 0 and json.loads(r.out)["warnings"] == []
    assert _findings("word-anchor") == [] and _findings("broken-anchor") == []


def test_a_path_that_never_existed_is_called_so(repo: Path):
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs" / "real.md").write_text("x\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "real")
    assert invoke("remember", "A typo'd anchor.", "--kind", "fyi", "--anchor", "docs/raal.md").code == 0
    (repo / "docs" / "gone.md").write_text("x\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gone")
    assert invoke("remember", "An anchor whose file was deleted.", "--kind", "fyi", "--anchor", "docs/gone.md").code == 0
    git(repo, "rm", "-q", "docs/gone.md")
    git(repo, "commit", "-qm", "rm")
    messages = sorted(f["message"] for f in _findings("broken-anchor"))
    assert "docs/raal.md does not exist and never did in git history (a typo?)" in messages[1]
    assert "docs/gone.md is gone and no git rename explains it" in messages[0]


def test_an_anchor_out_of_the_repository_is_a_schema_error_and_never_read(repo: Path, tmp_path_factory):
    """`../x.txt::WORD` is refused as a schema error, yet doctor still resolved it: the word-anchor
    finding said on which line of a file outside the repository a word stands (an oracle on a CI
    runner's files for anyone who can open a pull request)."""
    from tests.factfiles import write_fact

    outside = tmp_path_factory.mktemp("outside") / "notes.txt"
    outside.write_text("first\nSECRETWORD here\n", encoding="utf-8")
    up = "../" * (len(repo.resolve().parts) - 1)  # from the repository to the root, then down to the file
    anchors = [f"{up}{str(outside).lstrip('/')}::SECRETWORD", f"{outside}::SECRETWORD"]
    write_fact(repo, "FYI-0A7B", "fyi", title="Outside", body="About outside.", anchors=anchors)
    out = invoke("doctor", "--json").out
    assert "SECRETWORD" in out  # the schema errors quote the anchors
    assert "line 2 of" not in out and "word-anchor" not in out
