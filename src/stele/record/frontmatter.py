"""Frontmatter Markdown: parse with positions, render with the smallest possible diff.

A fact file is reviewed in pull requests, so a rewrite must touch only what changed: each top-level
key's original text (its line, its value, trailing comments and blank lines) is kept verbatim unless
its value changed, unknown keys survive, and key order is preserved. An untouched file renders
byte-identical. PyYAML's C loader parses (7.5x faster than the pure one); the node tree gives every
key's line so problems can be reported as `path:line: message`.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from .. import yamlshape

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """The C safe loader without YAML 1.1 timestamps: dates stay text, validated with a line number.

    The C parser calls back into Python to tag every node; with no path resolvers (none is added
    here) the tag depends on the scalar's text alone, so a plain scalar's is looked up once per
    process (a record repeats `current`, `decision`, its dates) and a quoted one's is text."""

    def resolve(self, kind: Any, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)
        if not implicit[0]:
            return self.DEFAULT_SCALAR_TAG
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            if len(_PLAIN_TAGS) > 100_000:
                _PLAIN_TAGS.clear()
            tag = _PLAIN_TAGS[value] = super().resolve(kind, value, implicit)
        return tag

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass  # path resolvers only

    def ascend_resolver(self) -> None:
        pass


_PLAIN_TAGS: dict[str, str] = {}


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _Base.yaml_implicit_resolvers.items()
}
ISO_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

DELIM = "---"
# Order in which keys are written when they are new to a file.
KEY_ORDER = (
    "id", "kind", "title", "status", "delivery", "priority", "anchors", "links", "tags", "created",
    "verified", "verified_at", "review_after", "needs_review", "expires", "retire_when", "summary", "source",
    "fingerprints",
)
BLOCK_LIST_KEYS = frozenset({"anchors"})


class FrontmatterError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


@dataclass
class Document:
    meta: dict[str, Any]
    body: str
    raw: str = ""
    key_lines: dict[str, int] = field(default_factory=dict)  # top-level key -> 1-based file line
    item_lines: dict[tuple, int] = field(default_factory=dict)  # (key, sub, ...) -> 1-based line
    blocks: dict[str, str] = field(default_factory=dict)  # top-level key -> original text
    preamble: str = ""  # comments before the first key

    def line_of(self, *path: Any) -> int:
        """The best line for a problem at `path` (a key, then sub-keys or list indexes)."""
        for n in range(len(path), 0, -1):
            key = tuple(path[:n])
            if key in self.item_lines:
                return self.item_lines[key]
        return self.key_lines.get(path[0], 1) if path else 1


def parse(text: str) -> Document:
    """Split and parse a fact file. Raises FrontmatterError with a 1-based file line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != DELIM:
        raise FrontmatterError(1, "the file must start with a '---' frontmatter line")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") in (DELIM, "...")), None)
    if end is None:
        raise FrontmatterError(1, "the frontmatter is not closed: add a '---' line after it")
    head_lines = lines[1:end]
    yaml_text = "".join(head_lines)
    body = "".join(lines[end + 1:])
    loader = _Loader(yaml_text)
    try:
        node = loader.get_single_node()
        data, walked = _construct(loader, node) if node is not None else ({}, True)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = min(mark.line + 2, len(head_lines) + 1) if mark else 1  # errors at EOF: the last YAML line
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise FrontmatterError(line, f"invalid YAML: {problem}") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise FrontmatterError(2, "the frontmatter must be a mapping of `key: value` lines")
    if not walked:
        _refuse_duplicate_keys(node, ())  # the plain walk met every key and no key twice
    doc = Document(meta=data, body=body, raw=text)
    starts: list[tuple[int, str]] = []
    for key_node, value_node in node.value:
        key = key_node.value
        line = key_node.start_mark.line
        starts.append((line, key))
        doc.key_lines[key] = line + 2
        _record_item_lines(doc, (key,), value_node)
    if node.flow_style or len({line for line, _ in starts}) < len(starts):
        return doc  # `{id: ..., kind: ...}`: no key has lines of its own to keep; a rewrite spells them out
    for n, (line, key) in enumerate(starts):
        stop = starts[n + 1][0] if n + 1 < len(starts) else len(head_lines)
        doc.blocks[key] = "".join(head_lines[line:stop])
    doc.preamble = "".join(head_lines[: starts[0][0]]) if starts else yaml_text
    return doc


_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


class _Unusual(Exception):
    """A node the plain walk leaves to PyYAML: a merge key, a key that is not text or comes twice, a
    shared node."""


def _construct(loader: _Loader, node: yaml.Node) -> tuple[Any, bool]:
    """The document's value, as `loader.construct_document` builds it, and whether the plain walk
    built it. A frontmatter is text in maps and lists; PyYAML's constructor (pure Python even under
    the C parser) costs most of a load for that, so the walk takes those nodes itself and hands every
    other scalar to the constructor (`null`, numbers, booleans, tags), and the whole document when it
    finds anything unusual (then a duplicate key is looked for as before)."""
    try:
        return _plain(loader, node, set(), 0), True
    except _Unusual:
        _refuse_unreadable(node)
        return loader.construct_document(node), False


def _plain(loader: _Loader, node: yaml.Node, seen: set[int], depth: int) -> Any:
    kind = type(node)
    if kind is yaml.ScalarNode:
        return node.value if node.tag == _STR else loader.construct_object(node, deep=True)
    if id(node) in seen or depth > yamlshape.MAX_DEPTH:
        raise _Unusual  # an alias (PyYAML shares the object, and allows a cycle), or nesting to refuse
    seen.add(id(node))
    if kind is yaml.SequenceNode and node.tag == _SEQ:
        return [_plain(loader, item, seen, depth + 1) for item in node.value]
    if kind is yaml.MappingNode and node.tag == _MAP:
        data = {}
        for key, value in node.value:
            if type(key) is not yaml.ScalarNode or key.tag != _STR or key.value in data:
                raise _Unusual  # `<<` merges, `=` values, numbers or lists as keys, a key twice
            data[key.value] = _plain(loader, value, seen, depth + 1)
        return data
    raise _Unusual  # a tagged collection (`!!set`, `!!omap`, a tag PyYAML refuses)


def _refuse_unreadable(root: yaml.Node) -> None:
    """A frontmatter of alias bombs or deep nesting is refused at its key (`yamlshape`)."""
    found = yamlshape.unreadable(root)
    if found is not None:
        raise FrontmatterError(found[0] + 2, found[1])  # + the opening `---` line


def _refuse_duplicate_keys(node: yaml.Node, path: tuple, done: set[int] | None = None) -> None:
    """YAML lets the last of two equal keys win; in a fact that is a bad merge (two `status:` lines)
    or a wrong id loaded without a word, so it is refused, naming both lines. An aliased node is
    checked once (`&a [*a]` is a node inside itself)."""
    done = set() if done is None else done
    if id(node) in done:
        return
    done.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 2
            if key in seen:
                where = ".".join(str(p) for p in (*path, key))
                raise FrontmatterError(line, f"duplicate key `{where}` (also on line {seen[key]}): keep one")
            seen[key] = line
            _refuse_duplicate_keys(value_node, (*path, key), done)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _refuse_duplicate_keys(item, path, done)


def _record_item_lines(doc: Document, path: tuple, node: yaml.Node, done: frozenset[int] = frozenset()) -> None:
    if id(node) in done:
        return  # a mapping inside itself, through an alias
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            doc.item_lines[path + (i,)] = item.start_mark.line + 2
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            sub = path + (k.value,)
            doc.item_lines[sub] = k.start_mark.line + 2
            _record_item_lines(doc, sub, v, done | {id(node)})


def render(meta: dict[str, Any], body: str, original: Document | None = None) -> str:
    """Frontmatter Markdown for `meta` + `body`, reusing `original`'s text for unchanged keys."""
    if original is not None and meta == original.meta and body == original.body and original.raw:
        return original.raw
    keys = _ordered_keys(meta, original)
    out = [DELIM + "\n", original.preamble if original else ""]
    for key in keys:
        value = meta[key]
        if value is None or value == [] or value == {}:
            continue
        if original is not None and key in original.blocks and original.meta.get(key) == value \
                and type(original.meta.get(key)) is type(value):
            block = original.blocks[key]
            out.append(block if block.endswith("\n") else block + "\n")
        else:
            out.append(dump_key(key, value))
    out.append(DELIM + "\n")
    return "".join(out) + body


