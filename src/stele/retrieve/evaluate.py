"""`stele eval CASES.yaml`: score recall on this repository's own record.

A case is a prompt (and the files being edited) with what must, and must not, come back: the format
this project's own evaluations use (docs/eval.md). Every case runs in this process over one open
index, the way the prompt hook would answer it, with the case file's `today:` pinned so expiry and
review dates hold still. A case that fails says why in `stele why`'s terms: where the expected fact
ranked, which rule or cap kept it out, or that nothing led to it.

The checks are exactly those of the maintainers' runner, so a set scored here and there gets the same
pass count: the window is the risk callout followed by the entries, at most 20; `expect_top` means
the callout or the first three entries; an `offtopic` case passes only with no callout and at most
`max_window` entries (default 0); a `short` case without `expect` passes only when nothing comes back.
"""
from __future__ import annotations

import datetime as dt
import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SteleError, UsageError
from ..project import Project
from ..textcut import counted

WINDOW = 20
TOP = 3
LIST_KEYS = ("files", "expect", "expect_top", "callout", "no_callout", "absent")
KEYS = frozenset({"id", "type", "prompt", "max_window", "below", "note", "session", *LIST_KEYS})
TYPES = ("lexical", "paraphrase", "walk", "risk", "identifier", "short", "error", "anchor", "container",
         "lifecycle", "session", "offtopic")
UNSCORED_WINDOW = ("offtopic", "short")  # not counted in the mean window: they should bring nothing


@dataclass
class Case:
    id: str
    type: str
    prompt: str = ""
    files: list[str] = field(default_factory=list)
    expect: list[str] = field(default_factory=list)
    expect_top: list[str] = field(default_factory=list)
    callout: list[str] = field(default_factory=list)
    no_callout: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    below: list[tuple[str, str]] = field(default_factory=list)
    max_window: int | None = None  # at most this many entries (offtopic cases: 0 unless given)
    session: str = ""  # cases sharing a session run in file order, as one session's prompts


@dataclass
class Cases:
    path: str
    today: dt.date | None
    cases: list[Case]


@dataclass
class Result:
    case: Case
    fails: list[str]
    mode: str
    window: list[str]
    elapsed_ms: int
    why: list[str] = field(default_factory=list)  # for a failed case: what `stele why` shows about it

    @property
    def ok(self) -> bool:
        return not self.fails

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.case.id, "type": self.case.type, "ok": self.ok, "fails": self.fails,
                "mode": self.mode, "window": self.window, "elapsed_ms": self.elapsed_ms, "why": self.why}


@dataclass
class Report:
    cases: list[Result]
    elapsed_ms: int = 0

    @property
    def passed(self) -> int:
        return sum(r.ok for r in self.cases)

    @property
    def percent(self) -> float:
        return 100 * self.passed / len(self.cases) if self.cases else 100.0

    def by_type(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(lambda: {"passed": 0, "total": 0})
        for r in self.cases:
            out[r.case.type]["total"] += 1
            out[r.case.type]["passed"] += r.ok
        return dict(sorted(out.items()))

    @property
    def mean_window(self) -> float:
        sizes = [len(r.window) for r in self.cases if r.case.type not in UNSCORED_WINDOW]
        return statistics.mean(sizes) if sizes else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "total": len(self.cases), "by_type": self.by_type(),
                "mean_window": round(self.mean_window, 2), "elapsed_ms": self.elapsed_ms,
                "cases": [r.as_dict() for r in self.cases]}


# -- reading a case file -----------------------------------------------------------------------------

