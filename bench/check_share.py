"""Benchmark: one hostile fact must not spend every other fact's check budget (`codecheck.turn`).

Builds three repositories (`stele init`), each with --honest constraints anchored to `src/big.*`
whose `forbid` check the change breaks, and hostile facts from a pull request anchored to the same
file, evaluated first (their ids sort first):

- `few`: 12 facts, each with two catastrophic patterns (`(.*)*X`), on a 1 MB file of ordinary lines;
- `one-slow`: one fact listing 200 patterns that each take 0.03-0.1 s to compile (case-insensitive
  ranges over most of Unicode; more on a busier machine), under the 0.25 s a pattern gets, so none
  of them stalls;
- `one-ast`: one fact `ast: '$X'` on a 200 KB JavaScript file, one line of nested brackets (where
  each match's position costs a scan of the line).

The change adds one long line and one call each honest check forbids. Timed on the real CLI, fresh
processes: `stele hook pre-commit` (5 s of checks), `stele hook pre-edit --harness claude` on an Edit
of the same file that adds the same lines (2 s) and `stele doctor --check-code` on the tree as it
stands (300 s). For each: wall seconds, and how many honest facts were evaluated (their
violation said). Run it with the code to measure first on PYTHONPATH:

    PYTHONPATH=$PWD/src .venv/bin/python bench/check_share.py [--honest 20] [--depth 100000] [--scenario few]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STELE = str(Path(sys.executable).parent / "stele")
SCENARIOS = ("few", "one-slow", "one-ast")
LONG = "an ordinary line of code with some words in it, long enough to backtrack"


def run(args: list[str], cwd: Path, stdin: str = "", timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout, env=env)


def fact(root: Path, fid: str, title: str, anchor: str, check: str) -> None:
    path = root / f"docs/memory/constraints/{fid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nid: {fid}\nkind: constraint\ntitle: {title}\nanchors: [{anchor}]\n"
                    f"check:\n{check}---\n{title}.\n")


def slow_to_compile(first: int, count: int) -> list[str]:
    return ["(?i)" + "".join(f"[\\u{0x100 + i + n:04x}-\\u{0xFFFF - i:04x}]" for i in range(8))
            for n in range(first, first + count)]


def build(root: Path, scenario: str, honest: int, depth: int) -> tuple[str, str]:
    """The repository, its change staged; (the changed file, the lines the change adds)."""
    root.mkdir()
    for args in (["git", "init", "-q"], ["git", "config", "user.email", "b@e"], ["git", "config", "user.name", "b"]):
        run(args, root)
    run([STELE, "init"], root)
    (root / "src").mkdir()
    if scenario == "one-ast":
        name, end = "src/big.js", "// end"
        text = "var x = " + "[" * depth + "]" * depth + ";\n" + end + "\n"
        fact(root, "CON-A000", "Hostile", name, "  ast: '$X'\n")
        added = "".join(f"forbidden_{n}(1);  // {LONG}\n" for n in range(honest))
    else:
        name, end = "src/big.py", "# end"
        text = "".join(f"value_{i} = compute({i}, key='{LONG}')\n" for i in range(12000)) + end + "\n"
        if scenario == "few":
            for n in range(12):
                fact(root, f"CON-A{n:03d}", f"Hostile {n}", name, f"  forbid: ['(.*)*X{n}', '(.*)*Y{n}']\n")
        else:
            fact(root, "CON-A000", "Hostile", name,
                 "  forbid:\n" + "".join(f"    - '{p}'\n" for p in slow_to_compile(0, 200)))
        added = "".join(f"forbidden_{n}(1)  # {LONG}\n" for n in range(honest))
    (root / name).write_text(text)
    for n in range(honest):
        fact(root, f"CON-H{n:03d}", f"Honest {n}", "src/big.*", f"  forbid: 'forbidden_{n}\\('\n")
    run(["git", "add", "."], root)
    run(["git", "commit", "-qm", "init"], root)
    (root / name).write_text(text.replace(end + "\n", added + end + "\n"))
    run(["git", "add", name], root)
    run([STELE, "rebuild"], root)
    return name, added


def measure(root: Path, name: str, added: str, what: str) -> tuple[float, int, str]:
    start = time.monotonic()
    if what == "pre-commit":
        out = run([STELE, "hook", "pre-commit"], root).stdout
        said = [line for line in out.splitlines() if "matches /forbidden_" in line]
        note = next((line.strip() for line in out.splitlines() if "check not run" in line and "CON-A" in line), "")
    elif what == "pre-edit":
        end = "// end" if name.endswith(".js") else "# end"
        payload = json.dumps({"session_id": f"s{time.monotonic_ns()}", "transcript_path": "/t", "cwd": str(root),
                              "hook_event_name": "PreToolUse", "tool_name": "Edit",
                              "tool_input": {"file_path": str(root / name), "old_string": end,
                                             "new_string": added + end}})
        result = run([STELE, "hook", "pre-edit", "--harness", "claude"], root, payload)
        context = json.loads(result.stdout or "{}").get("hookSpecificOutput", {}).get("additionalContext", "")
        said = [line for line in context.splitlines() if "matches /forbidden_" in line]
        note = "(the pre-edit hook says nothing of a check that did not run)"
    else:
        out = run([STELE, "doctor", "--check-code"], root).stdout
        said = [line for line in out.splitlines() if "[code-check]" in line and "CON-H" in line]
        note = next((line.strip() for line in out.splitlines() if "[bad-check]" in line and "CON-A" in line), "")
    return time.monotonic() - start, len(said), note


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--honest", type=int, default=20)
    parser.add_argument("--depth", type=int, default=100_000, help="brackets in the one-ast file's line")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS, help="only these (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in args.scenario or SCENARIOS:
            name, added = build(Path(tmp) / scenario, scenario, args.honest, args.depth)
            for what in ("pre-commit", "pre-edit", "doctor --check-code"):
                seconds, said, note = measure(Path(tmp) / scenario, name, added, what)
                print(f"{scenario:9} {what:20} {seconds:6.2f} s  honest facts evaluated {said}/{args.honest}")
                if note:
                    print(f"{'':31}{note[:200]}")


if __name__ == "__main__":
    main()
