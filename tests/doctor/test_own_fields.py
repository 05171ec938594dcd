"""Stele's own bookkeeping is never read as a secret: the `fingerprints:` block it writes names an
anchor (a file whose name may hold a vendor word) and a hash of the code, which the assignment rule
of the redactor reads as `FASTLY_THING: <token>`."""
from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import invoke


def test_fingerprints_of_anchors_named_after_vendors_are_not_secrets(repo: Path):
    (repo / "docs").mkdir(exist_ok=True)
    for name in ("fastly-cname-ttl.md", "github-actions-runner-token.md", "slack-webhook-rotation.md"):
        (repo / "docs" / name).write_text(f"# {name}\n", encoding="utf-8")
    r = invoke("remember", "CNAME TTL is 300 seconds at the CDN.", "--kind", "decision",
               "--anchor", "docs/fastly-cname-ttl.md", "--anchor", "docs/github-actions-runner-token.md",
               "--anchor", "docs/slack-webhook-rotation.md")
    assert r.code == 0, r.err
    path = next((repo / "docs" / "memory").rglob("DEC-*.md"))
    assert "fingerprints:\n  docs/fastly-cname-ttl.md: " in path.read_text(encoding="utf-8")
    doctor = invoke("doctor")
    assert doctor.code == 0 and "credential" not in doctor.out + doctor.err, doctor.out + doctor.err


def test_a_real_token_beside_the_fingerprints_is_still_found(repo: Path):
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs" / "fastly.md").write_text("x\n", encoding="utf-8")
    assert invoke("remember", "The CDN purge key lives in the vault.", "--kind", "fyi",
                  "--anchor", "docs/fastly.md").code == 0
    path = next((repo / "docs" / "memory").rglob("FYI-*.md"))
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    path.write_text(path.read_text(encoding="utf-8") + f"\nThe old token was {token}.\n", encoding="utf-8")
    doctor = invoke("doctor", "--json")
    secrets = [(f["line"], f["message"].split(" in ")[0]) for f in json.loads(doctor.out)["findings"]
               if f["check"] == "secret"]
    body_line = path.read_text(encoding="utf-8").split("\n").index(f"The old token was {token}.") + 1
    assert secrets == [(body_line, "GitHub token")]
