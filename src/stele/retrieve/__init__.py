"""Retrieval: from a prompt (and the files being edited) to the facts an agent should see.

The library API (stable; the CLI, the hooks and the MCP server call these):

- `recall.recall(project, prompt, files=(), exclude=frozenset(), warned=None) -> Recall`: gate, seeds, walk, rank, risk
  callout, cap; never raises. `Recall.as_dict()` is the JSON contract of DESIGN.md section 4;
  `stele.render.agent.recall_text(recall, max_chars)` is what an agent reads.
- `search.search(project, query, limit=10, kinds=(), include_all=False) -> SearchResult`: plain hybrid search.
- `explain.explain(project, prompt, files=()) -> dict` (`stele why`): one recall, taken apart.

Modules, in pipeline order: `gate`, `seeds` (fusion), `walk`, `callout`, `rank`, `recall`, `search`,
`explain`; `settings` reads the knobs from `.stele/config.yaml`; `anchored` (the facts anchored to a
path), `cochange` (anchored code changed without its facts) and `brief` (a research briefing) are
built on the same pieces. Layer 6: above the index, below snapshots. Importing it is cheap: the index
(tantivy, numpy, SQLite) is imported only when a call needs it.
"""
