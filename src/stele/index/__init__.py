"""The derived index: everything under `.stele/index/`, rebuilt from the record and the WAL.

Layer 5, above the record, the session log and the anchors it indexes; nothing here is the source of
truth. `sources` (what changed), `items` (what is indexed), `catalog` (SQLite: nodes, edges, anchors),
`text` (Tantivy, the only home of `tantivy`), `vectors` and `encoder` (the static embeddings, the only
home of numpy and model2vec), `code`/`chunks` (the code index for snapshots), `build` (refresh and
rebuild under one lock).
"""
