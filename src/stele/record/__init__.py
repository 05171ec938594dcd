"""The committed record: one frontmatter Markdown file per fact under `docs/memory/`.

Layer 2, above the ground floor and `anchors/`; it imports nothing else of Stele. In data-flow order:
`frontmatter` (parse and minimal-diff rewrite of one file), `model` (a `Fact`, its fields and their
validation), `graph` (typed edges), `load` (every file under docs/memory into a `Record`, bad files
isolated), `write` (fact paths and the one atomic fact write), `edit` (remember, edit, link,
supersede, retire, verify: every change to a fact), `lifecycle` (the knowledge lifecycle's rules),
`knowledge` (its steps) and `scaffold` (`stele init`, `stele new`, the demo's example repository).
"""
