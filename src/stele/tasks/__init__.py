"""Tasks and claims: the work board and who holds what.

Layer 4, above `record/` and `session/`. `claims` (a claim is a git ref decided by compare-and-swap,
locally and on a remote, with leases and fencing tokens) and `board` (ready, claim, release, done,
resume: the task commands as library calls).
"""
