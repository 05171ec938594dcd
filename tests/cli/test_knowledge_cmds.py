"""`stele knowledge ...` through the real entry point: the lifecycle, its refusals, and the briefing."""
import json

from tests.helpers import invoke


def ok(*args: str) -> dict:
    r = invoke(*args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def briefing(*args: str) -> list[str]:
    return [b["key"] for b in ok("context", *args)["parts"]["briefing"]]


def test_lifecycle_through_the_cli_and_only_current_documents_are_briefed(repo):
    old = ok("knowledge", "draft", "How login works", "--body", "Login checks the limiter first.")["id"]
    assert ok("show", old)["status"] == "draft" and briefing() == []
    r = invoke("knowledge", "promote", old)
    assert r.code == 1 and f"`promote` is not allowed for {old}: it is a draft that has not been reviewed" in r.err
    assert ok("knowledge", "review", old, "--note", "read it against src/auth.py")["status"] == "reviewed"
    assert briefing() == []
    assert ok("knowledge", "promote", old)["status"] == "current"
    assert briefing() == [old]
    r = invoke("edit", old, "--body", "changed in place")
    assert r.code == 1 and "is current knowledge and is not edited in place" in r.err

    new = ok("knowledge", "draft", "How login works, v2", "--body", "Login checks the limiter, then MFA.")["id"]
    r = invoke("knowledge", "supersede", old, "--with", new)
    assert r.code == 1 and f"is not allowed for {new}: {new} is a draft that has not been reviewed" in r.err
    ok("knowledge", "review", new, "--note", "ok")
    assert ok("knowledge", "supersede", old, "--with", new) == {"current": new, "superseded": old}
    assert briefing() == [new]
    assert ok("show", old)["status"] == "superseded"  # still readable


def test_export_and_distill_commands(repo, tmp_path):
    doc = ok("knowledge", "draft", "Runbook", "--body", "Restart the worker.")["id"]
    r = invoke("knowledge", "export", doc, str(tmp_path / "runbook.md"))
    assert r.code == 0 and (tmp_path / "runbook.md").read_text().endswith("# Runbook\n\nRestart the worker.\n")
    task = ok("remember", "Fix the worker restart.", "--kind", "task")["id"]
    r = invoke("knowledge", "distill", task)
    assert r.code == 1 and "only a finished (done) task is distilled" in r.err
    invoke("edit", task, "--status", "done")
    out = ok("knowledge", "distill", task)
    assert out["status"] == "draft" and out["source"] == [task]
