"""Anchors: which files, globs and `path::Symbol`s a fact is about, and whether they still resolve.

Layer 1, just above the ground floor; it knows nothing of facts. `paths` (normalizing, globs, which
anchors cover a path), `symbols` and `patterns` (finding a symbol's definition: Python's `ast`, a
definition pattern per other language), `resolve` (an anchor against the working tree or a commit).
"""