def load_cases(path: Path, root: Path | None = None) -> Cases:
    """The cases of a YAML file: a mapping with `queries:` (or `cases:`) and an optional `today:`, or a
    bare list. Every problem is one error naming the file, the case and the key."""
    from ..config import load_yaml

    shown = str(path if root is None or not path.is_absolute() else _rel(path, root))
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{shown}: cannot read the case file ({e.strerror or e})") from None
    data = load_yaml(text, shown)
    today = None
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"today", "queries", "cases"})
        if unknown:
            raise SteleError(f"{shown}: unknown top-level key {unknown[0]!r} (use today and queries)")
        today = _date(data.get("today"), f"{shown}: today")
        data = data.get("queries", data.get("cases"))
    if not isinstance(data, list):
        raise SteleError(f"{shown}: expected a list of cases under `queries:` (see docs/eval.md)")
    cases, seen = [], set()
    for n, raw in enumerate(data, 1):
        case = _case(raw, f"{shown}: case {n}")
        if case.id in seen:
            raise SteleError(f"{shown}: case {n}: the id {case.id!r} is used twice")
        seen.add(case.id)
        cases.append(case)
    return Cases(shown, today, cases)


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _date(value: Any, where: str) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise SteleError(f"{where} {value!r} is not a date: write it as YYYY-MM-DD") from None


def _case(raw: Any, where: str) -> Case:
    if not isinstance(raw, dict):
        raise SteleError(f"{where}: a case is a mapping with at least `id` and `prompt` or `files`")
    if not isinstance(raw.get("id"), (str, int)) or not str(raw["id"]).strip():
        raise SteleError(f"{where}: `id` is missing: give every case a short unique id")
    where = f"{where} ({raw['id']})"
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise SteleError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(KEYS))})")
    case = Case(id=str(raw["id"]), type=str(raw.get("type") or "lexical"))
    prompt = raw.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        raise SteleError(f"{where}: `prompt` must be text")
    case.prompt = prompt or ""
    for key in LIST_KEYS:
        value = raw.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SteleError(f"{where}: `{key}` must be a list of {'paths' if key == 'files' else 'ids'}")
        setattr(case, key, list(value))
    below = raw.get("below") or []
    if not isinstance(below, list) or not all(isinstance(p, list) and len(p) == 2 for p in below):
        raise SteleError(f"{where}: `below` must be a list of [A, B] pairs (if A appears, B is above it)")
    case.below = [(str(a), str(b)) for a, b in below]
    max_window = raw.get("max_window")
    if max_window is not None and (not isinstance(max_window, int) or isinstance(max_window, bool)
                                   or not 0 <= max_window <= WINDOW):
        raise SteleError(f"{where}: `max_window` must be a whole number from 0 to {WINDOW}")
    case.max_window = max_window
    session = raw.get("session") or ""
    if not isinstance(session, (str, int)):
        raise SteleError(f"{where}: `session` must be a short label shared by the cases of one session")
    case.session = str(session)
    if not case.prompt and not case.files:
        raise SteleError(f"{where}: give a `prompt`, or `files` being edited")
    return case


# -- scoring ----------------------------------------------------------------------------------------

def check(case: Case, out: dict[str, Any], shown: frozenset[str] = frozenset()) -> list[str]:
    """The failed checks of one case against a recall's JSON (empty: it passes). `shown`: what earlier
    prompts of the case's session delivered; the agent has those, so they count as delivered."""
    entries = [e["id"] for e in out.get("entries", [])]
    risks = [r["id"] for r in out.get("risks", [])]
    window = risks + [e for e in entries if e not in risks]
    rank = {i: n for n, i in enumerate(window)}
    fails = []
    if len(window) > WINDOW:
        fails.append(f"returned {len(window)} entries, more than {WINDOW}")
    limit = case.max_window if case.max_window is not None else (0 if case.type == "offtopic" else WINDOW)
    if case.type == "offtopic" and risks:
        fails.append(f"offtopic prompt raised risk callouts {risks[:3]}")
    if len(window) > limit and limit < WINDOW:
        fails.append(f"{'offtopic prompt' if case.type == 'offtopic' else 'it'} injected "
                     f"{counted(len(window), 'entry', 'entries')} (at most {limit}): {window[:5]}")
    if case.type == "short" and not case.expect and window:
        fails.append(f"short prompt should inject nothing, got {window[:5]}")
    fails += [f"missing {i}" for i in case.expect if i not in rank and i not in shown]
    fails += [f"{i} not in top {TOP}" for i in case.expect_top
              if i not in risks and i not in entries[:TOP] and i not in shown]
    fails += [f"{i} not in risk callout" for i in case.callout if i not in risks]
    fails += [f"{i} wrongly in risk callout" for i in case.no_callout if i in risks]
    fails += [f"{i} should be absent" for i in case.absent if i in rank]
    fails += [f"{a} ranked above {b}" for a, b in case.below
              if a in rank and (b not in rank or rank[a] < rank[b])]
    return fails


