"""Which code a run receives, in order: what the task's facts anchor, then what the task matches.

1. Symbol anchors (`path::Class.method`) of the facts chosen for this task (named, linked, ranked):
   the chunks holding that definition's lines, resolved by `symbols.find` as every other anchor is.
2. File anchors: the file's chunks, top to bottom.
3. Search hits inside the folders and globs those facts anchor (a folder anchor is too broad to
   deliver whole, but it says where to look first).
4. The remaining search hits, best first.
Search hits must pass recall's relevance test against a part of the task (the title, a section of the
body, the prompt): the chunk holds `text_floor` of that part's content words, weighted by rarity, or
(once one chunk does) `seed_support` of the way there. `always` rules are delivered to every run, so
the code they anchor is not: it comes only when it matches the task like any other chunk (it used to
take a third of every snapshot's code, whatever the task). A chunk anchored by several facts names all
of them. `assemble.fit_code` then keeps what fits.
"""
from __future__ import annotations

from ..anchors.paths import path_matches, split
from ..index import code as code_index
from ..project import Project
from ..record.model import Fact
from ..retrieve.settings import Settings

SEARCH_LIMIT = 30  # hits asked of the code index; 32 KiB holds about a dozen chunks


def symbol_chunks(index: code_index.CodeIndex, path: str, symbol: str) -> list[code_index.Chunk]:
    """The chunks holding `symbol`'s lines (none when it no longer resolves: doctor reports that)."""
    from ..anchors.symbols import find

    span = find(index.file_text(path), symbol, path)
    if span is None:
        return []
    return [c for c in index.chunks_of(path) if c.start <= span[1] and span[0] <= c.end]


def candidates(project: Project, selected: list[Fact], parts: list[str],
               settings: Settings) -> list[tuple[code_index.Chunk, list[str]]]:
    index = code_index.refresh(project)
    found: dict[str, tuple[code_index.Chunk, list[str]]] = {}

    def add(chunk: code_index.Chunk, by: list[str]) -> None:
        _, ids = found.setdefault(chunk.key, (chunk, []))
        ids.extend(i for i in by if i not in ids)

    broad: list[tuple[str, str]] = []
    for want_symbol in (True, False):
        for fact in selected:
            for anchor in fact.anchors:
                path, symbol = split(anchor)
                if path not in index.files:
                    if not want_symbol:
                        broad.append((path, fact.id))
                elif (symbol is not None) == want_symbol:
                    for chunk in symbol_chunks(index, path, symbol) if symbol else index.chunks_of(path):
                        add(chunk, [fact.id])
    hits = matching(index, parts, settings)
    for chunk in hits:
        by = [fid for pattern, fid in broad if path_matches(pattern, chunk.path)]
        if by:
            add(chunk, by)
    for chunk in hits:
        add(chunk, [])
    return list(found.values())


def matching(index: code_index.CodeIndex, parts: list[str], settings: Settings) -> list[code_index.Chunk]:
    """Chunks that pass the relevance test against some part of the query, the strongest first."""
    from ..retrieve.seeds import Coverage, Hit, relevant

    best: dict[str, tuple[float, code_index.Chunk]] = {}
    for part in parts:
        chunks = index.search(part, SEARCH_LIMIT)
        if not chunks:
            continue
        covered = Coverage(index.text, part)
        covered.load([c.key for c in chunks])
        hits = [Hit(c.key, coverage=covered.of(c.key)) for c in chunks]
        by_key = {c.key: c for c in chunks}
        for h in relevant(hits, settings):
            if h.coverage > best.get(h.id, (-1.0, None))[0]:
                best[h.id] = (h.coverage, by_key[h.id])
    order = {k: n for n, k in enumerate(best)}
    return [c for _, c in sorted(best.values(), key=lambda v: (-v[0], order[v[1].key]))]
