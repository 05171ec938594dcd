"""Harness and git hooks: `stele hook EVENT`, dispatched before typer is imported (see entry.py)."""
