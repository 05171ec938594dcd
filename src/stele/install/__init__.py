"""Installers: wire Stele into agent harnesses and git, and take it out again.

Each target is a small module exposing `TARGET`, an object with `name`, `summary`, `detect(project)`,
`install(project, *, dry_run=False, scope="project")` and `uninstall(project, *, dry_run=False,
scope="project")`. Installs are idempotent (a second run changes nothing), never drop what the user
already had, and uninstall gives back what was there before. A dry run returns the same changes
(with a diff) and writes nothing; `scope="user"` targets the home folder where the harness has one
(a target without a user scope raises UsageError).
"""
