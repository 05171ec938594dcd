"""The command line described from its own definitions: every command, argument, option and hook event.

`docs/cli.md` is rendered from this (by `scripts/cli_reference.py`) and `tests/test_docs.py` checks
the hand-written docs against it, so neither can drift from the code. Three sources make the one CLI:
the typer tree, the fast path's argparse parsers (`recall`, `search`, `task claim` and `task release`
run before typer; the typer tree has only forwarding stubs for them) and `stele hook`'s event table.
Only the stable part of typer's objects is read (option names, help, defaults, `multiple`, `is_flag`); a parameter's type
comes from the command function's own annotation, so the page does not change with typer's internals.
"""
from __future__ import annotations

import argparse
import enum
import importlib
import inspect
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TYPE_NAMES = {str: "TEXT", int: "INTEGER", float: "FLOAT", Path: "PATH"}


@dataclass(frozen=True)
class Param:
    names: tuple[str, ...]  # option strings (long first); an argument's one display name
    metavar: str            # "" for a flag
    help: str
    default: str            # "" when there is none worth showing
    argument: bool
    required: bool = False
    multiple: bool = False

    @property
    def usage(self) -> str:
        if not self.argument:
            return self.names[0] + (f" {self.metavar}" if self.metavar else "")
        shown = self.names[0] + ("..." if self.multiple else "")
        return shown if self.required else f"[{shown}]"


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]   # ("task", "claim"); () is `stele` itself
    help: str
    params: tuple[Param, ...]
    subcommands: tuple[str, ...] = ()
    events: tuple[tuple[str, str], ...] = ()  # `stele hook` only: (event, what it does)

    @property
    def name(self) -> str:
        return " ".join(("stele", *self.path))

    @property
    def summary(self) -> str:
        return " ".join(self.help.split("\n\n")[0].split())

    @property
    def usage(self) -> str:
        parts = [self.name]
        if any(not p.argument for p in self.params):
            parts.append("[OPTIONS]")
        parts += [p.usage for p in self.params if p.argument]
        if self.subcommands:
            parts.append("COMMAND [ARGS]...")
        return " ".join(parts)

    def option(self, name: str) -> Param | None:
        return next((p for p in self.params if not p.argument and name in p.names), None)


def commands() -> list[Command]:
    """Every command, in `stele --help` order, each group followed by its subcommands."""
    import typer.main

    from .main import app

    found: list[Command] = []
    _walk(typer.main.get_command(app), (), found)
    return found


def _walk(cmd: Any, path: tuple[str, ...], out: list[Command]) -> None:
    if path in FAST:
        out.append(_from_argparse(path, FAST[path]()))
        return
    subs = getattr(cmd, "commands", None) or {}
    names = tuple(name for name, sub in subs.items() if not sub.hidden)
    out.append(Command(path, inspect.cleandoc(cmd.help or ""), _typer_params(cmd), names))
    if path == ():
        out.append(hook_command())
    for name in names:
        _walk(subs[name], (*path, name), out)


def _typer_params(cmd: Any) -> tuple[Param, ...]:
    hints = typing.get_type_hints(cmd.callback, include_extras=True) if cmd.callback else {}
    params = []
    for p in cmd.params:
        if getattr(p, "hidden", False):
            continue
        hint = _bare(hints.get(p.name))
        multiple = bool(getattr(p, "multiple", False)) or getattr(p, "nargs", 1) == -1
        if p.param_type_name == "argument":
            shown = (p.metavar or p.name).strip("[].").upper()
            params.append(Param((shown,), "", getattr(p, "help", None) or "",
                                _default(p.default), True, bool(p.required), multiple))
            continue
        names = tuple(sorted(p.opts, key=lambda o: (not o.startswith("--"), o))) + tuple(p.secondary_opts)
        flag = bool(getattr(p, "is_flag", False))
        metavar = "" if flag else (p.metavar or _type_name(hint))
        default = "" if flag else _default(p.default)
        params.append(Param(names, metavar, p.help or "", default, False, bool(p.required), multiple))
    return tuple(params)


def _bare(hint: Any) -> Any:
    """The value type under Annotated, Optional and list."""
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            hint = typing.get_args(hint)[0]
        elif origin in (list, typing.Union) or str(origin) == "<class 'types.UnionType'>":
            hint = next(a for a in typing.get_args(hint) if a is not type(None))
        else:
            return hint


def _type_name(hint: Any) -> str:
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "|".join(str(m.value) for m in hint)
    return TYPE_NAMES.get(hint, "TEXT")


