"""The docs and the command line agree, both ways.

Every command, option and hook event is documented in a hand-written page (README.md or docs/*.md),
and every `stele ...` invocation those pages show names a command, options and events that exist.
`docs/cli.md` is generated from the commands (`python scripts/cli_reference.py`) and must be current.
Invocations are read from code: fenced blocks and inline code spans, the places a reader copies from.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from stele.cli.reference import Command, markdown
from stele.cli.reference import commands as _commands
from stele.hooks.dispatch import EVENTS

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "docs" / "cli.md"
GLOBAL = {"--help", "-h", "--version"}
# Every data command takes these; README's Conventions section documents them once for all.
SHARED = {"--format", "--json"}
WORD = re.compile(r"[a-z][a-z-]*$")
OPTION = re.compile(r"--?[A-Za-z]")  # not `-1`, not a `---` frontmatter fence


@cache
def commands() -> list[Command]:  # reading the typer tree takes a while; the tests read it often
    return _commands()


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p != GENERATED)]


@dataclass(frozen=True)
class Use:
    where: str             # file:line
    path: tuple[str, ...]  # the command path it resolved to
    options: tuple[str, ...]
    positionals: tuple[str, ...]
    unknown: str = ""      # a word after the command path that is no subcommand of a group


def code_chunks(text: str):
    """(line number, code, paragraph) for each fenced block line (continuations joined) and each inline
    code span. `paragraph` numbers the prose paragraph, list item or table row a span is in (None in
    a fence): a span of bare options (`--kind`) belongs to the command last named in it."""
    fence, pending, start = False, "", 0
    prose: list[tuple[int, str]] = []
    paragraphs = 0

    def spans():
        nonlocal paragraphs
        paragraphs += 1
        joined = " ".join(line for _, line in prose)
        offsets = [0]
        for _, line in prose:
            offsets.append(offsets[-1] + len(line) + 1)
        for m in re.finditer(r"`([^`]+)`", joined):
            row = next(i for i in range(len(prose)) if offsets[i + 1] > m.start())
            yield prose[row][0], m.group(1), paragraphs
        prose.clear()

    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            yield from spans()
            fence = not fence
            continue
        if fence:
            if not pending:
                start = n
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            yield start, pending + line, None
            pending = ""
            continue
        if not line.strip() or re.match(r"\s*([-*|#]|\d+\.)\s", line + " "):
            yield from spans()
        prose.append((n, line))
    yield from spans()


def segments(code: str) -> list[str]:
    """Shell commands in one line of code: split at ;, &&, $( ), comments, and at a pipe into another
    program (`| jq`), but not at the `|` of a usage line (`[--session ID | --thread NAME]`)."""
    code = re.sub(r"(^|\s)#.*$", "", code)
    parts = re.split(r"&&|;|\$\(|\)|\|\|", code)
    out = []
    for part in parts:
        out += re.split(r"\s\|\s+(?=[a-z.])", part)
    return out


def uses(page: Path):
    """Every invocation on the page. A span of bare options (`--kind`) counts for each command named
    earlier in its paragraph that has the option; one that none of them has counts, wrongly, for the
    last, so the check below reports it."""
    tree = {c.path: c for c in commands()}
    named: dict[int, list[Use]] = {}
    for line, code, paragraph in code_chunks(page.read_text(encoding="utf-8")):
        where = f"{page.relative_to(ROOT)}:{line}"
        for segment in segments(code):
            rest = invocation(segment)
            if rest is not None:
                use = resolve(tree, rest, where)
                if paragraph is not None and use.path:  # bare `stele` names the program
                    named.setdefault(paragraph, []).append(use)
                yield use
            elif paragraph in named and segment.lstrip().startswith("-"):
                options = resolve(tree, segment.split(), where).options
                earlier = named[paragraph]
                for option in options:
                    owners = [u.path for u in earlier if tree[u.path].option(option)] or [earlier[-1].path]
                    for path in dict.fromkeys(owners):
                        yield Use(where, path, (option,), ())


PREFIX = re.compile(r"[A-Z_][A-Z0-9_]*=\S*$|\$|>|sudo|exec")


def invocation(segment: str) -> list[str] | None:
    """The words after `stele` when the segment runs it: `stele` (or a path to it) as the command,
    after any `VAR=value` words or a `$ ` prompt, or after a `--` that hands over to it. Elsewhere
    (`pipx install /path/to/stele`, `--stele .venv/bin/stele`) it is an argument of something else."""
    tokens = re.findall(r'"[^"]*"?|\'[^\']*\'?|\S+', segment)
    if "--" in tokens:
        tokens = tokens[tokens.index("--") + 1:]
    while tokens and PREFIX.match(tokens[0]):
        tokens = tokens[1:]
    if tokens and (tokens[0] == "stele" or tokens[0].endswith("/stele")):
        return tokens[1:]
    return None


def resolve(tree: dict[tuple[str, ...], Command], rest: list[str], where: str) -> Use:
    path: tuple[str, ...] = ()
    options, positionals, unknown = [], [], ""
    for tok in rest:
        bare = tok.strip("[](),.:")
        if OPTION.match(bare):
            options.append(bare.split("=")[0])
            continue
        if not positionals and (*path, bare) in tree:
            path = (*path, bare)
            continue
        if not positionals and tree[path].subcommands and WORD.match(bare) and not unknown:
            unknown = bare
        positionals.append(bare)
    return Use(where, path, tuple(options), tuple(positionals), unknown)


@cache
def all_uses() -> tuple[Use, ...]:
    return tuple(u for page in pages() for u in uses(page))


def test_cli_reference_is_current():
    assert GENERATED.read_text(encoding="utf-8") == markdown(commands()), (
        "docs/cli.md is stale: run `python scripts/cli_reference.py` and commit it")


def test_cli_reference_script_checks_the_same():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_command_and_option_has_help():
    missing = [c.name for c in commands() if not c.summary]
    missing += [f"{c.name} {p.names[0]}" for c in commands() for p in c.params
                if not p.argument and not p.help]
    assert missing == []


def test_every_command_is_shown_in_the_guides():
    shown = {u.path[:n] for u in all_uses() for n in range(1, len(u.path) + 1)}  # a group by its commands
    missing = [c.name for c in commands() if c.path and c.path not in shown]
    assert missing == [], "show these in README.md or a docs/ page (as `stele ...` in code)"


def test_every_option_is_shown_with_its_command():
    shown = {(u.path, o) for u in all_uses() for o in u.options}
    missing = [f"{c.name} {p.names[0]}" for c in commands() for p in c.params
               if not p.argument and p.names[0] not in SHARED | GLOBAL
               and not any((c.path, name) in shown for name in p.names)]
    assert missing == [], "show these options with their command in README.md or a docs/ page"


def test_the_shared_options_are_documented_once_for_all():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(f"`{o}" in readme for o in SHARED)
    assert all(any(c.option(o) for c in commands()) for o in SHARED)


def test_every_hook_event_is_documented():
    hooks_page = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
    missing = [e for e in EVENTS if not re.search(rf"`(stele hook )?{re.escape(e)}[` ]", hooks_page)]
    assert missing == [], "docs/hooks.md should name these `stele hook` events"


def test_the_docs_name_only_commands_options_and_events_that_exist():
    tree = {c.path: c for c in commands()}
    wrong = []
    for use in all_uses():
        command = tree[use.path]
        if use.unknown:
            wrong.append(f"{use.where}: `{command.name} {use.unknown}`: no such command")
        for option in use.options:
            if option not in GLOBAL and command.option(option) is None:
                wrong.append(f"{use.where}: `{command.name}` has no option {option}")
        event = use.positionals[0] if use.path == ("hook",) and use.positionals else ""
        if WORD.match(event) and event not in EVENTS:
            wrong.append(f"{use.where}: `stele hook {event}`: no such event")
    assert wrong == []


def test_the_checker_finds_what_it_should():
    """The parser itself: an invocation in a fence, a continuation line, a span, a pipe, a usage line."""
    tree = {c.path: c for c in commands()}
    text = ("```sh\nstele task claim TASK-1 \\\n    --lease 2h   # a comment --not-an-option\n```\n"
            "Run `stele session preamble [--session ID | --thread NAME]`\n"
            "or `stele recall x --json | jq -r .a`.\n")
    found = []
    for line, code, _ in code_chunks(text):
        for segment in segments(code):
            rest = invocation(segment)
            found += [resolve(tree, rest, str(line))] if rest is not None else []
    assert [(u.where, u.path, u.options) for u in found] == [
        ("2", ("task", "claim"), ("--lease",)),
        ("5", ("session", "preamble"), ("--session", "--thread")),
        ("6", ("recall",), ("--json",)),
    ]
    assert invocation("pre-commit try-repo PATH/TO/stele stele-anchored") is None
    assert invocation("claude mcp add --scope user stele -- stele mcp") == ["mcp"]
    assert invocation("$ STELE_OFF=1 .venv/bin/stele recall x") == ["recall", "x"]
    assert resolve(tree, ["edit", "DOC-1", "--body-file", "x"], "k").options == ("--body-file",)
    assert tree[("edit",)].option("--body-file") is None
    assert resolve(tree, ["task", "frobnicate"], "k").unknown == "frobnicate"


# -- docs/configuration.md: every setting of the template, with its default, and nothing else -------

CONFIG_PAGE = ROOT / "docs" / "configuration.md"


def leaf_settings(node: dict, prefix: str = ""):
    for key, value in node.items():
        if isinstance(value, dict):
            yield from leaf_settings(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def shown(value) -> str:
    """A default as the page writes it: YAML's plain form, `""` for an empty string."""
    if value == "":
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, list) else str(value)


