"""Which code a run receives, in order: what the selected facts anchor, then what the task matches.

1. Symbol anchors (`path::Class.method`) of the selected facts: the chunks holding that definition's
   lines, resolved by `symbols.find` as every other anchor is.
2. File anchors: the file's chunks, top to bottom.
3. Search hits inside the folders and globs the selected facts anchor (a folder anchor is too broad
   to deliver whole, but it says where to look first).
4. The remaining search hits for the task text, best first.
A chunk anchored by several facts names all of them. `assemble.fit_code` then keeps what fits.
"""
from __future__ import annotations

from ..anchors.paths import path_matches, split
from ..index import code as code_index
from ..project import Project
from ..record.model import Fact

SEARCH_LIMIT = 30  # hits asked of the code index; 32 KiB holds about a dozen chunks


def symbol_chunks(index: code_index.CodeIndex, path: str, symbol: str) -> list[code_index.Chunk]:
    """The chunks holding `symbol`'s lines (none when it no longer resolves: doctor reports that)."""
    from ..anchors.symbols import find

    span = find(index.file_text(path), symbol, path)
    if span is None:
        return []
    return [c for c in index.chunks_of(path) if c.start <= span[1] and span[0] <= c.end]


def candidates(project: Project, selected: list[Fact],
               query: str) -> list[tuple[code_index.Chunk, list[str]]]:
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
    hits = index.search(query, SEARCH_LIMIT)
    for chunk in hits:
        by = [fid for pattern, fid in broad if path_matches(pattern, chunk.path)]
        if by:
            add(chunk, by)
    for chunk in hits:
        add(chunk, [])
    return list(found.values())
