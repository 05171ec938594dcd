"""`stele install --check`: whether each installed harness's hooks would run, read without changing anything."""
import json

from stele.install.check import check
from stele.project import Project
from tests.helpers import invoke


def levels(repo, harness):
    return [(f.level, f.message) for f in check(Project(repo)) if f.harness == harness]


def test_a_fresh_install_reports_each_harness_and_its_trust_step(repo, monkeypatch, tmp_path):
    assert invoke("install", "claude", "codex", "gemini", "copilot").code == 0
    found = {f.harness for f in check(Project(repo))}
    assert found == {"stele", "claude", "codex", "gemini", "copilot", "resident"}
    assert any(lvl == "warning" and "trusted folder" in m for lvl, m in levels(repo, "gemini"))
    trusted = tmp_path / "trusted.json"
    trusted.write_text(json.dumps({str(repo): "TRUST_FOLDER"}))
    monkeypatch.setenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", str(trusted))
    assert any(lvl == "ok" and "trusted" in m for lvl, m in levels(repo, "gemini"))
    r = invoke("install", "--check")
    assert r.code == 0 and "codex: note:" in r.out and "/hooks" in r.out


def test_what_keeps_hooks_from_running_is_an_error_and_exits_1(repo):
    assert invoke("install", "gemini", "claude").code == 0
    path = repo / ".gemini/settings.json"
    data = json.loads(path.read_text())
    data["hooks"]["SessionStart"][0]["matcher"] = "startup|resume|clear"  # what older installs wrote
    data["hooksConfig"] = {"enabled": False}
    path.write_text(json.dumps(data))
    settings = repo / ".claude/settings.json"
    claude = json.loads(settings.read_text())
    claude["hooks"]["Stop"][0]["hooks"][0]["command"] = "stele hook stop --harness claude"  # bare, old form
    claude["disableAllHooks"] = True
    settings.write_text(json.dumps(claude))
    messages = " | ".join(m for _, m in levels(repo, "gemini") + levels(repo, "claude"))
    assert "never fires" in messages and "hooksConfig.enabled is false" in messages
    assert "bare `stele hook`" in messages and "disableAllHooks" in messages
    r = invoke("install", "--check", "--json")
    assert r.code == 1 and {f["level"] for f in json.loads(r.out)["findings"]} >= {"error", "ok"}
    (repo / ".codex").mkdir()
    (repo / ".codex/hooks.json").write_text("{broken")
    assert any(lvl == "error" and "not valid JSON" in m for lvl, m in levels(repo, "codex"))


def test_the_check_says_whether_the_resident_server_runs_and_whether_it_would_pay(repo, monkeypatch):
    assert invoke("install", "claude").code == 0
    monkeypatch.delenv("STELE_RESIDENT")  # conftest's 0: the default is what this reads first
    (message,) = [m for _, m in levels(repo, "resident")]
    assert message.startswith("hooks run in their own process (hooks.resident is off") and "would not pay" in message
    monkeypatch.setattr("stele.install.check.RESIDENT_PAYS_FACTS", 0)
    (message,) = [m for _, m in levels(repo, "resident")]
    assert "would cut the prompt hook" in message and "inotify" in message
    monkeypatch.setenv("STELE_RESIDENT", "1")
    (message,) = [m for _, m in levels(repo, "resident")]
    assert message.startswith("hooks are answered by a resident server (STELE_RESIDENT=1)")
    monkeypatch.setenv("CI", "true")  # never in CI, whatever the setting
    (message,) = [m for _, m in levels(repo, "resident")]
    assert message.startswith("hooks run in their own process (CI is set")
