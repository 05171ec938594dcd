"""Doctor output for GitHub: workflow-command syntax, escaping, the 10-per-step limit, the summary."""
import re

from stele.doctor.findings import Finding, Report
from stele.render import findings as out

PROPERTY = r"[a-zA-Z]+=[^,:]*"
ANNOTATION = re.compile(rf"^::(error|warning|notice) ({PROPERTY}(?:,{PROPERTY})*)::([^\r\n]*)$")


def test_annotation_escapes_data_and_properties():
    f = Finding("broken-anchor", "docs/memory/a,b:c.md", 7, "100% broken\r\nnext: line, more")
    line = out.annotation(f)
    assert line == ("::error file=docs/memory/a%2Cb%3Ac.md,line=7,title=stele broken-anchor::"
                    "100%25 broken%0D%0Anext: line, more")
    m = ANNOTATION.match(line)
    assert m and dict(p.split("=", 1) for p in m.group(2).split(",")) == {
        "file": "docs/memory/a%2Cb%3Ac.md", "line": "7", "title": "stele broken-anchor"}


def test_only_ten_errors_and_ten_warnings_become_annotations_the_rest_go_to_the_summary():
    errors = [Finding("secret", f"e{i}.md", i + 1, f"error {i}") for i in range(12)]
    warnings = [Finding("expired", f"w{i}.md", 1, f"warning {i}") for i in range(11)]
    report = Report(errors + warnings)
    lines = out.github(report).splitlines()
    annotations = [x for x in lines if x.startswith("::")]
    assert all(ANNOTATION.match(x) for x in annotations)
    assert sum(x.startswith("::error") for x in annotations) == 10
    assert sum(x.startswith("::warning") for x in annotations) == 10
    assert "::notice title=stele doctor::3 more findings are listed in the job summary" in lines
    summary = out.summary(report)
    assert all(f"`e{i}.md:{i + 1}`" in summary for i in range(12)) and "`w10.md:1`" in summary
    assert summary.startswith("## stele doctor\n\nstele doctor: 12 errors, 11 warnings.")


def test_summary_cells_escape_pipes_and_stay_under_the_size_limit(monkeypatch):
    report = Report([Finding("secret", "a|b.md", 1, "x | y\nz")])
    assert "`a\\|b.md:1` | x \\| y z |" in out.summary(report)
    monkeypatch.setattr(out, "SUMMARY_MAX_BYTES", 300)
    big = Report([Finding("secret", f"f{i}.md", 1, "m" * 50) for i in range(20)])
    text = out.summary(big)
    assert len(text.encode()) < 500 and "rows cut to stay under GitHub's 1 MiB summary limit" in text


def test_text_and_an_empty_report():
    assert out.text(Report()) == "stele doctor: no problems\n"
    assert out.summary(Report()).startswith("## stele doctor\n\nstele doctor: no problems.")
    assert out.github(Report()) == "stele doctor: no problems\n"