def run(project: Project, cases: Cases, only: str | None = None) -> Report:
    """Every case (or those whose id or type starts with `only`) over one open index."""
    from .explain import describe

    chosen = [c for c in cases.cases if not only or c.id.startswith(only) or c.type.startswith(only)]
    if not chosen:
        raise UsageError(f"no case in {cases.path} has an id or type starting with {only!r}")
    t0 = time.monotonic()
    results = []
    with opened(project, cases) as (index, settings):
        for case, result, window, fails in replay(index, chosen, settings):
            res = Result(case, fails, result.mode, window, result.elapsed_ms)
            if fails:
                res.why = explain_miss(case, describe(result), index.catalog)
            results.append(res)
    return Report(results, int((time.monotonic() - t0) * 1000))


@contextmanager
def opened(project: Project, cases: Cases) -> Iterator[tuple[Any, Any]]:
    """The open index and the settings a run of `cases` reads, with the day pinned to their `today`."""
    from .. import delivery
    from ..index.build import open_index
    from .settings import Settings

    with open_index(project) as index, delivery.pinned(cases.today or delivery.today()):
        yield index, Settings.from_config(project.config)


def replay(index: Any, cases: list[Case], settings: Any) -> Iterator[tuple[Case, Any, list[str], list[str]]]:
    """Each case's recall, as the prompt hook would give it, with its window (callouts, then entries)
    and what failed: cases sharing a `session` run in order as one session's prompts, each excluding
    what the earlier ones delivered (the hook's rule). The caller holds the index and the pinned day."""
    from .delivered import Delivered
    from .recall import recall_in

    sessions: dict[str, Delivered] = defaultdict(Delivered)
    for case in cases:
        had = sessions[case.session] if case.session else Delivered()
        result = recall_in(index, case.prompt, case.files, settings, exclude=had.shown, warned=had.warned)
        out = result.as_dict()
        fails = check(case, out, had.shown)
        risks = [r["id"] for r in out["risks"]]
        window = risks + [e["id"] for e in out["entries"]]
        if case.session:
            sessions[case.session] = had.add(window, risks)
        yield case, result, window, fails


def explain_miss(case: Case, why: dict[str, Any], catalog: Any) -> list[str]:
    """For each id the case wanted and did not get: where `stele why` shows it went."""
    if why.get("gate", {}).get("skipped"):
        return ["the prompt was under the length gate and names no id or file: nothing was searched"]
    scores = why.get("scores", [])
    ranked = {s["id"]: n for n, s in enumerate(scores, 1)}
    seeds = {s["id"]: s for s in why.get("seeds", [])}
    filtered = {f["id"]: f["why"] for f in why.get("filtered", [])}
    candidates = {c["id"]: c for c in why.get("candidates", [])}
    cut = set(why.get("cut", []))
    trimmed = {t["id"] for t in why.get("trimmed", [])}
    window_cut = why.get("floors", {}).get("window_cut", 0)
    wanted = list(dict.fromkeys(case.expect + case.expect_top + case.callout))
    lines = []
    for i in wanted:
        if i in filtered:
            lines.append(f"{i}: found, but not injected ({filtered[i]})")
        elif i in cut:
            lines.append(f"{i}: ranked {ranked.get(i, '?')} of {len(scores)}, cut by the {WINDOW}-entry cap")
        elif i in trimmed:
            s = scores[ranked[i] - 1] if i in ranked else {"score": "?"}
            lines.append(f"{i}: ranked {ranked.get(i, '?')} of {len(scores)} (score {s['score']}), left out: "
                         f"under {window_cut:g} of the best score")
        elif i in ranked:
            s = scores[ranked[i] - 1]
            parts = ", ".join(f"{k} {v:+g}" for k, v in s.get("parts", {}).items()) if s.get("parts") else ""
            lines.append(f"{i}: ranked {ranked[i]} of {len(scores)} (score {s['score']:g}"
                         + (f": {parts}" if parts else "") + ")")
        elif i in seeds:
            lines.append(f"{i}: a seed, but not in the window")
        elif i in candidates:
            lines.append(f"{i}: found by search, {candidates[i]['why']}")
        else:
            lines.append(f"{i}: not reached: " + _no_path(i, seeds, catalog))
    for key, label in (("absent", "should be absent"), ("no_callout", "wrongly called out")):
        for i in getattr(case, key):
            if i in ranked or i in {r["id"] for r in why.get("risks", [])}:
                how = next((s.get("via") for s in scores if s["id"] == i), None)
                lines.append(f"{i}: {label}; " + (f"reached from {how['from']} via {how['rel']}" if how
                                                   else "a seed: it matched the prompt itself"))
    if case.type == "offtopic" and seeds:
        best = max(seeds.values(), key=lambda s: s.get("strength", 0))
        lines.append(f"offtopic: {counted(len(seeds), 'seed')} passed the floors; the strongest is {best['id']} "
                     f"(strength {best.get('strength')})")
    return lines