def _ordered_keys(meta: dict[str, Any], original: Document | None) -> list[str]:
    keys = [k for k in (original.blocks if original else ()) if k in meta]
    for key in meta:
        if key in keys:
            continue
        rank = KEY_ORDER.index(key) if key in KEY_ORDER else len(KEY_ORDER)
        pos = 0
        for i, existing in enumerate(keys):
            if (KEY_ORDER.index(existing) if existing in KEY_ORDER else len(KEY_ORDER)) <= rank:
                pos = i + 1
        keys.insert(pos, key)
    return keys


def dump_key(key: str, value: Any) -> str:
    if isinstance(value, dict):
        inner = "".join(f"  {k}: {_flow(v) if isinstance(v, list) else _scalar(v)}\n"
                        for k, v in value.items())
        return f"{key}:\n{inner}"
    if isinstance(value, list):
        if key in BLOCK_LIST_KEYS:
            return f"{key}:\n" + "".join(f"  - {_scalar(v)}\n" for v in value)
        return f"{key}: {_flow(value)}\n"
    return f"{key}: {_scalar(value)}\n"


def _flow(items: list) -> str:
    return "[" + ", ".join(_scalar(v, in_flow=True) for v in items) + "]"


def _scalar(value: Any, in_flow: bool = False) -> str:
    """`value` as one line of YAML that reads back as `value`, in a mapping (`key: ...`) or, `in_flow`, a
    flow list (`[..., ...]`). PyYAML's own choice of style is kept when it reads back; otherwise the
    value is single-quoted, or double-quoted with escapes when it holds a newline or a character YAML
    will not take as written. The one home of this rule: every frontmatter key is written through it,
    so the writer never produces frontmatter its own reader refuses (a title cut at "(for example:"
    and ending in "..." once lost its dots with the document-end marker and then read as a mapping)."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, str) and ISO_DATE_RE.match(value):
        return value  # our loader reads it back as text; other YAML readers see a date
    text = _dumped(value)
    if not isinstance(value, str) or _faithful(text, value, in_flow):
        return text
    quoted = "'" + value.replace("'", "''") + "'"
    return quoted if _faithful(quoted, value, in_flow) else _dumped(value, '"')


def _dumped(value: Any, style: str | None = None) -> str:
    text = yaml.safe_dump(value, allow_unicode=True, width=1 << 30, default_flow_style=True, default_style=style)
    # a plain scalar alone in a document is followed by the document-end marker, `...` on its own line
    return text.removesuffix("\n").removesuffix("\n...")


def _faithful(text: str, value: str, in_flow: bool) -> bool:
    if "\n" in text or "\r" in text:
        return False
    if in_flow:
        return _reads_back(f"[{text}]") == [value]  # `[:0]` is no list
    return _reads_back(f"k: {text}") == {"k": value}


def _reads_back(flow: str) -> Any:
    try:
        return yaml.load(flow, Loader=_Loader)  # the safe loader
    except yaml.YAMLError:
        return None
