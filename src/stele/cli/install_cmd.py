"""`stele install` / `stele uninstall`: thin over `stele.install`'s targets."""
from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from ..render import term
from ..render.jsonout import emit_json
from ..textcut import counted
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json


class ScopeChoice(str, Enum):
    project = "project"
    user = "user"


ScopeOpt = Annotated[ScopeChoice, typer.Option("--scope", help="project: this repository's files; "
                                               "user: your home folder's (every project).")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run",
                                         help="Show what would change (with a diff); write nothing.")]

_WOULD = {"created": "would create", "updated": "would update", "removed": "would remove",
          "restored": "would restore"}


def _shown(p, path: Path) -> str:
    home = Path.home()
    if path.is_relative_to(p.root):
        return p.rel(path)
    return "~/" + path.relative_to(home).as_posix() if path.is_relative_to(home) else path.as_posix()


def _report(p, results: list[tuple[str, list]], dry_run: bool, as_json: bool) -> None:
    if as_json:
        emit_json({"dry_run": dry_run, "changes": [
            {"target": name, "path": _shown(p, c.path), "action": c.action, "detail": c.detail,
             "diff": c.diff}
            for name, changes in results for c in changes]})
        return
    for _, changes in results:
        for c in changes:
            action = _WOULD.get(c.action, c.action) if dry_run else c.action
            term.line(f"{action} {_shown(p, c.path)}" + (f" ({c.detail})" if c.detail else ""))
            if c.diff:
                term.write(c.diff)


@app.command()
def install(
    target: Annotated[list[str], typer.Argument(
        help="claude, codex, gemini, cursor, copilot, cline, pre-commit, claude-mcp, codex-mcp; none: detect.")]
    = [],
    all_: Annotated[bool, typer.Option("--all", help="Install every detected target without asking.")
                    ] = False,
    dry_run: DryRunOpt = False,
    scope: ScopeOpt = ScopeChoice.project,
    check: Annotated[bool, typer.Option("--check", help="Change nothing: report, for each installed "
                                        "harness, whether its hooks would run (config, matchers, PATH, "
                                        "enabled, trust).")] = False,
    live: Annotated[bool, typer.Option("--live", help="With --check: read each installed harness's own "
                                       "record of its last session here: did Stele's hooks run, did their "
                                       "text reach the conversation?")] = False,
    probe: Annotated[bool, typer.Option("--probe", help="With --check: run each installed harness once on "
                                        "a probe prompt (your model, a few tokens) and check that a nonce "
                                        "from Stele's session-start hook came back.")] = False,
    rules: Annotated[bool, typer.Option("--rules", help="Install the git pre-commit hook (alone, or with the "
                                        "targets named) so that it also rewrites and stages the rule files of "
                                        "`stele export rules` at each commit.")] = False,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Wire Stele into agent harnesses and git hooks (idempotent; keeps everything already there)."""
    from ..errors import SteleError, UsageError
    from ..install import targets as inst
    from ..install.files import preflight

    p = project()
    if (live or probe) and not check:
        raise UsageError("--live and --probe go with --check: `stele install --check --live`")
    if check:
        _check(p, wants_json(fmt, json_), live=live, probe=probe)
        return
    names = list(dict.fromkeys(target + (["pre-commit"] if rules else [])))
    if not names:
        detected = [t.name for t in inst.targets().values() if t.detect(p)]
        if not detected:
            raise UsageError("no harness detected here: name one, e.g. `stele install claude` "
                             f"(targets: {', '.join(inst.targets())})")
        if not all_ and not dry_run:
            if not sys.stdin.isatty():
                raise UsageError(f"detected {', '.join(detected)}: run `stele install --all` or name the "
                                 "targets")
            if not typer.confirm(f"Install Stele into {', '.join(detected)}?", default=True):
                raise SteleError("nothing was installed: name the targets to install, or pass --all")
        names = detected
    chosen = [inst.get(name) for name in names]  # every name checked before anything is written
    if scope == ScopeChoice.project and not dry_run and not p.stele_dir.is_dir():
        raise SteleError(f"{p.root} has no .stele/ yet: run `stele init` first (the hooks stay silent "
                         "in a repository without Stele)")
    # every change worked out first, so that a refusal (a read-only file, JSON Stele cannot edit)
    # comes before anything is written: hooks and MCP entries land together or not at all
    results = [(t.name, t.install(p, dry_run=True, scope=scope.value, **_rules(t.name, rules))) for t in chosen]
    if not dry_run:
        preflight([c for _, changes in results for c in changes])
        results = [(t.name, t.install(p, scope=scope.value, **_rules(t.name, rules))) for t in chosen]
    _report(p, results, dry_run, wants_json(fmt, json_))
    if not dry_run:
        _would_run(p, [t.name for t in chosen])


def _rules(name: str, rules: bool) -> dict:
    return {"rules": True} if rules and name == "pre-commit" else {}


def _would_run(p, names: list[str]) -> None:
    """`--check` for what was just installed, ending with one loud line when the hooks would do
    nothing (stele not on PATH for the harness, an untrusted folder, hooks switched off): an install
    that prints `unchanged` and then stays silent forever is the failure this exists for."""
    from ..install.check import ERROR, WARN, check

    problems = [f for f in check(p) if f.level in (WARN, ERROR) and f.harness in (*names, "stele")]
    if not problems:
        return
    for f in problems:
        term.warn(f"{f.harness}: {f.level}: {f.message}")
    first = problems[0].message.split(";", 1)[0]
    term.warn(f"WARNING: Stele's hooks will do nothing yet: {first}"
              + (f" (and {counted(len(problems) - 1, 'more problem')})" if len(problems) > 1 else "")
              + "; fix it, then `stele install --check`")


def _check(p, as_json: bool, *, live: bool = False, probe: bool = False) -> None:
    from ..errors import SteleError
    from ..install.check import ERROR, check

    found = check(p)
    if live or probe:
        from ..install import live as live_mod

        installed = list(dict.fromkeys(f.harness for f in found if f.harness != "stele"))
        for harness in installed:
            found += live_mod.last_session(p, harness) if live else []
            found += [live_mod.probe(p, harness)] if probe else []
    if as_json:
        emit_json({"findings": [{"harness": f.harness, "level": f.level, "message": f.message} for f in found]})
    elif not found:
        term.line("no harness hooks of Stele's are installed here or in your home folder")
    for f in [] if as_json else found:
        term.line(f"{f.harness}: {f.level}: {f.message}")
    errors = sum(f.level == ERROR for f in found)
    if errors:
        raise SteleError(f"{counted(errors, 'problem keeps', 'problems keep')} Stele's hooks from running (above)")


@app.command()
def uninstall(
    target: Annotated[list[str], typer.Argument(help="Targets to remove Stele from.")],
    dry_run: DryRunOpt = False,
    scope: ScopeOpt = ScopeChoice.project,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> None:
    """Take Stele out of harnesses and git hooks, restoring what was there before."""
    from ..install import targets as inst
    from ..install.files import preflight

    p = project()
    chosen = [inst.get(name) for name in dict.fromkeys(target)]
    results = [(t.name, t.uninstall(p, dry_run=True, scope=scope.value)) for t in chosen]
    if not dry_run:  # all or nothing, as for install
        preflight([c for _, changes in results for c in changes])
        results = [(t.name, t.uninstall(p, scope=scope.value)) for t in chosen]
    _report(p, results, dry_run, wants_json(fmt, json_))
