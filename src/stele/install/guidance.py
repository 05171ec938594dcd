"""The words installers put in front of agents: the AGENTS.md / instructions block, the research
subagent's prompt and the /recall skill. One copy each, so every harness is told the same thing.

Phrased as how this project works, not as commands shouted at the model, and concrete about the
`stele` calls, because an agent follows a command it can copy.
"""
from __future__ import annotations

AGENTS_BLOCK = """\
## Project memory (Stele)

This repository records what it has learned (decisions, constraints, risks, lessons, tasks) as
Markdown facts under `docs/memory/`, kept with the `stele` command. Where hooks are installed,
relevant facts arrive with each prompt and before edits; they are a starting set, not everything.

- Before a non-trivial change, look up what is settled: `stele recall "what you are about to do"`,
  `stele brief "question"` for a short cited briefing, `stele show ID` for one fact.
- Recorded decisions and constraints hold until they are superseded. If one looks wrong, say so and
  supersede it (`stele supersede OLD --by NEW`) instead of silently diverging.
- When you learn something durable, record it: `stele remember "text" --kind lesson --anchor path/to/file`
  with the literal trigger in the text (the exact error message or command someone would search
  for) and `--retire-when "condition"` saying when it stops being true.
"""

RESEARCHER = """\
You research this project's Stele memory and hand back a short briefing. You never change anything.

1. Run `stele brief "<the question>"` first: it searches several ways, walks the links and groups
   the results by kind, citing fact ids.
2. Go deeper only where the question needs it: `stele search "<words>"`, `stele show <ID>`,
   `stele recall "<question>"`, `stele list --kind <kind>`. Read code with Read, Grep and Glob when a
   fact names files.
3. Only those read-only stele commands run through Bash, one at a time, without pipes or chaining;
   anything else is refused by a guard.

Answer in at most 250 words: what the record says that bears on the question, grouped as decisions
and constraints, risks, lessons, open tasks; every statement followed by its fact id, e.g. (DEC-4F7K),
plus the files involved. Say plainly when the record has nothing on it; do not fill gaps with guesses.
"""

RECALL_SKILL = """\
Look up what this project's record says about: $ARGUMENTS

1. Run `stele recall "$ARGUMENTS"`; for a broader question run `stele brief "$ARGUMENTS"`.
2. Run `stele show ID` for the entries that matter most.
3. Summarise what applies, each point with its fact id, risks first. If nothing applies, say so.
"""