def _no_path(fact_id: str, seeds: dict[str, Any], catalog: Any) -> str:
    """Why the walk never reached a fact: it matched nothing, and no edge joins it to a seed."""
    node = catalog.nodes([fact_id]).get(fact_id)
    if node is None:
        return "it is not in the index (a typo in the case, or a fact that no longer exists)"
    neighbours = sorted({dst if src == fact_id else src for src, _, dst in catalog.edges([fact_id])})
    if not seeds:
        return "no search hit reached the relevance floors (`stele why` shows the best and their figures)"
    if neighbours:
        return (f"it did not match the prompt, and none of its neighbours ({', '.join(neighbours[:5])}) "
                f"was a seed (seeds: {', '.join(list(seeds)[:5])})")
    return f"it did not match the prompt and has no edges to walk (seeds: {', '.join(list(seeds)[:5])})"


# -- a starter file --------------------------------------------------------------------------------

STARTER = "eval.yaml"  # in the memory folder, beside the facts it tests (never read as a fact)
OFFTOPIC_PROMPT = "write a haiku about autumn leaves drifting across a quiet pond"
STARTER_EACH = 4


def starter_text(project: Project) -> str:
    """A commented case file of questions a user would ask: the prompts really asked in this
    repository's sessions (with the facts delivered for them, those then used first) when the log has
    any, else a sentence of each fact's body (never its title: a title finds its own fact by
    construction); plus walks, anchors and an off-topic prompt. No case expects what the ranker keeps
    out by design: a component (weight 0), a container, a `manual` fact, anything withheld."""
    import json

    from .. import delivery
    from ..kinds import KINDS
    from ..record.load import load

    record = load(project)
    on = delivery.today()
    eligible = {f.id: f for f in record.facts.values() if delivery.withheld(f, on) is None
                and KINDS[f.kind].weight > 0 and not KINDS[f.kind].is_container}
    # the kinds an agent most needs first (decisions, rules, risks)
    active = sorted(eligible.values(), key=lambda f: (-KINDS[f.kind].weight, f.kind, f.id))
    q = json.dumps
    asked = asked_cases(project, eligible)
    blocks = [f"  # asked in session {sid}: the facts delivered for it{' and then used' if used else ''}\n"
              f"  - id: asked-{n}\n    type: paraphrase\n    prompt: {q(prompt)}\n    expect: [{', '.join(ids)}]"
              for n, (sid, prompt, ids, used) in enumerate(asked, 1)]
    if not asked:
        kinds_done: dict[str, int] = {}
        for f in active:
            phrase = paraphrase(f.title, f.body)
            if phrase is None or kinds_done.get(f.kind, 0) >= 2 or len(blocks) >= STARTER_EACH * 2:
                continue
            kinds_done[f.kind] = kinds_done.get(f.kind, 0) + 1
            blocks.append(f"  # {f.kind} {f.id}: asked in words from its body, not its title\n"
                          f"  - id: body-{f.id.lower()}\n    type: paraphrase\n    prompt: {q(phrase)}\n"
                          f"    expect: [{f.id}]")
    walks = 0
    for f in active:
        phrase = paraphrase(f.title, f.body)
        if walks >= STARTER_EACH // 2 or phrase is None:
            continue
        other = next((dst for _, dst in f.targets() if dst in eligible), None)
        if other:
            walks += 1
            blocks.append(f"  # walk: {f.id} links to {other}; asking about the first must bring both\n"
                          f"  - id: walk-{f.id.lower()}\n    type: walk\n    prompt: {q(phrase)}\n"
                          f"    expect: [{f.id}, {other}]")
    anchors = 0
    for f in active:
        files = (a.split("::")[0] for a in f.anchors if "*" not in a)
        path = next((x for x in files if (project.root / x).is_file()), None)
        if path and anchors < STARTER_EACH // 2:
            anchors += 1
            blocks.append(f"  # anchor: editing {path} must bring {f.id}, anchored there\n"
                          f"  - id: anchor-{f.id.lower()}\n    type: anchor\n    files: [{q(path)}]\n"
                          f"    expect: [{f.id}]")
    blocks.append(f"  # offtopic: a prompt the record has nothing on must bring nothing at all\n"
                  f"  - id: offtopic-1\n    type: offtopic\n    prompt: {q(OFFTOPIC_PROMPT)}")
    source = "the prompts of this repository's sessions" if asked else "the record's fact bodies"
    return ("# Cases for `stele eval docs/memory/eval.yaml` (docs/eval.md): what recall must bring back.\n"
            f"# Drawn from {source} by `stele eval --init`; add the questions your team really asks, the\n"
            "# error strings it meets, and the files whose risks must never be missed. Run it in CI with\n"
            "# `stele eval docs/memory/eval.yaml --min 90`.\n"
            f"today: {on.isoformat()}   # expiry and review dates are judged as of this day\n"
            "queries:\n" + "\n\n".join(blocks) + "\n")


