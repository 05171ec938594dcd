"""`stele demo`: run real commands on a throwaway repository built from the bundled example
(`record.scaffold.example_checkout` builds it and removes it).

The demo runs each command as the user would type it, in its own `stele` process in the example
repository, and prints the command before its output, so what it shows is exactly what `stele` does
and the user can repeat it. (A process per command also keeps this module from importing the CLI
that imports it.)
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..errors import SteleError
from ..record.scaffold import EXAMPLE, example_checkout
from ..render import term

DEMO_RECALL_CHARS = 900  # each recall shortened so the whole demo stays within a couple of screens


def _run(note: str, where: Path, *args: str) -> None:
    term.line("")
    term.line(f"# {note}", style="dim")
    term.line("$ stele " + " ".join(f'"{a}"' if " " in a else a for a in args), style="bold cyan")
    sys.stdout.flush()
    code = subprocess.call([sys.executable, "-m", "stele", *args], cwd=where)
    if code != 0:
        raise SteleError(f"`stele {' '.join(args)}` failed in the demo (exit {code})")


def example_inputs(example: Path = EXAMPLE) -> tuple[list[str], list[str]]:
    """The example's prompts and `# file:` paths, in file order (the first ones are the demo's)."""
    prompts, files = [], []
    path = example / "prompts.txt"
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
        line = line.strip()
        if line.startswith("# file:"):
            files.append(line.split(":", 1)[1].strip())
        elif line and not line.startswith("#"):
            prompts.append(line)
    return prompts, files


def script(example: Path = EXAMPLE) -> list[tuple[str, tuple[str, ...]]]:
    """(what to look for, the command) in the order the demo runs them: a short tour, not everything."""
    prompts, files = example_inputs(example)
    short = ("--max-chars", str(DEMO_RECALL_CHARS))
    steps: list[tuple[str, tuple[str, ...]]] = [
        ("The record: one Markdown file per fact under docs/memory/. Its risks:", ("list", "--kind", "risk")),
    ]
    notes = ("Before a prompt: matching facts, one hop out, and a risk two causal hops away called out",
             "The risk shares no words with the question; the walk finds it through caused-by",
             "A pasted error string finds the lesson that quotes it")
    # prompts.txt may hold more prompts than the demo narrates: the first ones get the notes
    steps += [(note, ("recall", *short, prompt)) for note, prompt in zip(notes, prompts, strict=False)]
    if files:
        steps.append(("Before an edit: the facts anchored to the file (risks and constraints first)",
                      ("anchored", files[0])))
    steps += [("Open, unblocked, unclaimed work an agent could claim", ("task", "ready")),
              ("What CI runs to keep the record honest", ("doctor",))]
    return steps


def run(keep: Path | None = None, example: Path = EXAMPLE) -> Path | None:
    with example_checkout(keep, example) as dest:
        term.line(f"Stele demo: the Harbor example, a git repository at {dest}", style="bold")
        for note, args in script(example):
            _run(note, dest, *args)
        term.line("")
        if keep:
            term.line(f"The repository is kept at {dest}: cd there and try `stele recall \"...\"`, "
                      f"`stele why \"...\"` or the other prompts in {example / 'prompts.txt'}.")
            return dest
        term.line("Run `stele demo --keep DIR` to keep the repository and try commands yourself "
                  "(`stele recall`, `stele why`, `stele serve` for the graph).")
        return None
