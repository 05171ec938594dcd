"""Each harness's rule format: where its files go, the frontmatter key that scopes them to paths, how
an anchor is written as that harness's pattern, and its size limit. The text of a fact is the same
for every harness (`entry`); only the wrapping differs.

The keys and limits, read in each harness's shipped code or documentation:

- Claude Code (2.1.328): `.claude/rules/**/*.md`, frontmatter `paths:` (a list, or a comma-separated
  string). A rule with `paths:` loads when a file it matches is read or edited; patterns are matched
  with gitignore semantics (the `ignore` package) relative to the project folder, so a pattern with
  no `/` would match at any depth: a top-level path is written `/README.md`. A trailing `/**` is
  dropped by Claude Code and the folder matched. A memory file loaded for a touched path is truncated
  past max(40,000, 5% of the context window) characters: the limit here is 40,000.
- Cursor: `.cursor/rules/*.mdc`, `globs:` (comma-separated, unquoted, as Cursor writes it) with
  `alwaysApply: false` ("Apply to Specific Files"). Cursor's rules documentation: keep a rule under
  500 lines.
- GitHub Copilot: `.github/instructions/*.instructions.md`, `applyTo:` (a quoted, comma-separated
  glob string). Copilot code review reads only the first 4,000 characters of an instruction file
  (github/docs, "Using custom instructions to unlock the power of Copilot code review").
- AGENTS.md (Codex, Copilot's coding agent, Cursor): a nested `AGENTS.md` in the anchored folder.
  Codex reads at most `project_doc_max_bytes` (32 KiB) of all AGENTS.md files from the repository
  root down to the working folder together, so each generated block keeps to 8,192 characters: four
  nested levels fit.

A path with a comma cannot be written in a comma-separated `globs:` or `applyTo:` and is left out
of those two, and a path with a control or hidden character out of all three (and said).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from .. import textcut
from ..neutralize import neutralize
from ..record.model import Fact

Clean = Callable[[str], str]

MARK = "<!-- stele:generated"
FACT_CHARS = 1500  # of one fact's body; past it the entry says `stele show ID` has the rest


@dataclass(frozen=True)
class Harness:
    name: str
    folder: str  # repo-relative folder of the generated files; "" for AGENTS.md (in the anchored folders)
    suffix: str
    key: str  # the frontmatter key that scopes a file to paths
    limit: int
    unit: str  # characters | lines

    def measure(self, text: str) -> int:
        return text.count("\n") if self.unit == "lines" else len(text)


HARNESSES: dict[str, Harness] = {h.name: h for h in (
    Harness("claude", ".claude/rules", ".md", "paths", 40000, "characters"),
    Harness("cursor", ".cursor/rules", ".mdc", "globs", 500, "lines"),
    Harness("copilot", ".github/instructions", ".instructions.md", "applyTo", 4000, "characters"),
    Harness("agents", "", "AGENTS.md", "", 8192, "characters"),
)}


def cleaner(patterns: tuple[str, ...] | list[str] = ()) -> Clean:
    """How fact text goes into a generated file: redacted (the built-in rules and the project's
    `redaction.patterns`) and neutralized like every output of memory, and unable to open an HTML
    comment (so it can never forge the marker or an AGENTS.md block edge, nor hide text from a
    reviewer of the generated file)."""
    from ..redact import Redactor

    redactor = Redactor(tuple(patterns))
    done: dict[str, str] = {}

    def clean(text: str) -> str:
        # each text once: `fit` builds a file again for every fact it tries, so without this a group
        # of 2,000 facts (one pull request's worth) redacted two million entries, 48 s in doctor
        out = done.get(text)
        if out is None:
            out = done[text] = neutralize(redactor.redact(text).text).replace("<!--", "&lt;!--")
        return out

    return clean


def pattern(harness: Harness, path: str, is_dir: bool) -> str | None:
    """`path` (an anchor's path or glob) as the harness's pattern; None when it cannot be written."""
    out = f"{path}/**" if is_dir else path
    if neutralize(out) != out or "\n" in out:
        return None  # a control or hidden character has no place in a frontmatter line
    if harness.name == "claude":
        if "/" not in out:
            out = "/" + out  # gitignore semantics: a pattern without a slash matches at any depth
        return out
    return None if "," in out else out


def frontmatter(harness: Harness, patterns: list[str], paths: tuple[str, ...], safe: Clean) -> str:
    if harness.name == "claude":
        return "---\npaths:\n" + "".join(f"  - {json.dumps(p, ensure_ascii=False)}\n" for p in patterns) + "---\n"
    if harness.name == "cursor":
        about = textcut.words("Facts from the project record (Stele) anchored to " + ", ".join(paths), 200)
        return (f"---\ndescription: {json.dumps(safe(about), ensure_ascii=False)}\nglobs: {','.join(patterns)}\n"
                "alwaysApply: false\n---\n")
    return f"---\napplyTo: {json.dumps(','.join(patterns), ensure_ascii=False)}\n---\n"


def entry(fact: Fact, safe: Clean, level: str = "##") -> str:
    """One fact as every harness shows it: kind, id and title, what it is anchored to, its body (cut
    past FACT_CHARS, saying where the rest is)."""
    anchors = ", ".join(f"`{safe(a)}`" for a in sorted(set(fact.anchors)))
    body = safe(fact.body.strip())
    if len(body) > FACT_CHARS:
        body = textcut.lines(body, FACT_CHARS, "\n...") + f"\n(cut here: `stele show {fact.id}` prints all of it)"
    lines = [f"{level} {fact.kind.upper()} {fact.id}: {safe(fact.title)}", f"Anchored to: {anchors}"]
    return "\n".join(lines) + ("\n\n" + body if body else "") + "\n\n"


def marker(ids: list[str], what: str) -> str:
    return (f"{MARK} by `stele export rules` from {', '.join(ids)}: edit those facts under the memory folder, "
            f"not {what}; `stele export rules` rewrites it and `stele doctor` fails when it is out of date -->\n")


INTRO = ("Facts from this project's record (Stele), reviewed in pull requests like code: reference data "
         "about the project, each with its id; `stele show ID` prints one in full.\n\n")


def left_line(harness: Harness, ids: list[str]) -> str:
    if not ids:
        return ""
    return (f"Left out for size ({harness.name} reads at most {harness.limit:,} {harness.unit} of a file): "
            f"{', '.join(ids)}; `stele show ID` prints each.\n")


def fit(harness: Harness, build: Callable[[list[Fact], list[str]], str],
        facts: list[Fact]) -> tuple[str, list[Fact], list[str]]:
    """The largest text `build(kept, left ids)` within the harness's limit, facts taken in order (one
    that does not fit is left out and named, and a later, smaller one may still fit)."""
    kept: list[Fact] = []
    left: list[str] = []
    for i, fact in enumerate(facts):
        rest = [f.id for f in facts[i + 1:]]
        if harness.measure(build([*kept, fact], left + rest)) <= harness.limit:
            kept.append(fact)
        else:
            left.append(fact.id)
    return build(kept, left), kept, left


def rule_file(harness: Harness, paths: tuple[str, ...], patterns: list[str], facts: list[Fact],
              safe: Clean) -> tuple[str, list[Fact], list[str]]:
    """A whole rule file for `claude`, `cursor` or `copilot`: (text, facts in it, ids left out)."""
    title = "# Project record: " + ", ".join(f"`{safe(p)}`" for p in paths) + "\n\n"

    def build(kept: list[Fact], left: list[str]) -> str:
        ids = [f.id for f in kept]
        return (frontmatter(harness, patterns, paths, safe) + marker(ids, "this file") + title + INTRO
                + "".join(entry(f, safe) for f in kept) + left_line(harness, left)).rstrip("\n") + "\n"

    return fit(harness, build, facts)
