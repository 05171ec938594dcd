"""`stele hook pre-edit` and `stele hook post-edit`: the facts anchored to a file, at the moment the
agent is about to change it, and a session log line once it has.

An anchor makes editing the file the trigger, so a fact reaches the agent even when nothing in the
conversation would have retrieved it. Risks and constraints come first. A `path::Symbol` anchor counts when the edit
touches the symbol's lines (found with `anchors/symbols.py`), or when either cannot be located. Each fact is
shown once per session, and the session's first edit carries a one-time nudge to check the record
before changing settled things.
In every harness measured (tests/e2e) the pre-edit text reaches the model with the tool's result, after
the edit is applied. With `hooks.hold_edits` on, an edit that lands where a constraint or risk is
anchored is refused once with the facts as the reason (Claude Code, Codex, and Copilot running
Claude's hooks), so the model reads them before the change; a retry goes through. Off by default.
A fact with a `check:` (anchors/codecheck.py) is also run on what the edit is about to write (the
tool's arguments: `proposal.py`), every time, whether the fact was shown before or not: a violation is
said first, with the fact, the file and the line; where the fact says `enforce: deny` and the harness
takes a reasoned refusal (Claude Code, Codex, Copilot running Claude's hooks) the edit is refused with
that text as the reason. A check that cannot run is left to `stele doctor` (a hook never blocks on it).
Gemini cannot add context before a tool runs (BeforeTool has no additionalContext) but can after it
(AfterTool), and Copilot's own hooks likewise at postToolUse: there the same text comes with
post-edit. The edit is logged synchronously: an async hook dies with a session that ends right after
the edit (`codex exec`, a fast Claude turn).
"""
from __future__ import annotations

from pathlib import Path

from .. import treefile
from ..render.facts import TITLE, Line, block, frame
from . import harness, lookup, state
from .run import Context, Reply, run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable

    from ..anchors.codecheck import Violation

MAX_FACTS = 8
BODY_CHARS = 400
NUDGE = ("First edit of this session: where this change touches something the record has settled, "
         "check it first (`stele recall \"topic\"`, `stele show ID`) and record what changes with "
         "`stele remember` or `stele supersede`.")


def repo_paths(ctx: Context) -> list[str]:
    """The payload's edited files relative to the repository root; files outside it are dropped."""
    out = [rel for rel in (repo_path(ctx, raw) for raw in ctx.payload.edited_paths()) if rel is not None]
    return list(dict.fromkeys(out))


def repo_path(ctx: Context, raw: str) -> str | None:
    """A path as the payload sent it, relative to the repository root; None outside it."""
    base = ctx.payload.cwd or Path.cwd()
    path = Path(raw.replace("\\", "/"))
    rel = ctx.project.rel(path if path.is_absolute() else base / path)
    return None if rel.startswith(("/", "../")) or rel in ("", ".") else rel


def edited_lines(ctx: Context, rel: str) -> tuple[str, list[tuple[int, int]]] | None:
    """`rel` as it is now and the line ranges an edit replaces in it (from the tool's `old_string`s), or
    None when that cannot be told (a whole-file write, a patch, a file not yet there): then the whole
    file counts as touched."""
    ti = ctx.payload.tool_input
    given = [ti.get("old_string"), ti.get("old_str"), ti.get("old_text")]
    given += [e.get("old_string") for e in ti.get("edits") or () if isinstance(e, dict)]
    olds: list[str] = [o for o in given if isinstance(o, str) and o.strip()]
    if not olds:
        return None
    try:
        text = treefile.read_text(ctx.project.root / rel, root=ctx.project.root)
    except (OSError, UnicodeDecodeError):
        return None
    spans = []
    for old in olds:
        at = text.find(old)
        if at < 0:
            return None
        first = text.count("\n", 0, at) + 1
        spans.append((first, first + old.count("\n")))
    return text, spans


