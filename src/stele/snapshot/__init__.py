"""Context snapshots: what one run of an agent is told, assembled under fixed budgets and kept.

The package follows the data flow: `model` holds the plain data (budgets, items, the snapshot),
`assemble` decides what fits (pure, in memory, so the budget rules are tested without a repository),
`build` gathers the inputs from a project (record, ranking, code index) and calls it and `store` keeps a
snapshot as a file that is never modified (`doctor/context.py` flags the records that make snapshots go
wrong). Layer 7: above retrieval, below doctor.
"""