def _default(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or value is False or value in ((), []) or value == "":
        return ""
    return str(value)


def _from_argparse(path: tuple[str, ...], parser: argparse.ArgumentParser) -> Command:
    params = []
    for action in parser._actions:  # argparse keeps no public list of its arguments
        if isinstance(action, argparse._HelpAction):
            continue
        flag = action.nargs == 0
        multiple = isinstance(action, argparse._AppendAction)  # _ExtendAction is one
        if not action.option_strings:
            params.append(Param((str(action.metavar or action.dest.upper()),), "", action.help or "", "",
                                True, action.nargs not in ("?", "*"), action.nargs in ("*", "+")))
            continue
        metavar = "" if flag else str(
            "|".join(action.choices) if action.choices else (action.metavar or action.dest.upper()))
        if action.nargs == "?":  # `--remote [NAME]`: the value may be left out
            metavar = f"[{metavar}]"
        names = tuple(sorted(action.option_strings, key=lambda o: (not o.startswith("--"), o)))
        params.append(Param(names, metavar, action.help or "",
                            "" if flag else _default(action.default), False, action.required, multiple))
    # typer's order: arguments, then options, the shared --format and --json last
    params.sort(key=lambda p: (not p.argument, p.names[0] in ("--format", "--json")))
    return Command(path, parser.description or "", tuple(params))


def _fast(name: str) -> typing.Callable[[], argparse.ArgumentParser]:
    def parser() -> argparse.ArgumentParser:
        from . import fast

        built: argparse.ArgumentParser = getattr(fast, f"{name}_parser")()
        return built

    return parser


# commands parsed by argparse before typer (cli/fast.py); their typer entries only forward
FAST = {("recall",): _fast("recall"), ("search",): _fast("search"),
        ("task", "claim"): _fast("claim"), ("task", "release"): _fast("release")}


def hook_command() -> Command:
    """`stele hook EVENT`: dispatched before typer, so it is not in the typer tree."""
    from ..hooks.dispatch import EVENTS, _parser

    base = _from_argparse(("hook",), _parser())
    events: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for event, target in EVENTS.items():
        if target in seen:
            events.append((event, f"The same as `{seen[target]}`."))
            continue
        seen[target] = event
        module_name, func = target.split(":")
        module = importlib.import_module(f"stele.hooks.{module_name}")
        events.append((event, _event_doc(module, func)))
    event_arg = Param(("EVENT",), "", "the event to run (below)", "", True, True)
    params = (event_arg, *(p for p in base.params if not p.argument))
    return Command(("hook",), base.help, params, events=tuple(events))


def _event_doc(module: Any, func: str) -> str:
    """The entry function's docstring, else the first paragraph of its module's (after "`stele hook X`:")."""
    own = inspect.getdoc(getattr(module, func))
    if own:
        return " ".join(own.split("\n\n")[0].split())
    first = " ".join(inspect.cleandoc(module.__doc__ or "").split("\n\n")[0].split())
    what = first.split(": ", 1)[1] if first.startswith("`") and ": " in first else first
    return what[:1].upper() + what[1:]


def markdown(found: list[Command] | None = None) -> str:
    """docs/cli.md: a contents table, then one section per command."""
    found = commands() if found is None else found
    out = [
        "# Command reference",
        "",
        "<!-- Generated from the commands themselves by `python scripts/cli_reference.py`; do not edit.",
        "     tests/test_docs.py fails when this page is stale. -->",
        "",
        "Every command, argument and option, as `--help` gives them. The guides explain what they are",
        "for: [README](../README.md), [record](record.md), [retrieval](retrieval.md), [hooks](hooks.md),",
        "[sessions](sessions.md), [tasks](tasks.md), [context](context.md), [knowledge](knowledge.md),",
        "[anchors](anchors.md), [doctor](doctor.md), [review](review.md), [serve](serve.md), [mcp](mcp.md);",
        "settings are in [configuration](configuration.md).",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    out += [f"| [`{c.name}`](#{_anchor(c)}) | {_cell(c.summary)} |" for c in found if c.path]
    for c in found:
        out += ["", f"## {c.name}", ""]
        if c.help:
            out += [c.help, ""]
        out += ["```text", c.usage, "```"]
        if c.params:
            out += ["", "| argument or option | description |", "|---|---|"]
            for p in c.params:
                out.append(f"| {_param_cell(p)} | {_cell(_describe(p))} |")
        if c.subcommands:
            out += ["", "Commands: " + ", ".join(
                f"[`{sub}`](#{_anchor_of((*c.path, sub))})" for sub in c.subcommands) + "."]
        if c.events:
            out += ["", "| event | what it does |", "|---|---|"]
            out += [f"| `{event}` | {_cell(what)} |" for event, what in c.events]
    return "\n".join(out) + "\n"


def _param_cell(p: Param) -> str:
    names = ", ".join(f"`{n}`" for n in p.names)
    return _cell(names + (f" `{p.metavar}`" if p.metavar else ""))


def _describe(p: Param) -> str:
    text = " ".join(p.help.split())
    extra = []
    if p.multiple and not p.argument and "repeatable" not in text.lower():
        extra.append("repeatable")
    if p.required and not p.argument:
        extra.append("required")
    if p.default and "default" not in text.lower():  # the help already says it, in its own words
        extra.append(f"default: `{p.default}`")
    if p.argument and not p.required:
        extra.append("optional")
    return text + (f" ({'; '.join(extra)})" if extra else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(c: Command) -> str:
    return _anchor_of(c.path)


def _anchor_of(path: tuple[str, ...]) -> str:
    return "-".join(("stele", *path))
