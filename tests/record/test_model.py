import datetime as dt

import pytest

from stele.record.model import Fact, anchor_problem, parse_fact

GOOD = """\
---
id: DEC-4F7K
kind: decision
title: Rate limiting sits in front of auth
status: current
delivery: ranked
priority: high
anchors:
  - src/auth.py::RateLimiter.check
links:
  caused-by: [RISK-2M9Q]
tags: [auth]
created: 2025-11-04
verified: 2026-01-10
verified_at: 9f3c2e1
review_after: 2026-05-01
expires: 2026-12-31
retire_when: the v2 gateway replaces this middleware
source: [TASK-418]
---
Moving it behind auth let floods reach bcrypt. See TASK-418 and DEC-4F7K.
"""


def test_a_valid_fact_parses_every_field():
    fact, problems = parse_fact(GOOD, "docs/memory/d.md")
    assert problems == []
    assert fact.id == "DEC-4F7K" and fact.kind == "decision" and fact.priority == "high"
    assert fact.links == {"caused-by": ["RISK-2M9Q"]}
    assert fact.created == dt.date(2025, 11, 4) and fact.expires == dt.date(2026, 12, 31)
    assert fact.verified_at == "9f3c2e1"
    assert fact.mentions == ["TASK-418"]  # its own id is not a mention
    assert fact.summary_text == "Moving it behind auth let floods reach bcrypt."
    assert fact.render() == GOOD


def _problems(replace: str, with_: str) -> list[str]:
    text = GOOD.replace(replace, with_)
    assert text != GOOD, replace
    _, problems = parse_fact(text, "f.md")
    return [str(p) for p in problems]


@pytest.mark.parametrize("old,new,expected", [
    ("kind: decision", "kind: decree", "f.md:3: `kind` 'decree' is not a kind"),
    ("id: DEC-4F7K", "id: RISK-4F7K", "f.md:2: id RISK-4F7K does not match kind decision"),
    ("id: DEC-4F7K", "id: dec 4f7k", "f.md:2: `id` 'dec 4f7k' is not PREFIX-SUFFIX"),
    ("status: current", "status: open", "f.md:5: `status` 'open' is not valid for a decision"),
    ("delivery: ranked", "delivery: sometimes", "f.md:6: `delivery` 'sometimes'"),
    ("priority: high", "priority: urgent", "f.md:7: `priority` 'urgent'"),
    ("created: 2025-11-04", "created: 2025-13-04", "f.md:13: `created` '2025-13-04' is not a date"),
    ("expires: 2026-12-31", "expires: next year", "f.md:17: `expires` 'next year' is not a date"),
    ("  - src/auth.py::RateLimiter.check", "  - /etc/passwd", "f.md:9: anchor '/etc/passwd': absolute path"),
    ("  - src/auth.py::RateLimiter.check", "  - ../x.py", "f.md:9: anchor '../x.py'"),
    ("  caused-by: [RISK-2M9Q]", "  because-of: [RISK-2M9Q]", "f.md:11: unknown relation 'because-of'"),
    ("  caused-by: [RISK-2M9Q]", "  caused-by: [not an id]", "f.md:11: link caused-by -> 'not an id'"),
    ("title: Rate limiting sits in front of auth", "title: " + "x" * 121, "f.md:4: `title` is 121 characters"),
    ("tags: [auth]", "tags: {a: b}", "f.md:12: `tags` must be a list of strings"),
])
def test_each_validation_names_the_line(old, new, expected):
    problems = _problems(old, new)
    assert any(p.startswith(expected) for p in problems), problems


def test_all_problems_of_a_file_are_reported_at_once():
    text = GOOD.replace("kind: decision", "kind: decree").replace("created: 2025-11-04", "created: soon")
    text = text.replace("priority: high", "priority: urgent")
    _, problems = parse_fact(text, "f.md")
    assert len(problems) == 3


def test_missing_required_fields():
    _, problems = parse_fact("---\nstatus: current\n---\nbody\n", "f.md")
    messages = " ".join(p.message for p in problems)
    assert "missing `id`" in messages and "missing `kind`" in messages and "missing `title`" in messages


