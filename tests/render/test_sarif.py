"""`stele doctor --format sarif`: valid SARIF 2.1.0 by the official schema, one result per finding.

The schema is vendored (tests/fixtures/sarif/, with its source and license) and checked with its
`uri` and `uri-reference` formats, so an unencoded file name fails here as it would at upload.
"""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from stele.doctor import run as doctor_run
from stele.doctor.findings import CHECKS, SUMMARIES, Finding, Report
from stele.project import Project
from stele.render import sarif as out
from tests.factfiles import AUTH_PY, commit, write, write_fact
from tests.helpers import git, invoke

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    # FormatChecker() checks every format it knows, not only draft 4's (which lacks uri-reference)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def errors(validator: jsonschema.Draft4Validator, log: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]


def one_of_each() -> Report:
    return Report([Finding(check, f"docs/memory/{check}.md", i + 1, f"{check} fired", f"DEC-{i:04d}")
                   for i, check in enumerate(CHECKS)])


def test_the_vendored_schema_is_the_official_one():
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert schema["id"] == out.SCHEMA
    assert schema["properties"]["version"]["enum"] == [out.VERSION]


def test_every_check_is_a_rule_and_every_finding_one_result(validator):
    report = one_of_each()
    log = json.loads(out.sarif(report))
    assert errors(validator, log) == []
    assert log["$schema"] == out.SCHEMA and log["version"] == "2.1.0"
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "stele" and driver["version"] == driver["semanticVersion"]
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    fact = next(f.fact for f in report.findings if f.check == "code-check")
    assert [r["id"] for r in rules] == [*CHECKS, f"code-check/{fact}"]  # a code check: one rule per fact
    assert all(r["shortDescription"]["text"] == SUMMARIES[r["id"]] for r in rules[:len(CHECKS)])
    assert all(r["defaultConfiguration"]["level"] == CHECKS[r["id"].split("/")[0]] for r in rules)
    results = run["results"]
    assert len(results) == len(report.findings)
    for finding, result in zip(report.findings, results, strict=True):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == out.rule_id(finding.check, finding.fact)
        assert result["level"] == finding.severity
        assert result["message"]["text"] == finding.message
        [location] = result["locations"]
        assert location["physicalLocation"] == {
            "artifactLocation": {"uri": finding.path, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": finding.line}}
        assert result["properties"] == {"fact": finding.fact}


def test_every_check_has_a_one_line_summary():
    assert list(SUMMARIES) == list(CHECKS)
    assert all(s and "\n" not in s and len(s) <= 100 for s in SUMMARIES.values())


def test_file_names_are_percent_encoded_and_missing_locations_left_out(validator):
    report = Report([
        Finding("secret", "docs/memory/a b#1%.md", 3, "a token"),
        Finding("store", "", 0, "the store is unreachable"),       # no file: no location
        Finding("schema", "docs/memory/x.md", 0, "no line known"),  # no line: no region
        Finding("expired", "/elsewhere/x.md", 2, "outside the checkout"),
    ])
    log = json.loads(out.sarif(report))
    assert errors(validator, log) == []
    encoded, no_file, no_line, outside = log["runs"][0]["results"]
    assert encoded["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "docs/memory/a%20b%231%25.md"
    assert "locations" not in no_file
    assert no_line["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "docs/memory/x.md", "uriBaseId": "%SRCROOT%"}}
    assert outside["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "file:///elsewhere/x.md"}


def test_the_validator_rejects_what_code_scanning_would(validator):
    """The check can fail: a level SARIF has no name for, a line 0 region, an unencoded URI."""
    log = out.log(Report([Finding("secret", "docs/memory/a.md", 1, "a token")]))
    result = log["runs"][0]["results"][0]
    result["level"] = "fatal"
    result["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "a b#c#d.md"
    found = errors(validator, log)
    assert any("'fatal' is not one of" in e for e in found)
    assert any("startLine: 0 is less than the minimum of 1" in e for e in found)
    assert any("is not a 'uri-reference'" in e for e in found)


def test_terminal_escapes_in_a_message_are_neutralized():
    report = Report([Finding("escape-sequence", "docs/memory/a.md", 1, "title \x1b]0;pwned\x07 set")])
    text = out.sarif(report)
    assert "\x1b" not in text and "\\u001b" not in text and "pwned" in text


def test_a_real_doctor_run_and_the_command_line(validator, repo, tmp_path):
    """Real findings from a real repository, through `stele doctor --format sarif` and --sarif-output."""
    write(repo, "src/auth.py", AUTH_PY)
    rel = write_fact(repo, "RISK-AAAA", "risk", anchors=["src/auth.py::RateLimiter.check"])
    write_fact(repo, "DEC-AAAA", "decision", expires="2026-01-01")
    commit(repo, "init")
    git(repo, "rm", "-q", "src/auth.py")
    report = doctor_run.run(Project(repo))
    assert {f.check for f in report.findings} == {"broken-anchor", "expired"}

    r = invoke("doctor", "--format", "sarif")
    assert r.code == 1, r.err  # the exit code is the same whatever the format
    log = json.loads(r.out)
    assert errors(validator, log) == []
    assert log == out.log(report)
    by_rule = {x["ruleId"]: x for x in log["runs"][0]["results"]}
    anchor = by_rule["broken-anchor"]["locations"][0]["physicalLocation"]
    assert anchor == {"artifactLocation": {"uri": rel, "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 6}}
    assert by_rule["expired"]["level"] == "warning"

    target = tmp_path / "reports" / "stele.sarif"
    both = invoke("doctor", "--format", "text", "--sarif-output", str(target))
    assert both.code == 1 and both.out.endswith("stele doctor: 1 error, 1 warning\n")
    assert json.loads(target.read_text(encoding="utf-8")) == log


def test_an_unwritable_sarif_output_is_one_line(repo):
    (repo / "taken").write_text("a file, not a folder\n")
    r = invoke("doctor", "--sarif-output", "taken/stele.sarif")
    assert r.code == 1 and r.err.count("\n") == 1
    assert "--sarif-output taken/stele.sarif: cannot write it" in r.err


CHECKED = "import os\n\n\ndef login():\n    os.system('kubectl login --issuer dex')\n"


def test_a_code_check_is_a_rule_of_its_own_fact_pointing_at_the_line(validator, repo):
    """`stele doctor --check-code --format sarif`: each violated fact is a rule `code-check/<ID>` (stable:
    the same id whatever else is found), each violation a result on its file and line citing the fact;
    the level follows the fact's `enforce`."""
    write(repo, "src/login.py", CHECKED)
    write_fact(repo, "CON-AAAA", "constraint", title="Dex is for web UIs only", anchors=["src/login.py"],
               check={"forbid": "kubectl .*dex", "enforce": "deny"})
    write_fact(repo, "INS-BBBB", "instruction", title="No shelling out", anchors=["src/*.py"],
               check={"forbid": r"os\.system"})
    commit(repo, "init")
    r = invoke("doctor", "--check-code", "--format", "sarif")
    assert r.code == 1, r.err  # the deny check's violation is an error
    log = json.loads(r.out)
    assert errors(validator, log) == []
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [x["id"] for x in rules[len(CHECKS):]] == ["code-check/CON-AAAA", "code-check/INS-BBBB"]
    assert rules[len(CHECKS)]["shortDescription"]["text"] == "CON-AAAA: Dex is for web UIs only"
    by_rule = {x["ruleId"]: x for x in run["results"]}
    con, ins = by_rule["code-check/CON-AAAA"], by_rule["code-check/INS-BBBB"]
    assert (con["level"], ins["level"]) == ("error", "warning")
    assert con["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/login.py", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 5}}
    assert con["properties"] == {"fact": "CON-AAAA"}
    assert "CON-AAAA (Dex is for web UIs only)" in con["message"]["text"]
    assert rules[con["ruleIndex"]]["id"] == con["ruleId"]
    assert invoke("doctor", "--format", "sarif").code == 0  # without --check-code the code is not checked


def test_check_code_with_a_base_looks_only_at_the_lines_added_since(repo):
    write(repo, "src/login.py", CHECKED)
    write_fact(repo, "CON-AAAA", "constraint", anchors=["src/login.py"], check={"forbid": "kubectl"})
    base = commit(repo, "init")
    write(repo, "src/login.py", CHECKED + "\n\ndef other():\n    return 1\n")
    commit(repo, "unrelated")
    assert invoke("doctor", "--check-code", "--base", base, "--strict").code == 0
    r = invoke("doctor", "--check-code", "--strict", "--json")
    assert r.code == 1 and json.loads(r.out)["findings"][0]["line"] == 5
    write(repo, "src/login.py", CHECKED + "kubectl again\n")
    r = invoke("doctor", "--check-code", "--base", base, "--json")
    [finding] = json.loads(r.out)["findings"]
    assert (finding["check"], finding["line"], finding["severity"]) == ("code-check", 6, "warning")
    assert r.code == 0  # a warn check's violation fails only under --strict


def test_a_structural_check_is_a_result_on_the_line_the_structure_starts(validator, repo):
    pytest.importorskip("ast_grep_py", reason="the optional extra stele[checks] (ast-grep-py) is not installed")
    write(repo, "src/login.py", CHECKED)
    write_fact(repo, "CON-AAAA", "constraint", title="No shelling out", anchors=["src/login.py"],
               check={"ast": "os.system($$$)", "enforce": "deny"})
    base = commit(repo, "init")
    assert invoke("doctor", "--check-code", "--base", base, "--strict").code == 0  # nothing added yet
    write(repo, "src/login.py", CHECKED + "\n\ndef other():\n    # os.system( is named in a comment\n"
                                          "    return os.system(\n        'ls')\n")
    r = invoke("doctor", "--check-code", "--base", base, "--format", "sarif")
    assert r.code == 1, r.err
    log = json.loads(r.out)
    assert errors(validator, log) == []
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "code-check/CON-AAAA" and result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 10}
    assert "matches the structure `os.system($$$)`" in result["message"]["text"]
