"""`stele brief` through the real entry point."""
import json

from tests.helpers import invoke, write_sample_record


def test_brief_text_json_and_errors(repo):
    write_sample_record(repo)
    r = invoke("brief", "how do we order the rate limiter and auth?")
    assert r.code == 0 and r.out.startswith("Briefing on") and "RISK-0007" in r.out and len(r.out) <= 2000
    data = json.loads(invoke("brief", "how do we order the rate limiter and auth?", "--json").out)
    assert data["risks"] == ["RISK-0007"] and {"id", "kind", "title", "via"} <= set(data["points"][0])
    bad = invoke("brief", "  ")
    assert bad.code == 2 and "question is empty" in bad.err
    before = sorted(p.as_posix() for p in (repo / "docs").rglob("*"))
    invoke("brief", "anything at all about billing")
    assert sorted(p.as_posix() for p in (repo / "docs").rglob("*")) == before