def symbol_filter(ctx: Context, paths: list[str]) -> Callable[[str, str], bool]:
    """`touches(anchor_path, symbol)` for `lookup.anchored`: a symbol anchor counts when the edit
    overlaps the symbol's lines, or when either cannot be located (precision never hides a fact).
    Each edited file is read once, however many symbol anchors it has."""
    from ..anchors import symbols

    edits = {p: edited_lines(ctx, p) for p in paths}

    def touches(anchor_path: str, symbol: str) -> bool:
        edit = edits.get(anchor_path)
        if edit is None:
            return True
        text, spans = edit
        where = symbols.find(text, symbol, anchor_path)
        return where is None or any(a <= where[1] and where[0] <= b for a, b in spans)

    return touches


def edit_context(ctx: Context, paths: list[str]) -> Reply | None:
    if not paths:
        return None
    seen = ctx.seen()
    touches = symbol_filter(ctx, paths)
    with lookup.open_index(ctx.project, fresh=False) as index:
        found = lookup.anchored(index, paths, touches, ctx.project)
        broken = checked(ctx, index, found, touches) if ctx.event == "pre-edit" else []
    denied = deny(ctx, broken)
    if denied is not None:
        return denied
    facts = [f for f in found if f.id not in seen.injected]
    held = hold(ctx, facts, seen)
    if held is not None:
        return held
    mine = set(ctx.claim(f.id for f in facts))  # parallel tool calls fire parallel edit hooks
    facts = [f for f in facts if f.id in mine]
    nudge = not seen.edit_nudged and ctx.payload.session is not None
    if nudge:
        try:
            with state.update(ctx.project, ctx.payload.session) as st:
                nudge = not st.edit_nudged  # a parallel hook may have nudged already
                st.edit_nudged = True
        except OSError as e:  # unrecorded, the nudge would come with every edit: the facts still do
            nudge = False
            ctx.unwritable("the first-edit nudge, so it is left out", e)
    if not facts and not nudge and not broken:
        return None
    shown = facts[:MAX_FACTS]
    sections = [broken_text(broken, "Stele check: this edit breaks")] if broken else []
    if shown:
        more = len(facts) - len(shown)
        sections.append("Anchored to the file(s) being edited, risks and constraints first:\n"
                        + "\n".join(block(f, BODY_CHARS) for f in shown)
                        + (f"\n({more} more: `stele list --anchor {paths[0]}`)" if more > 0 else ""))
    if nudge:
        sections.append(NUDGE)
    return Reply(frame(TITLE, sections), tuple(f.id for f in shown) + tuple(f.id for f, _ in broken))


Broken = list[tuple[Line, list["Violation"]]]


def checked(ctx: Context, index: lookup.Opened, found: list[Line],
            touches: Callable[[str, str], bool]) -> Broken:
    """The facts among `found` whose checks the proposed edit breaks, each with its violations. Only
    facts that have a check cost more than one catalog query; each is checked on the files it is
    anchored to."""
    specs = index.catalog.checks([f.id for f in found])
    if not specs:
        return []
    from ..anchors import codecheck
    from .proposal import proposals

    planned = proposals(ctx.payload.tool_input, lambda raw: repo_path(ctx, raw), ctx.project.root)
    by_id = {f.id: f for f in found}
    paths: dict[str, list[str]] = {}  # fact id -> the planned files it is anchored to: one turn each
    for path in planned:
        for fact in lookup.anchored(index, [path], touches):
            if fact.id in specs:
                paths.setdefault(fact.id, []).append(path)
    out: dict[str, list[Violation]] = {}
    # slow patterns cost their fact's share, not the hook's answer nor the other facts' checks
    with codecheck.budget(codecheck.EDIT_BUDGET, len(paths)):
        for fid, where in paths.items():
            with codecheck.turn(fid):
                for path in where:
                    plan = planned[path]
                    violations, _ = codecheck.evaluate(codecheck.load(specs[fid]), path, plan.added, plan.after)
                    out.setdefault(fid, []).extend(violations)
    return [(by_id[i], v) for i, v in out.items() if v and i in by_id]


