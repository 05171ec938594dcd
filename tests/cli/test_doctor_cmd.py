"""`stele doctor` through the real entry point: formats, exit codes, `--fix`."""
import json

from tests.factfiles import AUTH_PY, commit, write, write_fact
from tests.helpers import git, invoke


def test_acceptance_rename_is_reported_and_fixed(repo):
    write(repo, "src/auth.py", AUTH_PY)
    rel = write_fact(repo, "RISK-AAAA", "risk", anchors=["src/auth.py::RateLimiter.check"])
    commit(repo, "init")
    assert invoke("doctor").out == "stele doctor: no problems\n"
    (repo / "src/security").mkdir()
    git(repo, "mv", "src/auth.py", "src/security/auth.py")
    r = invoke("doctor")
    assert r.code == 1
    assert (f"{rel}:6: error: anchor src/auth.py::RateLimiter.check no longer resolves: src/auth.py is gone: "
            "git renamed it to src/security/auth.py in uncommitted changes") in r.out
    dry = invoke("doctor", "--fix", "--dry-run")
    assert dry.code == 0 and "+  - src/security/auth.py::RateLimiter.check" in dry.out
    assert "src/auth.py::RateLimiter.check" in (repo / rel).read_text()
    fixed = invoke("doctor", "--fix")
    assert fixed.code == 0, fixed.out + fixed.err
    assert "-  - src/auth.py::RateLimiter.check\n+  - src/security/auth.py::RateLimiter.check" in fixed.out
    assert fixed.out.endswith("stele doctor: no problems\n")
    assert "  - src/security/auth.py::RateLimiter.check\n" in (repo / rel).read_text()


def test_json_strict_and_github_with_a_step_summary(repo, tmp_path, monkeypatch):
    write_fact(repo, "DEC-AAAA", "decision", expires="2026-01-01")
    r = invoke("doctor", "--json")
    data = json.loads(r.out)
    assert r.code == 0 and (data["errors"], data["warnings"]) == (0, 1)
    assert data["findings"][0]["check"] == "expired" and data["findings"][0]["severity"] == "warning"
    assert invoke("doctor", "--strict").code == 1

    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    r = invoke("doctor")  # auto: github format under GitHub Actions
    assert r.out.startswith("::warning file=docs/memory/decisions/DEC-AAAA.md,line=5,title=stele expired::")
    text = summary.read_text()
    assert text.startswith("earlier step\n## stele doctor\n") and "`expired`" in text
    text_out = invoke("doctor", "--format", "text").out
    assert text_out.startswith("docs/memory/decisions/DEC-AAAA.md:5: warning:")


def test_doctor_without_a_memory_folder_says_what_to_do(plain_repo):
    r = invoke("doctor")
    assert r.code == 1 and "run `stele init` first" in r.err