def documented_settings() -> dict[str, str]:
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]*)` \|", CONFIG_PAGE.read_text(encoding="utf-8"), re.M)
    return dict(rows)


def test_every_setting_is_documented_with_its_default():
    from stele.config import defaults

    page = documented_settings()
    wrong = [f"{key}: default {shown(value)}, documented {page.get(key)}"
             for key, value in leaf_settings(defaults()) if page.get(key) != shown(value)]
    assert wrong == [], "docs/configuration.md must list every key with its default"


def test_the_configuration_page_names_only_settings_that_exist():
    from stele.config import defaults

    assert set(documented_settings()) - {k for k, _ in leaf_settings(defaults())} == set()


def test_the_generated_config_points_to_the_configuration_page():
    from stele.config import TEMPLATE

    assert "docs/configuration.md" in TEMPLATE and CONFIG_PAGE.is_file()


def test_the_readme_points_only_inside_the_repository():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "../" not in readme, "the README must work from a clone: no paths outside the repository"
    for link in re.findall(r"\]\(([^)#]+)", readme):
        if not link.startswith(("http://", "https://")):
            assert (ROOT / link).exists(), f"README links to {link}, which is not in the repository"


def test_the_readme_first_screen_has_the_two_set_up_commands():
    first = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## ", 1)[0]
    block = first.split("```sh", 1)[1].split("```", 1)[0]
    assert [line.split()[0:2] for line in block.strip().splitlines()] == [["make", "demo"], ["make", "test"]]


def test_the_readme_first_screen_is_two_commands():
    """A new reader's first screen: what Stele is, then two commands (`make demo`, `make test`)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = text.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first.splitlines() if line.split("#")[0].strip()]
    assert commands == ["make demo", "make test"]
    assert text.index("```sh") < 1200  # on the first screen, not after pages of explanation


def test_record_md_says_which_kind_to_choose_and_which_way_a_link_reads():
    text = (ROOT / "docs" / "record.md").read_text(encoding="utf-8")
    assert "### Choosing a kind" in text and "| `caused-by: [B]` | B caused A |" in text
