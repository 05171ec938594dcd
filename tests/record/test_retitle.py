"""`stele edit --title` renames the fact's file (with `git mv` when tracked) and keeps its links."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import git, invoke


def _remember(*args: str) -> dict:
    r = invoke("remember", *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_a_new_title_renames_the_file_and_links_still_hold(repo: Path):
    risk = _remember("A long TTL keeps failed origins in rotation.", "--kind", "risk")
    dec = _remember("CNAME TTL is 300 seconds at the CDN.", "--kind", "decision",
                    "--title", "The CNAME TTL is 300 seconds", "--link", f"caused-by:{risk['id']}")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "facts")
    old = dec["path"]
    assert old.endswith(f"{dec['id']}-the-cname-ttl-is-300-seconds.md")
    r = invoke("edit", dec["id"], "--title", "The CNAME TTL is 60 seconds", "--body", "CNAME TTL is 60 seconds.")
    assert r.code == 0, r.err
    new = old.replace("300-seconds", "60-seconds")
    assert not (repo / old).exists() and (repo / new).exists()
    assert f"{new}" in r.out
    assert "R  " + old + " -> " + new in git(repo, "status", "--porcelain") or \
        f"RM {old} -> {new}" in git(repo, "status", "--porcelain")  # git follows it as a rename
    shown = json.loads(invoke("show", risk["id"], "--json").out)
    assert dec["id"] in json.dumps(shown)  # the link from the renamed fact still reaches the risk
    assert json.loads(invoke("show", dec["id"], "--json").out)["path"] == new
    assert invoke("doctor").code == 0


def test_an_untracked_fact_is_renamed_and_a_hand_named_file_keeps_its_name(repo: Path):
    dec = _remember("Queue retries back off.", "--kind", "decision")
    assert invoke("edit", dec["id"], "--title", "Retries back off with jitter").code == 0
    assert (repo / dec["path"]).parent.joinpath(f"{dec['id']}-retries-back-off-with-jitter.md").exists()
    hand = repo / "docs" / "memory" / "decisions" / "queue-policy.md"
    (repo / dec["path"]).parent.joinpath(f"{dec['id']}-retries-back-off-with-jitter.md").rename(hand)
    assert invoke("edit", dec["id"], "--title", "Retries back off with full jitter").code == 0
    assert hand.exists()
