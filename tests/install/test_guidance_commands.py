"""Every `stele ...` command quoted in the words Stele puts in front of agents (the AGENTS.md /
instructions block, the researcher's prompt, the /recall skill, the hook texts) runs as quoted.

Agents copy these commands verbatim: `stele supersede OLD NEW` (no `--by`) once cost every agent that
followed the AGENTS.md block a `Missing option '--by'` and exit 2. The test reads the string constants
of the modules that write that text, fills the placeholders with real values and runs each command;
a bare command name (`stele remember`) must at least exist."""
from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

import stele
from tests.helpers import invoke, write_fact

PACKAGE = Path(stele.__file__).parent
SOURCES = ("install/guidance.py", "hooks/edit.py", "hooks/session_start.py", "hooks/precommit.py",
           "render/agent.py")
_QUOTED = re.compile(r"`(stele [^`]+)`")
PLACEHOLDERS = {  # what an agent puts in place of each placeholder
    "OLD": "DEC-4F7K", "NEW": "DEC-9M2X", "ID": "DEC-4F7K", "<ID>": "DEC-4F7K", "<kind>": "decision",
    "path/to/file": "src/app.py", "<the question>": "why retries back off", "<words>": "retries back off",
    "<question>": "why retries back off", "$ARGUMENTS": "why retries back off", "...": "retries back off",
}


def quoted_commands() -> list[str]:
    found: list[str] = []
    for rel in SOURCES:
        tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found += _QUOTED.findall(" ".join(node.value.split()))
    return list(dict.fromkeys(found))


def filled(command: str) -> list[str]:
    args = shlex.split(command)[1:]
    return [PLACEHOLDERS.get(a, a) for a in args]


def test_the_guidance_quotes_commands():
    commands = quoted_commands()
    assert any(c.startswith("stele supersede") for c in commands)
    assert len(commands) >= 10


@pytest.mark.parametrize("command", quoted_commands())
def test_every_quoted_command_runs_as_written(repo: Path, command: str):
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("def retry():\n    pass\n", encoding="utf-8")
    write_fact(repo, "DEC-4F7K", "decision", "Retries back off exponentially", "Retries back off: the gateway bans bursts.")
    write_fact(repo, "DEC-9M2X", "decision", "Retries back off with jitter", "Retries back off with full jitter.")
    args = filled(command)
    if len(args) == 1:  # a command named, not a call: it must exist
        args = [*args, "--help"]
    r = invoke(*args)
    assert r.code == 0, f"`{command}` as stele {' '.join(args)}: exit {r.code}\n{r.err}"
