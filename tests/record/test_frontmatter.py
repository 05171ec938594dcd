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
