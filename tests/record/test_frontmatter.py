from pathlib import Path

import pytest

from stele.record import frontmatter
from stele.record.frontmatter import FrontmatterError, parse, render

SHOP = Path(__file__).resolve().parents[3] / "shared" / "eval" / "shop" / "record"

SAMPLE = """\
---
# leading comment survives
id: DEC-4F7K          # required
kind: decision
title: "Rate limiting sits in front of auth, not behind"
anchors:
  - src/auth/middleware.py
  - src/auth/middleware.py::RateLimiter.check
links:
  caused-by: [RISK-2M9Q]
tags: [auth, rate-limit]
created: 2025-11-04
custom_key: {keep: me}

summary: One line.
---
Body text, see TASK-4180.
"""


def test_untouched_round_trip_is_byte_identical():
    doc = parse(SAMPLE)
    assert render(dict(doc.meta), doc.body, doc) == SAMPLE


def test_changing_one_key_rewrites_only_that_block():
    doc = parse(SAMPLE)
    meta = dict(doc.meta)
    meta["tags"] = ["auth"]
    out = render(meta, doc.body, doc)
    assert out == SAMPLE.replace("tags: [auth, rate-limit]", "tags: [auth]")


def test_new_key_goes_to_its_canonical_place_and_unknown_keys_survive():
    doc = parse(SAMPLE)
    meta = dict(doc.meta)
    meta["status"] = "current"
    out = render(meta, doc.body, doc)
    lines = out.splitlines()
    assert lines.index("status: current") == lines.index('title: "Rate limiting sits in front of auth, not behind"') + 1
    assert "custom_key: {keep: me}" in out
    assert "# leading comment survives" in out


def test_deleting_a_key():
    doc = parse(SAMPLE)
    meta = dict(doc.meta)
    del meta["links"]
    out = render(meta, doc.body, doc)
    assert "caused-by" not in out and "links:" not in out
    assert parse(out).meta["tags"] == ["auth", "rate-limit"]


def test_dates_stay_text_so_they_validate_with_a_line():
    doc = parse(SAMPLE)
    assert doc.meta["created"] == "2025-11-04"
    assert doc.key_lines["created"] == 12


def test_line_numbers_of_keys_and_items():
    doc = parse(SAMPLE)
    assert doc.key_lines["id"] == 3
    assert doc.line_of("anchors", 1) == 8
    assert doc.line_of("links", "caused-by") == 10


@pytest.mark.parametrize("text,line,fragment", [
    ("no frontmatter\n", 1, "must start"),
    ("---\nid: X\n", 1, "not closed"),
    ("---\nid: DEC-4F7K\ntitle: [unclosed\n---\n", 3, "invalid YAML"),
    ("---\n- a list\n---\n", 2, "mapping"),
])
def test_parse_errors_carry_a_line(text, line, fragment):
    with pytest.raises(FrontmatterError) as e:
        parse(text)
    assert e.value.line == line
    assert fragment in e.value.message


def _alias_bomb(levels: int) -> str:
    lines = ["---", "id: DEC-4F7K", "kind: decision", "title: t", "a0: &a0 {x: 1, y: 2}"]
    lines += [f"a{i}: &a{i} {{x: *a{i - 1}, y: *a{i - 1}}}" for i in range(1, levels)]
    return "\n".join([*lines, "---", "body", ""])


def test_an_alias_bomb_is_refused_with_a_line_not_walked_for_hours():
    """Thirty lines of `&aN {x: *aM, y: *aM}` stand for a billion values: parsing walked them all, for
    hours (every command on a record holding one hung, every hook ran out of its budget); it is refused
    at the key that passes the bound."""
    with pytest.raises(FrontmatterError) as e:
        parse(_alias_bomb(30))
    assert e.value.line == 15 and "`a10` is expanded past 10,000 values by YAML aliases" in e.value.message
    assert parse(_alias_bomb(8)).meta["a7"]["x"]["y"]["x"]["y"]["x"]["y"]["x"] == {"x": 1, "y": 2}  # fine
    assert parse("---\nid: DEC-4F7K\nx: &a [*a]\n---\n").meta["x"][0][0] is not None  # a cycle too


@pytest.mark.parametrize("value,line", [
    ("[" * 900 + "]" * 900, 5),  # within libyaml's own limit (1000), past Python's stack for the readers
    ("&a " + "{a: " * 900 + "1" + "}" * 900 + "\ny: *a", 5),
])
def test_deep_nesting_is_refused_with_a_line_not_a_recursion_error(value, line):
    with pytest.raises(FrontmatterError) as e:
        parse(f"---\nid: DEC-4F7K\nkind: decision\ntitle: t\nx: {value}\n---\nbody\n")
    assert e.value.line == line and "`x` nests more than" in e.value.message


def test_a_chain_of_aliases_nesting_deep_is_refused_at_its_key():
    lines = ["---", "id: DEC-4F7K", "c0: &c0 [1]", *(f"c{i}: &c{i} [*c{i - 1}]" for i in range(1, 1200)), "---"]
    with pytest.raises(FrontmatterError) as e:
        parse("\n".join(lines) + "\n")
    assert "`c49` nests more than" in e.value.message


def test_scalars_are_quoted_only_when_needed():
    assert frontmatter.dump_key("title", "Plain words") == "title: Plain words\n"
    assert frontmatter.dump_key("title", "Colon: inside") == "title: 'Colon: inside'\n"
    assert frontmatter.dump_key("created", "2026-01-02") == "created: 2026-01-02\n"
    assert frontmatter.dump_key("verified_at", "1234567") == "verified_at: '1234567'\n"
    assert frontmatter.dump_key("tags", ["a,b", "c"]) == "tags: ['a,b', c]\n"
    assert frontmatter.dump_key("anchors", ["x.py"]) == "anchors:\n  - x.py\n"


@pytest.mark.skipif(not SHOP.is_dir(), reason="shared evaluation set not present")
def test_every_shop_fact_round_trips():
    for path in SHOP.rglob("*.md"):
        text = path.read_text()
        if not text.startswith("---"):
            continue
        doc = parse(text)
        assert render(dict(doc.meta), doc.body, doc) == text
        fresh = render(dict(doc.meta), doc.body)
        assert parse(fresh).meta == doc.meta, path


def test_a_list_item_that_flow_yaml_would_misread_is_quoted():
    for value in [":0", "a: b", "? x", "#c", "&a", "*b", "!t", "%p", "@q", "`r", "a #b", "- y"]:
        text = render({"links": {"caused-by": [value]}, "tags": [value]}, "")
        assert parse(text).meta == {"links": {"caused-by": [value]}, "tags": [value]}, text
