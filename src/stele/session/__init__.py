"""Session memory: the append-only log of what happened, under `.stele/wal/`.

Layer 3, above `record/` (a preamble reads a task's fidelity, promotion and distilling write facts).
`wal` (locked, fsynced, redacted JSONL lines), `archive` (compacted, gzipped history), `sessions`
(sessions, threads, stages, the bookkeeping events), `preamble` (goal, folded stages, steering),
`promote` (an entry becomes a fact) and `distill` (a finished task becomes a draft document).
"""
