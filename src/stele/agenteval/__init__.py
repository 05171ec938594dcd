"""`stele eval --agent`: what the memory changes in what an agent does.

A suite of tasks runs in the real harness binary, in throwaway clones of the current commit,
once per arm (`with` Stele's hooks installed, `without` them) and run; the outcome of each run is
checked on what the agent left behind (its diff, the commands that must pass, the ids it cited), and
the pass rates of the two arms are compared with intervals. The layers, upstream first: `suite`
(the YAML format), `stats` (intervals), `harnesses` (command lines and output per harness),
`workspace` (the throwaway clones), `outcome` (the checks), `runner` (the loop and its budgets),
`results` (what is written under `.stele/eval/agent/RUN/`), `starter` (`--init`).
"""