ASKED_MAX = 8
PARAPHRASE_WORDS = 14


def asked_cases(project: Project, eligible: dict[str, Any]) -> list[tuple[str, str, list[str], bool]]:
    """(session, prompt, expected ids, whether they were used) for the distinct prompts the prompt hook
    answered: expected are the delivered facts the session then used (edited a file they are anchored
    to), else the first fact delivered; only facts the ranker may deliver today."""
    from ..anchors.paths import covers
    from ..session import wal
    from ..session.sessions import DELIVERED, delivered_ids, delivered_prompt, edited_paths, event, order_key

    by_session: dict[str, list[Any]] = {}
    for entry in wal.read_all(project, wal.ReadReport()):
        by_session.setdefault(entry.session, []).append(entry)
    out: list[tuple[str, str, list[str], bool]] = []
    seen: set[str] = set()
    for sid, entries in sorted(by_session.items()):
        entries.sort(key=order_key)
        for n, entry in enumerate(entries):
            prompt = delivered_prompt(entry)
            ids = [i for i in delivered_ids(entry) if i in eligible]
            if event(entry) != DELIVERED or not prompt or not ids or prompt.lower() in seen or len(prompt) < 25:
                continue
            seen.add(prompt.lower())
            later = [p for e in entries[n + 1:] for p in edited_paths(e)]
            used = [i for i in ids if any(covers(a, p) for a in eligible[i].anchors for p in later)]
            out.append((sid, prompt, used or ids[:1], bool(used)))
            if len(out) >= ASKED_MAX:
                return out
    return out


def paraphrase(title: str, body: str) -> str | None:
    """A question in a fact's own body words, not its title's: the first body sentence that is not the
    title again, cut to a few words. None when the body only repeats the title."""
    import re

    from ..record.similar import words

    title_words = words(title)
    for sentence in re.split(r"(?<=[.!?])\s+", " ".join(body.split())):
        w = [x for x in words(sentence) if not x.isdigit() or len(x) > 1]
        if len(w) < 5 or tuple(w[:len(title_words)]) == title_words or set(w) <= set(title_words):
            continue
        return "what does the record say about " + " ".join(w[:PARAPHRASE_WORDS])
    return None


def write_starter(project: Project, force: bool = False) -> Path:
    from .. import atomic

    path = project.memory_dir / STARTER
    if path.exists() and not force:
        raise SteleError(f"{project.rel(path)} already exists: edit it, or pass --force to start over")
    atomic.write(path, starter_text(project))
    return path
