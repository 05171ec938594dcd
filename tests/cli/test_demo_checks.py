"""Issue 29's acceptance on the demo: CON-X1MC (the console works air-gapped) carries a `check:` that
forbids third-party CDN URLs in the console's code. A staged change that adds one is blocked by the
pre-commit hook under --strict, naming the fact and the line; a clean change passes; and the violation
is a result of `stele doctor --check-code --format sarif` that validates against SARIF 2.1.0."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from stele.record.scaffold import example_repository as build
from tests.helpers import git, invoke

TSX = "web/src/pages/TagDetail.tsx"
SCHEMA_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
CDN = '      <link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Inter" />'


@pytest.fixture
def demo(tmp_path, monkeypatch):
    root = build(tmp_path / "harbor")
    monkeypatch.chdir(root)
    return root


def add_after_return(root: Path, line: str) -> int:
    """Insert `line` after `return (` in TagDetail.tsx; the line number it lands on."""
    path = root / TSX
    lines = path.read_text(encoding="utf-8").split("\n")
    at = lines.index("  return (") + 1
    lines.insert(at + 1, line)
    path.write_text("\n".join(lines), encoding="utf-8")
    return at + 2


def test_the_demo_record_is_clean_and_its_code_respects_the_check(demo):
    r = invoke("doctor", "--check-code", "--json")
    assert r.code == 0, r.out
    assert not [f for f in json.loads(r.out)["findings"] if f["check"] in ("code-check", "bad-check")]
    from stele.project import Project
    from stele.record.load import load
    from stele.render.facts import fact_lines

    record = load(Project(demo))
    [line] = [x for x in fact_lines(record, record.get("CON-X1MC")) if x.startswith("check: ")]
    assert line.startswith("check: forbids /https?://(fonts") and "(deny): bundle it with Vite instead" in line


def test_a_staged_cdn_link_is_blocked_naming_the_fact_and_line_and_a_clean_change_passes(demo):
    line = add_after_return(demo, CDN)
    git(demo, "add", TSX)
    r = invoke("hook", "pre-commit", "--strict")
    assert r.code == 1
    assert "CON-X1MC constraint: The console must work air-gapped" in r.err
    assert f"{TSX}:{line}: adds `{CDN.strip()}`" in r.err
    assert "bundle it with Vite instead" in r.err
    git(demo, "checkout", "-q", "HEAD", "--", TSX)
    add_after_return(demo, '      <p className="hint">Layers are listed newest first.</p>')
    git(demo, "add", TSX)
    clean = invoke("hook", "pre-commit", "--strict")
    assert clean.code == 0, clean.err  # the check passes: CON-X1MC needs no `stele verify`
    assert "CON-X1MC" in clean.out


def test_the_violation_is_a_sarif_result_citing_the_fact_that_validates(demo):
    line = add_after_return(demo, CDN)
    r = invoke("doctor", "--check-code", "--base", "HEAD", "--format", "sarif")
    assert r.code == 1  # enforce: deny makes it an error
    log = json.loads(r.out)
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    assert [e.message for e in validator.iter_errors(log)] == []
    [result] = [x for x in log["runs"][0]["results"] if x["ruleId"].startswith("code-check/")]
    assert result["ruleId"] == "code-check/CON-X1MC" and result["level"] == "error"
    assert result["properties"] == {"fact": "CON-X1MC"}
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": TSX, "uriBaseId": "%SRCROOT%"}, "region": {"startLine": line}}
    rule = log["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["id"] == "code-check/CON-X1MC" and "air-gapped" in rule["shortDescription"]["text"]
