"""Property-based fuzzing of the frontmatter parser: any text parses or fails with a FrontmatterError
(never another exception), and any frontmatter the writer produces reads back to the same values and
re-renders byte-identical; a change of one key touches only that key's lines."""
import string

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from stele.record.frontmatter import FrontmatterError, dump_key, parse, render

FUZZ = settings(max_examples=300, deadline=None, derandomize=True)

KEYS = st.sampled_from(["id", "kind", "title", "status", "tags", "anchors", "links", "created", "summary",
                        "custom", "x_y"])
SCALARS = st.one_of(
    st.text(alphabet=string.ascii_letters + string.digits + " -_.,:#'\"[]{}!&*?|>%@`", min_size=1, max_size=30)
    .map(str.strip).filter(bool),
    st.integers(-1000, 1000), st.booleans(), st.just("2025-11-04"), st.just("on"), st.just("1.10"))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, min_size=1, max_size=4),
                   st.dictionaries(st.sampled_from(["caused-by", "relates-to"]), st.lists(SCALARS, min_size=1,
                                                                                         max_size=3),
                                   min_size=1, max_size=2))
METAS = st.dictionaries(KEYS, VALUES, min_size=1, max_size=8)
BODIES = st.text(max_size=80).map(lambda t: t.replace("\r", ""))


@FUZZ
@given(st.text(max_size=300))
def test_any_text_parses_or_fails_with_a_line(text):
    try:
        doc = parse(text)
    except FrontmatterError as e:
        assert e.line >= 1 and e.message
        return
    assert isinstance(doc.meta, dict)


@FUZZ
@given(st.lists(st.sampled_from(["---", "id: DEC-4F7K", "kind: note", "title: x", "  - a", "tags: [a, b",
                                 "links:", "  caused-by: [X]", "{id: A}", "...", "", "#c", "key: 'q", "? k",
                                 "&a x", "*a", "!!python/object:os.system", "id: DEC-4F7K"]), max_size=12))
def test_frontmatter_shaped_noise_parses_or_fails_with_a_line(lines):
    try:
        parse("\n".join(lines) + "\n")
    except FrontmatterError as e:
        assert e.line >= 1


@FUZZ
@given(METAS, BODIES)
def test_what_the_writer_renders_reads_back_and_rerenders_identically(meta, body):
    text = render(meta, body)
    doc = parse(text)
    assert doc.meta == {k: v for k, v in meta.items() if v not in (None, [], {})}
    assert doc.body == body
    assert render(dict(doc.meta), doc.body, doc) == text


@FUZZ
@given(METAS, BODIES, KEYS, SCALARS)
def test_changing_one_key_touches_only_its_lines(meta, body, key, value):
    doc = parse(render(meta, body))
    changed = dict(doc.meta)
    changed[key] = value
    out = render(changed, body, doc)
    assert parse(out).meta == changed
    for other, block in doc.blocks.items():
        if other != key:
            assert block in out


class _Reference(yaml.CSafeLoader):
    """PyYAML's own loader with the same resolvers: what `parse` must give, node walk or not."""


_Reference.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()}

UNUSUAL = [  # what the plain walk hands to PyYAML whole
    "base: &b {status: current, tags: [a]}\nlinks:\n  <<: *b\n  part-of: [EPIC-1234]\n",
    "tags: &t [x, y]\nsource: *t\n", "a: &x [1, *x]\n", "1: one\n2: two\nnull: n\n", "? [a, b]\n: c\n",
    "s: !!set {a, b}\n", "o: !!omap [a: 1, b: 2]\n", "= : v\n", "t: !custom x\n", "b: !!binary aGk=\n",
    "id: X\nlinks: {caused-by: &r [RISK-1234], relates-to: *r}\n", "n: ~\ny: yes\nf: 1.5e3\nh: 0x1F\no: 0o17\n",
    "d: 2025-11-04\nts: 2025-11-04T10:00:00Z\ninf: .inf\nnan: .NaN\nsexa: 1:30\n", "'quoted key': \"v\"\n",
]


@FUZZ
@given(st.one_of(METAS.map(lambda m: "".join(dump_key(k, v) for k, v in m.items())), st.sampled_from(UNUSUAL),
                 st.text(alphabet="abc:-[]{},&*!<>?= \n'\"~01", max_size=60)))
def test_values_are_those_pyyaml_constructs(yaml_text):
    yaml_text = yaml_text if yaml_text.endswith("\n") else yaml_text + "\n"  # the closing line is its own
    try:
        expected = yaml.load(yaml_text, Loader=_Reference)
    except (yaml.YAMLError, RecursionError):
        return
    try:
        doc = parse(f"---\n{yaml_text}---\nbody\n")
    except FrontmatterError:
        assert not isinstance(expected, dict) or not expected or _has_duplicate_key(yaml_text)
        return
    if isinstance(expected, dict):
        assert repr(doc.meta) == repr(expected)


def _has_duplicate_key(yaml_text: str) -> bool:
    try:
        parse(f"---\n{yaml_text}---\n")
    except FrontmatterError as e:
        return "duplicate key" in e.message or "mapping" in e.message
    return False


# Any text at all: colons, `#`, a leading `-`, `*`, `&`, `!`, `%`, `@` or backtick, quotes, `\"` escapes,
# newlines, control characters, `...` at the end (a title cut as "(for example:..." lost its dots with
# the document-end marker and read back as a mapping: `stele import agents-md` wrote nothing).
ANY_TEXT = st.one_of(
    st.text(max_size=60),
    st.builds(lambda a, b, c: a + b + c, st.sampled_from(["", "-", "*", "&", "!", "%", "@", "`", "'", '"', "? ",
                                                          "#", "|", ">", "[", "{", " ", "--- ", "... "]),
              st.text(alphabet=string.ascii_letters + ' :#"\\\'().,-', max_size=40),
              st.sampled_from(["", ":", "...", ":...", " #", "\\\"", "\n", " ", ": x", "(for example:..."])))


@FUZZ
@given(ANY_TEXT)
def test_any_text_written_as_a_value_reads_back_as_written(value):
    for key, written in (("title", value), ("tags", [value, "x"]), ("anchors", [value]),
                         ("links", {"relates-to": [value]})):
        text = "---\n" + dump_key(key, written) + "---\nbody\n"
        assert parse(text).meta[key] == written, text


def test_a_title_cut_at_a_colon_and_ended_with_dots_reads_back():
    title = ("This repository does not accept pull requests entirely generated by coding assistants or AI tools "
             "(for example:...")
    assert parse("---\n" + dump_key("title", title) + "---\n").meta["title"] == title
