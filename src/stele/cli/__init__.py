"""The `stele` command line: thin typer adapters over the library, one module per command group.

Each command reads top to bottom as the data flow: find the project, load, act, render. Errors are
SteleError subclasses, turned into one line and an exit code by `errors.error_handler`.
"""
