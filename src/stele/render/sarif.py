"""Doctor findings as SARIF 2.1.0, the log format code scanning (GitHub's and others') uploads.

One run, with every doctor check as a rule (in `CHECKS` order, so a rule's index never depends on
what was found), and one result per finding: the check as `ruleId`, the severity as `level`, and the
file and line as a physical location relative to the repository root (`%SRCROOT%`), which is what
GitHub needs to place an alert on a line. The output is built only from the report and the installed
package's metadata, so it is the same for the same record: no timestamps, no absolute paths, no
fingerprints (GitHub's upload action computes those from the files).

A violated fact check (`--check-code`) is a rule of its own, `code-check/<FACT-ID>`, appended after
the checks in fact id order: the ruleId is stable per fact (code scanning tracks an alert by it), and
the rule's description is the fact's title.

Validated against the official schema in tests/render/test_sarif.py; docs/doctor.md shows the upload.
"""
from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from ..doctor.findings import CHECKS, SUMMARIES, Finding, Report
from ..neutralize import neutralize_data

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"


def sarif(report: Report) -> str:
    """The SARIF log of one doctor run, as indented JSON with one trailing newline."""
    return json.dumps(neutralize_data(log(report)), indent=2, ensure_ascii=False) + "\n"


def log(report: Report) -> dict[str, Any]:
    version, home = _package()
    index = {check: i for i, check in enumerate(CHECKS)}
    driver: dict[str, Any] = {"name": "stele", "version": version, "semanticVersion": version}
    if home:  # no invented address when the package metadata cannot be read: the links are optional
        driver["informationUri"] = home
    driver["rules"] = [_rule(check, home) for check in CHECKS]
    for fact in sorted({f.fact for f in report.findings if f.check == "code-check" and f.fact}):
        index[rule_id("code-check", fact)] = len(driver["rules"])
        driver["rules"].append(_fact_rule(fact, report.titles.get(fact, fact), home))
    return {
        "$schema": SCHEMA,
        "version": VERSION,
        "runs": [{
            "tool": {"driver": driver},
            "results": [_result(f, index[rule_id(f.check, f.fact)]) for f in report.findings],
        }],
    }


def _rule(check: str, home: str | None) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": check,
        "name": "".join(word.capitalize() for word in check.split("-")),
        "shortDescription": {"text": SUMMARIES[check]},
    }
    if home:
        rule["helpUri"] = f"{home}/blob/main/docs/doctor.md#checks"
    rule["defaultConfiguration"] = {"level": CHECKS[check]}
    return rule


def rule_id(check: str, fact: str | None) -> str:
    """A finding's rule: its check, or for a code check `code-check/<FACT-ID>` (one rule per fact)."""
    return f"{check}/{fact}" if check == "code-check" and fact else check


def _fact_rule(fact: str, title: str, home: str | None) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": rule_id("code-check", fact),
        "name": "FactCheck" + "".join(part.capitalize() for part in fact.split("-")),
        "shortDescription": {"text": f"{fact}: {title}"},
        "fullDescription": {"text": f"Code anchored by {fact} breaks its check: {title}"},
    }
    if home:
        rule["helpUri"] = f"{home}/blob/main/docs/anchors.md#checks"
    rule["defaultConfiguration"] = {"level": CHECKS["code-check"]}
    rule["properties"] = {"fact": fact}
    return rule


def _result(f: Finding, rule_index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": rule_id(f.check, f.fact),
        "ruleIndex": rule_index,
        "level": f.severity,
        "message": {"text": f.message},
    }
    if f.path:
        physical: dict[str, Any] = {"artifactLocation": artifact(f.path)}
        if f.line >= 1:
            physical["region"] = {"startLine": f.line}
        result["locations"] = [{"physicalLocation": physical}]
    if f.fact:
        result["properties"] = {"fact": f.fact}
    return result


def artifact(path: str) -> dict[str, str]:
    """A finding's file as a SARIF artifact location: a URI reference relative to the repository root
    (percent-encoded: a space or `#` in a file name would otherwise end or break the URI), or a file
    URI for a path outside it."""
    posix = PurePosixPath(path)
    if posix.is_absolute():
        return {"uri": "file://" + quote(str(posix), safe="/")}
    return {"uri": quote(str(posix), safe="/"), "uriBaseId": SRCROOT}


def _package() -> tuple[str, str | None]:
    """The installed version and the project's repository (pyproject.toml's `[project.urls] Repository`,
    the one setting every address derives from: scripts/repository_url.py), None without metadata."""
    from importlib import metadata

    from .. import __version__

    try:
        meta = metadata.metadata("stele")
    except metadata.PackageNotFoundError:
        return __version__, None
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [] if ", " in u)
    home = urls.get("Repository")
    return meta["Version"] or __version__, home.rstrip("/") if home else None
