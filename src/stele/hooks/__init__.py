"""Harness and git hooks: `stele hook EVENT`, dispatched before typer is imported (`cli/entry.py`).

An adapter: it may import every core layer and `render/`, never `cli/` (typer) or Rich. Every hook
fails open: any problem is one stderr line and an exit 0 with a valid answer for its harness.
"""
