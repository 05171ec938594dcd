"""The read-only JSON API of `stele serve`: routes to plain functions returning a `Response`.

Nothing here knows about sockets, so tests call `handle()` directly and the HTTP layer (`server.py`)
stays a thin shell. Every request reloads what it reads: the page then shows the record as it is on
disk, and there is no cache to go stale. A broken fact file does not take the API down: listings
carry the record's problems beside the facts that did load.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import textcut
from ..anchors.paths import about
from ..delivery import inactive, today
from ..errors import SteleError, UsageError, message
from ..kinds import CAUSAL, KINDS, LIFECYCLE_STATUSES, TASK_STATUSES
from ..neutralize import neutralize_data
from ..project import Project
from ..record.load import Record, load
from ..record.model import Fact

JSON = "application/json; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
MAX_PARAM_CHARS = 2048  # the seed's limit on `q`, applied to every parameter
RETRIEVE_LIMIT, RETRIEVE_MAX = 8, 32  # the seed's default top-k and its cap


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = JSON


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def json_response(data: Any, status: int = 200) -> Response:
    """Every string the page receives is neutralized: the page escapes HTML and writes text only, and
    this makes a hidden or control character visible to the person reading, as the terminal does."""
    body = json.dumps(neutralize_data(data), ensure_ascii=False, separators=(",", ":"))
    return Response(status, body.encode("utf-8"))


def error(status: int, text: str) -> Response:
    """An error answer; its text quotes what the request named, bounded as every message is."""
    return json_response({"error": message(text), "status": status}, status)


class Query:
    """The query string's parameters, checked as they are read (each problem is a 400)."""

    def __init__(self, params: dict[str, list[str]]) -> None:
        for name, values in params.items():
            if any(len(v) > MAX_PARAM_CHARS for v in values):
                raise ApiError(400, f"parameter {name} is longer than {MAX_PARAM_CHARS} characters")
        self.params = params

    def one(self, name: str) -> str | None:
        values = [v for v in self.params.get(name, []) if v.strip()]
        return values[-1].strip() if values else None

    def many(self, name: str) -> list[str]:
        """Repeated (`kind=a&kind=b`) or comma-separated (`kind=a,b`) values."""
        return [p.strip() for v in self.params.get(name, []) for p in v.split(",") if p.strip()]

    def number(self, name: str, default: int, cap: int) -> int:
        raw = self.one(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ApiError(400, f"{name}={raw!r} is not a whole number") from None
        if value < 1:
            raise ApiError(400, f"{name} must be at least 1")
        return min(value, cap)


def _words(q: str | None) -> list[str]:
    return q.lower().split() if q else []


def _matches(fact: Fact, words: list[str]) -> bool:
    """Every word of `q` somewhere in the fact's id, title, tags, summary or body (case-insensitive)."""
    hay = " ".join([fact.id, fact.title, " ".join(fact.tags), fact.summary or "", fact.body]).lower()
    return all(w in hay for w in words)


def _summary(fact: Fact) -> dict[str, Any]:
    data = {k: v for k, v in fact.as_dict().items() if k != "body"}
    data["inactive"] = inactive(fact, today())
    return data


def facts(project: Project, q: Query) -> Response:
    """GET /api/memory/facts?kind=&status=&anchor=&tag=&q= -> {"facts": [...], "problems": [...]}"""
    kinds, statuses = q.many("kind"), q.many("status")
    for k in kinds:
        if k not in KINDS:
            raise ApiError(400, f"kind={k!r} is not a kind: use one of " + ", ".join(KINDS))
    for s in statuses:
        if s not in LIFECYCLE_STATUSES + TASK_STATUSES:
            raise ApiError(400, f"status={s!r} is not a status: use one of "
                           + ", ".join(LIFECYCLE_STATUSES + TASK_STATUSES))
    anchor, tags, words = q.one("anchor"), q.many("tag"), _words(q.one("q"))
    record = load(project)
    selected = [
        f for f in sorted(record.facts.values(), key=lambda f: (f.kind, f.id))
        if (not kinds or f.kind in kinds) and (not statuses or f.status in statuses)
        and set(tags) <= set(f.tags) and (not anchor or any(about(a, anchor) for a in f.anchors))
        and _matches(f, words)
    ]
    return json_response({"facts": [_summary(f) for f in selected], "total": len(record.facts),
                          "problems": [str(p) for p in record.problems]})


def _edge(record: Record, rel: str, other: str) -> dict[str, Any]:
    f = record.facts.get(other)
    return {"rel": rel, "id": other, "title": f.title if f else None, "kind": f.kind if f else None,
            "causal": rel in CAUSAL}


def fact(project: Project, q: Query, fact_id: str) -> Response:
    """GET /api/memory/facts/{id} -> the fact, with its edges both ways (mentions included)."""
    record = load(project)
    found = record.facts.get(fact_id.upper())
    if found is None:
        raise ApiError(404, f"no fact with id {fact_id} in the record")
    data = found.as_dict()
    data["inactive"] = inactive(found, today())
    data["outgoing"] = [_edge(record, e.rel, e.dst) for e in record.graph.out.get(found.id, [])]
    data["incoming"] = [_edge(record, e.rel, e.src) for e in record.graph.inc.get(found.id, [])]
    return json_response(data)


LABEL_CHARS = 28  # a graph node's short title, under its id


def graph(project: Project, q: Query) -> Response:
    """GET /api/memory/graph -> every fact as a node and every typed edge between two facts."""
    record = load(project)
    facts = sorted(record.facts.values(), key=lambda f: f.id)
    nodes = [{"id": f.id, "kind": f.kind, "title": f.title, "label": textcut.words(f.title, LABEL_CHARS),
              "status": f.status, "priority": f.priority, "inactive": inactive(f, today())} for f in facts]
    edges = [{"src": e.src, "rel": e.rel, "dst": e.dst, "causal": e.rel in CAUSAL}
             for f in facts for e in record.graph.out.get(f.id, []) if e.dst in record.facts]
    return json_response({"nodes": nodes, "edges": edges})


def snapshots(project: Project, q: Query) -> Response:
    """GET /api/snapshots -> every stored run's summary, newest first."""
    from ..snapshot.store import runs

    return json_response({"snapshots": list(reversed(list(runs(project))))})


def snapshot(project: Project, q: Query, run: str) -> Response:
    """GET /api/snapshots/{run} -> the stored snapshot (a run id or a unique prefix of one)."""
    from ..snapshot import store

    try:
        store.resolve(project, run)
    except UsageError as e:
        raise ApiError(400, str(e)) from None
    except SteleError as e:
        raise ApiError(404, str(e)) from None
    return json_response(store.load(project, run))


def retrieve(project: Project, q: Query) -> Response:
    """GET /api/memory/retrieve?q=&issue=&pr=&path=&fts=&limit=&as_of= -> what recall finds for `q` (the
    hook's entries and risk callout). `as_of` (a date or a commit, as `stele recall --as-of`) answers from
    the record as it stood then, and `as_of` in the answer says which past it was (also when the prompt
    itself asked about one). `path` is also a file being edited (its anchored facts are seeds);
    `issue`, `pr` and `path` keep only the session entries whose refs match (committed facts stay);
    `fts` keeps only results holding every one of its words as a whole token (case-insensitive); the
    filters choose the candidates before ranking (`retrieve.filters`, shared with MCP `recall`).
    The prompt hook's short-prompt gate does not apply: `q=redis` is a question someone asked.
    `mode` says what ran: `semantic` when the embeddings ranked candidates, `fts` when full text alone
    did (no model, or a match strong enough that the embeddings were not consulted), `prior_context`
    (recent session entries, score 0.0) when there is no index; `retrieval` is Stele's own mode
    (hybrid, fts, identifier, ...)."""
    from ..retrieve.filters import RecallFilters

    text = q.one("q")
    if text is None:
        raise ApiError(400, "q is required: the text to retrieve for (at most 2048 characters)")
    limit = q.number("limit", RETRIEVE_LIMIT, RETRIEVE_MAX)
    if "fts" in q.params and q.one("fts") is None:
        raise ApiError(400, "fts is empty: give the words every result must contain, or leave it out")
    if "as_of" in q.params and q.one("as_of") is None:
        raise ApiError(400, "as_of is empty: give a date (2026-03-04) or a commit, or leave it out")
    try:
        filters = RecallFilters(issue=q.one("issue"), pr=q.one("pr"), path=q.one("path"), fts=q.one("fts"))
    except UsageError as e:
        raise ApiError(400, str(e)) from None
    try:
        result = filters.run(project, text, gate=False, as_of=q.one("as_of"))
    except SteleError as e:  # an as_of that names no past state
        raise ApiError(400, str(e).replace("--as-of", "as_of", 1)) from None
    entries = result.entries
    results = [{**e.as_dict(), "status": e.status, "text": e.body or e.excerpt} for e in entries[:limit]]
    return json_response({"mode": _ran(result), "retrieval": result.mode, "results": results,
                          "risks": [{**r.as_dict(), "text": r.excerpt} for r in result.risks],
                          "limit": limit, "partial": result.partial, "elapsed_ms": result.elapsed_ms,
                          "warnings": result.warnings,
                          **({"as_of": result.when.as_dict()} if result.when is not None else {})})


def _ran(result: Any) -> str:
    """What really ranked the results: the seed's `semantic` only when an embedding did."""
    if result.mode == "prior_context":
        return "prior_context"
    seeds = result.trace.seeds if result.trace else []
    used = any(s.hit is not None and s.hit.cosine is not None for s in seeds)
    return "semantic" if used else "fts"


def sessions(project: Project, q: Query) -> Response:
    """GET /api/memory/sessions?issue=&pr=&path=&task=&thread=&q=&limit= -> sessions with a matching entry,
    most recently active first (limit capped at 32)."""
    from ..session import sessions as sessions_mod

    if "q" in q.params and q.one("q") is None:  # as the CLI's `--q ""`
        raise ApiError(400, "q is empty: give the words to search for, or leave it out")
    try:
        filters = sessions_mod.Filters(issue=q.one("issue"), pr=q.one("pr"), path=q.one("path"),
                                       task=q.one("task"), thread=q.one("thread"), q=q.one("q"))
    except UsageError as e:
        raise ApiError(400, str(e)) from None
    limit = q.number("limit", sessions_mod.DEFAULT_LIMIT, sessions_mod.MAX_LIMIT)
    listed, total = sessions_mod.list_sessions(project, filters, limit)
    return json_response({"sessions": [x.as_dict() for x in listed], "total": total, "limit": limit})


def _session_entries(project: Project, session_id: str) -> list:
    from ..session import sessions as sessions_mod
    from ..session.wal import check_session_name

    try:
        check_session_name(session_id)
    except UsageError as e:
        raise ApiError(400, str(e)) from None
    entries = sessions_mod.entries_of(project, session_id)
    if not entries:
        raise ApiError(404, f"no session {session_id} in {project.rel(project.wal_dir)}/")
    return entries


def session(project: Project, q: Query, session_id: str) -> Response:
    """GET /api/memory/sessions/{id} -> the session as `stele session show --json` gives it: summary,
    every entry in log order, promotions, deliveries (`session.view`)."""
    from ..session.view import NoSuchSession, session_view

    try:
        view = session_view(project, session_id)
    except UsageError as e:
        raise ApiError(400, str(e)) from None
    except NoSuchSession:
        raise ApiError(404, f"no session {session_id} in {project.rel(project.wal_dir)}/") from None
    return json_response(view.as_dict())


def deliveries(project: Project, q: Query) -> Response:
    """GET /api/memory/deliveries?limit= -> what the agent saw: sessions with hook deliveries, newest first,
    each by turn (the prompt, redacted when it was logged, and the ids each hook delivered, with titles)."""
    from ..session import sessions as sessions_mod

    limit = q.number("limit", sessions_mod.DEFAULT_LIMIT, sessions_mod.MAX_LIMIT)
    found = sessions_mod.deliveries(project, limit)
    record = load(project)
    titles = {i: record.facts[i].title for s in found for t in s["turns"] for d in t["deliveries"]
              for i in d["ids"] if i in record.facts}
    return json_response({"sessions": found, "titles": titles, "limit": limit})


def session_blob(project: Project, q: Query, session_id: str) -> Response:
    """GET /api/memory/sessions/{id}/blob -> the session's log as plain text."""
    from ..render.session_text import transcript
    from ..session import sessions as sessions_mod

    entries = _session_entries(project, session_id)
    text = transcript(sessions_mod.summarize(session_id, entries), entries)
    return Response(200, text.encode("utf-8"), TEXT)


def agent_evals(project: Project, q: Query) -> Response:
    """GET /api/eval/agent -> every stored `stele eval --agent` run's headline, newest first."""
    from ..agenteval.results import listing

    return json_response({"runs": listing(project)})


def agent_eval(project: Project, q: Query, run: str) -> Response:
    """GET /api/eval/agent/{run} -> the run's result.json, with its Markdown report as `report`."""
    from ..agenteval.results import read

    data = read(project, run)
    if data is None:
        raise ApiError(404, f"no stored `stele eval --agent` run {run!r} (GET /api/eval/agent lists them)")
    return json_response(data)


Handler = Callable[..., Response]
ROUTES: list[tuple[re.Pattern[str], Handler]] = [
    (re.compile(r"^/api/memory/facts$"), facts),
    (re.compile(r"^/api/memory/facts/(?P<fact_id>[A-Za-z0-9-]+)$"), fact),
    (re.compile(r"^/api/memory/graph$"), graph),
    (re.compile(r"^/api/memory/retrieve$"), retrieve),
    (re.compile(r"^/api/memory/sessions$"), sessions),
    (re.compile(r"^/api/memory/deliveries$"), deliveries),
    (re.compile(r"^/api/memory/sessions/(?P<session_id>[^/]+)$"), session),
    (re.compile(r"^/api/memory/sessions/(?P<session_id>[^/]+)/blob$"), session_blob),
    (re.compile(r"^/api/snapshots$"), snapshots),
    (re.compile(r"^/api/snapshots/(?P<run>[^/]+)$"), snapshot),
    (re.compile(r"^/api/eval/agent$"), agent_evals),
    (re.compile(r"^/api/eval/agent/(?P<run>[^/]+)$"), agent_eval),
]


def handle(project: Project, path: str, params: dict[str, list[str]]) -> Response:
    """Answer one GET for `path` (no query string) with its parsed parameters. The project is opened
    afresh, so a change to `.stele/config.yaml` counts from the next request (a server that kept its
    first config rebuilt the index against the CLI's, the model id flipping on every call); reading
    it again costs one stat while the file is unchanged (config.py's cache)."""
    project = Project(project.root)
    for rx, func in ROUTES:
        m = rx.match(path)
        if m is None:
            continue
        try:
            return func(project, Query(params), **m.groupdict())
        except ApiError as e:
            return error(e.status, str(e))
        except SteleError as e:  # e.g. a broken .stele/config.yaml: the server's state, not the request
            return error(500, str(e))
    return error(404, f"no API route {path}; see docs/serve.md for the routes")