def test_task_statuses_and_defaults():
    fact, problems = parse_fact("---\nid: TASK-418\nkind: task\ntitle: Do it\n---\nx\n", "t.md")
    assert problems == [] and fact.status == "open" and fact.delivery == "ranked"
    ins, _ = parse_fact("---\nid: INS-AAAA\nkind: instruction\ntitle: Rule\n---\nx\n", "i.md")
    assert ins.delivery == "always" and ins.status == "current"


def test_a_single_string_is_accepted_where_a_list_is_expected_and_kept_as_written():
    text = GOOD.replace("tags: [auth]", "tags: auth")
    fact, problems = parse_fact(text, "f.md")
    assert problems == [] and fact.tags == ["auth"]
    assert fact.render() == text


def test_to_meta_keeps_unknown_keys_and_new_facts_spell_out_status():
    text = GOOD.replace("source: [TASK-418]", "source: [TASK-418]\nowner: team-payments")
    fact, _ = parse_fact(text, "f.md")
    fact.title = "Changed"
    assert fact.to_meta()["owner"] == "team-payments"
    assert "title: Changed\n" in fact.render()
    new = Fact(id="RISK-2M9Q", kind="risk", title="t", body="b\n")
    assert new.to_meta()["status"] == "current" and "priority" not in new.to_meta()


@pytest.mark.parametrize("anchor,ok", [
    ("src/a.py", True), ("src/**/*.py", True), ("src/a.py::Cls.meth", True), ("a.go::(*S).Put", False),
    ("", False), ("C:\\x.py", False), ("src/a.py::", False),
])
def test_anchor_syntax(anchor, ok):
    assert (anchor_problem(anchor) is None) == ok


@pytest.mark.parametrize("title", ["Line one\nline two", "Carriage\rreturn", "Unicode\u2028separator"])
def test_a_multi_line_title_is_refused(title):
    from stele.record.model import value_problem

    assert "one line" in (value_problem("title", title) or "")
    assert value_problem("title", "One line") is None


CHECKED = """\
---
id: CON-4F7K
kind: constraint
title: Dex is for web UIs only
anchors: [ops/**/*.sh]
check:
  - forbid: 'kubectl .*dex'   # the login we do not allow
    enforce: deny
  - require: '(unclosed'
---
Never use Dex for Kubernetes authentication.
"""


def test_check_keeps_the_valid_part_and_a_bad_pattern_is_a_warning_naming_the_line():
    from stele.anchors.codecheck import Check

    fact, problems = parse_fact(CHECKED, "docs/memory/constraints/CON-4F7K.md")
    assert fact is not None and fact.checks == [Check("forbid", "kubectl .*dex", "deny")]
    [p] = problems
    assert (p.severity, p.check, p.line) == ("warning", "bad-check", 6)
    assert str(p).startswith("docs/memory/constraints/CON-4F7K.md:6: `check` item 2 `require` '(unclosed' is "
                             "not a valid regular expression")
    assert fact.as_dict()["check"] == [{"forbid": "kubectl .*dex", "enforce": "deny"}]


def test_check_round_trips_as_written_until_it_changes():
    from stele.anchors.codecheck import Check

    fact, _ = parse_fact(CHECKED, "x.md")
    assert fact is not None
    assert "# the login we do not allow" in fact.render() and "(unclosed" in fact.render()
    fact.checks = [Check("forbid", "kubectl", "warn", "why")]
    again, problems = parse_fact(fact.render(), "x.md")
    assert problems == [] and again is not None and again.checks == fact.checks
    assert "check:\n  forbid: kubectl\n  message: why\n" in fact.render()


def test_check_on_a_kind_that_is_not_a_rule_is_ignored_with_a_warning():
    text = CHECKED.replace("CON-4F7K", "LSN-4F7K").replace("constraint", "lesson")
    fact, problems = parse_fact(text, "x.md")
    assert fact is not None and fact.checks == []
    assert any("evaluated only on constraint, instruction, decision facts, not on a lesson" in p.message
               for p in problems)
