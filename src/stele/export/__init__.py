"""Export: the record compiled into files other tools load on their own (`stele export rules`).

Harnesses and modes without prompt hooks (Copilot code review and cloud agents, Cursor's background
agents, Claude Code's path rules) read project knowledge from files: `.claude/rules/*.md` with
`paths:`, `.cursor/rules/*.mdc` with `globs:`, `.github/instructions/*.instructions.md` with
`applyTo:`, and nested `AGENTS.md` files. This package writes those files from the facts anchored to
paths and globs (`select`), in each harness's own format and size limit (`formats`, `agents`), and
says which are out of date (`plan`), so `stele doctor` and the pre-commit hook ask the same question.
"""