def broken_text(broken: Broken, opening: str) -> str:
    """Each fact and its violations; a fact whose title or check text doctor would flag (text addressed
    to the agent, a download-and-run) is marked, as its block is (`render/facts.block`)."""
    from ..neutralize import flag_mark

    lines = []
    for fact, violations in broken:
        said = {t for v in violations for t in (v.check.message, v.check.pattern)}
        mark = flag_mark("\n".join([fact.title, *sorted(said)]), fact.kind)
        lines.append(f"{mark}{opening} the check of {fact.kind} {fact.id} ({fact.title}):")
        lines += [f"  {v.describe()}" for v in violations]
    return "\n".join(lines)


def deny(ctx: Context, broken: Broken) -> Reply | None:
    """Refuse the edit when it breaks a check whose fact says `enforce: deny`, where the harness takes a
    reasoned refusal; the reason names the fact and the lines, so the model can write it differently."""
    if ctx.event != "pre-edit" or ctx.payload.form not in harness.CAN_HOLD:
        return None
    denying = [(f, [v for v in vs if v.check.enforce == "deny"]) for f, vs in broken]
    denying = [(f, vs) for f, vs in denying if vs]
    if not denying:
        return None
    text = (broken_text(denying, "Stele refused this edit: it breaks")
            + "\nThe record says these rules are enforced: write the change so that it respects them, or "
            "change the fact in a reviewed commit (`stele show ID`).")
    return Reply(text, tuple(f.id for f, _ in denying), hold=True)


HOLD_KINDS = frozenset({"constraint", "risk"})


def hold(ctx: Context, facts: list, seen: state.SessionState) -> Reply | None:
    """Hold the edit once (hooks.hold_edits) when a constraint or risk not yet held for this session is
    anchored where it lands: refused with the facts as the reason, so the model reads them before the
    change. Only in a pre-edit hook of a harness that takes a reasoned refusal, only with a session
    (without one, a retry would be held again)."""
    if (ctx.event != "pre-edit" or ctx.payload.form not in harness.CAN_HOLD or ctx.payload.session is None
            or not ctx.project.config["hooks.hold_edits"]):
        return None
    weighty = [f for f in facts if f.kind in HOLD_KINDS and f.id not in seen.held]
    if not weighty:
        return None
    try:
        with state.update(ctx.project, ctx.payload.session) as st:
            weighty = [f for f in weighty if f.id not in st.held]
            st.held += [f.id for f in weighty]
    except OSError as e:  # a hold not recorded would hold every retry: inform instead
        ctx.unwritable("the hold, so the edit is not held", e)
        return None
    if not weighty:
        return None
    text = ("Stele held this edit once (hooks.hold_edits): the record has a constraint or risk where it "
            "lands. Read it, and if the change respects it, make the same edit again (it will go through):\n"
            + "\n".join(block(f, BODY_CHARS) for f in weighty))
    return Reply(text, tuple(f.id for f in weighty), hold=True)


def pre_edit(ctx: Context) -> Reply | None:
    return edit_context(ctx, repo_paths(ctx))


def log_edits(ctx: Context, session: str, paths: list[str]) -> None:
    """One session log line per file and session (the log says what changed, not every keystroke)."""
    from ..session import sessions

    try:
        with state.update(ctx.project, session) as st:
            new = [p for p in paths if p not in st.edited]
            st.add_edited(new)
    except OSError as e:
        new = paths  # the log line matters more than its dedup
        ctx.unwritable("which files were edited, so each edit is logged", e)
    if not new:
        return
    sessions.log_edit(ctx.project, session, new, harness.AGENT_NAMES[ctx.harness])


def post_edit(ctx: Context) -> Reply | None:
    paths = repo_paths(ctx)
    if paths and ctx.payload.session:
        log_edits(ctx, ctx.payload.session, paths)
    if harness.can_inject(ctx.payload.form, "post-edit") and not harness.can_inject(ctx.payload.form, "pre-edit"):
        return edit_context(ctx, paths)
    return None


def main_pre(args: Namespace) -> int:
    """The facts anchored to the file the agent is about to change, risks and constraints first (and,
    in a harness whose earlier hooks cannot speak, what they would have said: hooks/catchup.py)."""
    from .catchup import first_tool

    return run(args, first_tool(pre_edit))


def main_post(args: Namespace) -> int:
    """A session log line for the changed file (and, where only post-edit can inject, its facts)."""
    return run(args, post_edit)
