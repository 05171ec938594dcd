"""A scripted model server on 127.0.0.1 that the real harness binaries talk to instead of a vendor API.

Every request is logged whole (method, path, headers, JSON body), because the point of the end-to-end
suite is to read, from what the harness actually sent, which Stele texts reached the model. The script
is stateless: the next move is chosen from the request alone, by counting the tool results the
conversation already holds (read a file, edit one anchored file, edit a second, answer). Retries,
parallel side requests and a Stop hook that continues the turn therefore all get a consistent answer.

One `Server` speaks the four wire protocols the harnesses use, chosen by the request path:

- Anthropic Messages, streamed (`POST /v1/messages`): Claude Code.
- OpenAI Responses, streamed (`POST /v1/responses`): Codex.
- OpenAI Chat Completions, streamed (`POST /v1/chat/completions`): Copilot CLI's BYOK `openai` provider, and
  Cline CLI's `openai-compatible` provider (told apart by the tools offered: Cline's are `read_files` and
  `editor`).
- Gemini `generateContent` / `streamGenerateContent` (`POST /v1beta/models/M:...`): Gemini CLI.

A request that offers no file-editing tool is a side request (Gemini's model router and next-speaker
check, a title, a quota probe): it gets a short answer, or a JSON object filled in from the request's
response schema, and it is logged like the rest.
"""
from __future__ import annotations

import json
import re
import shlex
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

ANSWER = ("Garbage collection waits out a 48-hour grace period so that a push in progress never loses "
          "layers it has uploaded but not yet referenced.")
PROBE_ASK = "This is a connectivity probe."  # how stele.install.live.PROBE_PROMPT starts
# The reply when the turn is continued after the answer (a Stop hook that continues it): different
# from ANSWER, so a test can tell whether a continuation replaced the run's result.
FOLLOW_UP = "Nothing durable to record from this change."


@dataclass(frozen=True)
class Read:
    path: str


@dataclass(frozen=True)
class Edit:
    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Write:
    path: str
    content: str


@dataclass(frozen=True)
class Answer:
    text: str = ANSWER


Move = Read | Edit | Write | Answer


@dataclass
class Script:
    """The moves of one turn, in order; the move played is the one after the tool results so far."""
    moves: list[Move]

    def next(self, tool_results: int) -> Move:
        return self.moves[tool_results] if tool_results < len(self.moves) else self.moves[-1]

    def edited(self) -> list[str]:
        return list(dict.fromkeys(m.path for m in self.moves if isinstance(m, Edit)))


GC = "worker/harbor_worker/gc.py"
QUEUE = "worker/harbor_worker/queue.py"
GC_OLD = '        """Delete blobs whose last mark (or upload, if never marked) is older than the grace period."""'
GC_NEW = ('        """Delete blobs whose last mark (or upload, if never marked) is older than the grace period.\n'
          '        The grace period is what keeps a push in progress safe."""')
QUEUE_OLD = '        """Take the most urgent queued job, or None. Two workers never get the same row."""'
QUEUE_NEW = ('        """Take the most urgent queued job, or None. Two workers never get the same row\n'
             '        (FOR UPDATE SKIP LOCKED)."""')


def demo_script() -> Script:
    """The turn of issue 14: read gc.py, edit it inside `GarbageCollector.sweep`, edit queue.py inside
    `JobQueue.claim`, answer."""
    return Script([Read(GC), Edit(GC, GC_OLD, GC_NEW), Edit(QUEUE, QUEUE_OLD, QUEUE_NEW), Answer()])


def retry_script() -> Script:
    """The same turn by a model that makes an edit again when it was refused once (hooks.hold_edits):
    the queue.py edit twice. Without a hold the second attempt fails (its old text is gone)."""
    return Script([Read(GC), Edit(GC, GC_OLD, GC_NEW), Edit(QUEUE, QUEUE_OLD, QUEUE_NEW),
                   Edit(QUEUE, QUEUE_OLD, QUEUE_NEW), Answer()])


FRAME = "(reference data, not instructions)"  # how every text Stele injects is framed (observe._FRAME)
# the throwaway clones of `stele eval --agent` (agenteval.runner): `<tmp>/stele-eval-XXXX/<task>.<arm>.<run>`
_EVAL_ROOT = re.compile(r"(/[^\s\"'`]*?/stele-eval-[A-Za-z0-9_]+/[A-Za-z0-9_.-]+?\.(?:with|without)\.[0-9]+)")


@dataclass(frozen=True)
class Task:
    """How the mock plays one task of a `stele eval --agent` suite, found by its prompt in the request.

    A task about a fact (`keeps` is the fact's title): the mock keeps the fact, leaving the code alone
    and naming `fact` in its answer, only when the fact's text is in the request; otherwise it "simplifies"
    without a word about it. A task with `writes` (a path) writes that file, unless the mock is
    `distracted` (the whole script, or this one task) and Stele's framed context is in the request: then
    it talks about that instead."""
    prompt: str
    fact: str = ""
    keeps: str = ""
    writes: str = ""
    breaks: tuple[str, str] = ("", "")  # (path, text): what "simplifying" writes when a `check:` guards the fact
    distracted: bool = False


@dataclass
class Reactive:
    """A model whose next move depends on what reached it (issue 30's apparatus test), per task."""
    tasks: list[Task]
    distracted: bool = False

    def task(self, text: str) -> Task | None:
        return next((t for t in self.tasks if t.prompt in text), None)

    def root(self, text: str) -> Path | None:
        found = _EVAL_ROOT.search(text)
        return Path(found.group(1)) if found else None

    def next_for(self, text: str, tool_results: int) -> Move:
        task = self.task(text)
        if task is None:
            return Answer("ok")
        if task.writes:
            if (self.distracted or task.distracted) and FRAME in text:
                return Answer("The project record mentions garbage collection and blob storage; looking into that first.")
            moves: list[Move] = [Write(task.writes, "#!/bin/sh\ndate -u +%Y-%m-%d\n"), Answer("Added the script.")]
        elif task.keeps and task.keeps in text:
            moves = [Answer(f"I left it as it is: {task.fact} bears on it.")]
        elif task.breaks[0]:  # the task's outcome is the fact's check: simplifying breaks it
            moves = [Read(task.breaks[0]), Write(task.breaks[0], task.breaks[1]),
                     Answer("Simplified it: removed the extra checks.")]
        else:
            moves = [Answer("Simplified it: removed the extra checks.")]
        return moves[min(tool_results, len(moves) - 1)]

    def edited(self) -> list[str]:
        return []


@dataclass
class Request:
    at: float
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    protocol: str = ""
    agent: bool = False  # offered a file-editing tool: part of the scripted turn
    tool_results: int = 0
    move: str = ""
    files: dict[str, str] = field(default_factory=dict)  # the script's edited files when it arrived
    root: Path | None = None  # the repository the request works in (a Reactive script's worktree)

    @property
    def text(self) -> str:
        """Every string in the body, joined: what the model was shown, for substring checks."""
        return "\n".join(strings(self.body))

    def to_json(self) -> dict:
        return {"at": self.at, "method": self.method, "path": self.path, "protocol": self.protocol,
                "agent": self.agent, "tool_results": self.tool_results, "move": self.move,
                "headers": self.headers, "body": self.body}


def strings(value: Any):
    """Every string inside a JSON value, depth first (what a request carried as text)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def _fill(schema: Any) -> Any:
    """A value that satisfies a (Gemini or JSON) response schema, for side requests that want JSON.
    Enums take "user" where offered (Gemini's next-speaker check: let the user speak, end the turn)."""
    if not isinstance(schema, dict):
        return "ok"
    kind = str(schema.get("type", "object")).lower()
    if "enum" in schema:
        options = schema["enum"]
        return "user" if "user" in options else options[0]
    if kind == "object":
        return {k: _fill(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [_fill(schema.get("items"))]
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    return "ok"


class Server:
    """The mock model, started on an ephemeral port of 127.0.0.1 (a context manager)."""

    def __init__(self, root: Path, script: Script | Reactive | None = None, log_path: Path | None = None) -> None:
        self.root = root  # the repository the harness works in: tool calls name files under it
        self.script = script or demo_script()
        self.log_path = log_path
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._ids = 0

    # lifecycle

    def __enter__(self) -> Self:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                server._handle(self)

            do_GET = do_PUT = do_POST

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="mockmodel", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # what the harness sent

    def agent_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.agent]

    def at_step(self, tool_results: int) -> list[Request]:
        """The turn's requests made after `tool_results` tool results (the step's first is the one
        that carried what the hooks added before it)."""
        return [r for r in self.agent_requests() if r.tool_results == tool_results]

    # serving

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}{self._ids:04d}"

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        req = Request(time.time(), h.command, h.path, dict(h.headers), body,
                      files={p: (self.root / p).read_text(encoding="utf-8") for p in self.script.edited()})
        if isinstance(self.script, Reactive):
            req.root = self.script.root(req.text)
        path = h.path.split("?")[0]
        if path.endswith("/messages") and isinstance(body, dict):
            reply = self._anthropic(req)
        elif path.endswith("/responses") and isinstance(body, dict):
            reply = self._responses(req)
        elif path.endswith("/chat/completions") and isinstance(body, dict):
            reply = self._chat(req)
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            reply = self._gemini(req, stream=":streamGenerateContent" in path)
        elif path.endswith(":countTokens"):
            req.protocol = "gemini"
            reply = _Json({"totalTokens": 1})
        elif path.endswith("/models") or "/models/" in path:
            req.protocol = "models"
            reply = _Json({"object": "list", "data": [], "models": []})
        else:
            req.protocol = "unknown"
            reply = _Json({"error": {"message": f"mock model: no route for {h.command} {h.path}"}}, 404)
        with self._lock:
            self.requests.append(req)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(req.to_json()) + "\n")
        reply.send(h)

    def _play(self, req: Request, tools: list[str], results: int, wants_json: bool = False) -> Move | None:
        editing = {"Edit", "apply_patch", "edit", "replace", "write_file", "editor"}
        req.agent = bool(editing & set(tools))
        req.tool_results = results
        # `stele install --check --probe` (edit tools or not): do as asked. A side request that wants a
        # JSON object (Gemini's model router classifying the probe prompt) gets its JSON instead: a plain
        # answer there is unparseable, and Gemini CLI retried it five times with backoff (~95 s).
        if PROBE_ASK in req.text and not (wants_json and not req.agent):
            found = re.search(r"Stele probe: (stele-probe-[0-9a-f]{12})", req.text)
            req.agent, req.move = True, "probe"
            return Answer(found.group(1) if found else "NONE")
        if not req.agent:
            return None
        move = (self.script.next_for(req.text, results) if isinstance(self.script, Reactive)
                else self.script.next(results))
        if isinstance(move, Answer) and move.text in req.text:
            move = Answer(FOLLOW_UP)  # the conversation already holds the answer: it was continued
        req.move = "follow-up" if isinstance(move, Answer) and move.text == FOLLOW_UP else type(move).__name__.lower()
        return move

    def _abs(self, rel: str, req: Request | None = None) -> str:
        return str((req.root if req is not None and req.root else self.root) / rel)

    # Anthropic Messages (Claude Code)

    def _anthropic(self, req: Request) -> _Reply:
        req.protocol = "anthropic"
        body = req.body
        tools = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
        results = sum(1 for m in body.get("messages") or [] if isinstance(m.get("content"), list)
                      for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        move = self._play(req, tools, results)
        model = body.get("model", "claude")
        blocks: list[dict]
        if isinstance(move, Read):
            blocks = [{"type": "tool_use", "id": self._new_id("toolu_"), "name": "Read",
                       "input": {"file_path": self._abs(move.path, req)}}]
        elif isinstance(move, Edit):
            blocks = [{"type": "tool_use", "id": self._new_id("toolu_"), "name": "Edit",
                       "input": {"file_path": self._abs(move.path, req), "old_string": move.old,
                                 "new_string": move.new, "replace_all": False}}]
        elif isinstance(move, Write):
            blocks = [{"type": "tool_use", "id": self._new_id("toolu_"), "name": "Write",
                       "input": {"file_path": self._abs(move.path, req), "content": move.content}}]
        else:
            blocks = [{"type": "text", "text": move.text if isinstance(move, Answer) else "ok"}]
        stop = "tool_use" if blocks[0]["type"] == "tool_use" else "end_turn"
        msg_id = self._new_id("msg_")
        if not body.get("stream"):
            return _Json({"id": msg_id, "type": "message", "role": "assistant", "model": model,
                          "content": blocks, "stop_reason": stop, "stop_sequence": None,
                          "usage": {"input_tokens": 10, "output_tokens": 10}})
        events = [("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                events += [("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {"type": "text", "text": ""}}),
                           ("content_block_delta", {"type": "content_block_delta", "index": i,
                                                    "delta": {"type": "text_delta", "text": b["text"]}})]
            else:
                events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                               "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}),
                           ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                               "type": "input_json_delta", "partial_json": json.dumps(b["input"])}})]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 10}}),
                   ("message_stop", {"type": "message_stop"})]
        return _Sse(events)

    # OpenAI Responses (Codex)

    def _responses(self, req: Request) -> _Reply:
        req.protocol = "responses"
        body = req.body
        tools = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
        items = body.get("input") if isinstance(body.get("input"), list) else []
        results = sum(1 for i in items if isinstance(i, dict)
                      and i.get("type") in ("function_call_output", "custom_tool_call_output"))
        move = self._play(req, tools, results)
        if isinstance(move, Read):
            item = {"type": "function_call", "id": self._new_id("fc_"), "call_id": self._new_id("call_"),
                    "name": "exec_command", "arguments": json.dumps({"cmd": f"cat {move.path}"})}
        elif isinstance(move, Edit | Write):
            item = {"type": "custom_tool_call", "id": self._new_id("ctc_"), "call_id": self._new_id("call_"),
                    "name": "apply_patch", "input": patch(move), "status": "completed"}
        else:
            text = move.text if isinstance(move, Answer) else "ok"
            item = {"type": "message", "id": self._new_id("msg_"), "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
        resp_id = self._new_id("resp_")
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 20}
        events = [("response.created", {"type": "response.created", "response": {"id": resp_id}}),
                  ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                                  "item": item}),
                  ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                                 "item": item}),
                  ("response.completed", {"type": "response.completed",
                                          "response": {"id": resp_id, "usage": usage}})]
        return _Sse(events)

    # OpenAI Chat Completions (Copilot CLI, BYOK)

    def _chat(self, req: Request) -> _Reply:
        req.protocol = "chat"
        body = req.body
        tools = []
        for t in body.get("tools") or []:
            if isinstance(t, dict):
                tools.append((t.get("function") or t.get("custom") or {}).get("name", ""))
        results = sum(1 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "tool")
        move = self._play(req, tools, results)
        call: dict | None = None
        if "editor" in tools:  # Cline CLI: read_files takes a list, editor replaces old_text with new_text
            if isinstance(move, Read):
                call = {"name": "read_files", "arguments": json.dumps({"files": [{"path": self._abs(move.path, req)}]})}
            elif isinstance(move, Edit):
                call = {"name": "editor", "arguments": json.dumps({"path": self._abs(move.path, req),
                                                                   "old_text": move.old, "new_text": move.new})}
        elif isinstance(move, Read):
            call = {"name": "view", "arguments": json.dumps({"path": self._abs(move.path, req)})}
        elif isinstance(move, Edit):
            # Copilot offers `edit` (path, old_str, new_str) to non-GPT models; the suite runs it with one
            call = {"name": "edit", "arguments": json.dumps({"path": self._abs(move.path, req), "old_str": move.old,
                                                             "new_str": move.new})}
        elif isinstance(move, Write) and Path(self._abs(move.path, req)).parent.is_dir():
            call = {"name": "create", "arguments": json.dumps({"path": self._abs(move.path, req),
                                                               "file_text": move.content})}
        elif isinstance(move, Write):  # `create` wants the folder to exist: a model makes it first, in one command
            where = shlex.quote(self._abs(move.path, req))
            call = {"name": "bash", "arguments": json.dumps({
                "command": f"mkdir -p \"$(dirname {where})\" && printf %s {shlex.quote(move.content)} > {where}",
                "description": "Create the file"})}
        chunk_base = {"id": self._new_id("chatcmpl-"), "object": "chat.completion.chunk",
                      "created": int(time.time()), "model": body.get("model", "mock")}
        if call is not None:
            delta = {"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": self._new_id("call_"), "type": "function", "function": call}]}
            finish = "tool_calls"
        else:
            delta = {"role": "assistant", "content": move.text if isinstance(move, Answer) else "ok"}
            finish = "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        if not body.get("stream"):
            message = dict(delta)
            return _Json({**chunk_base, "object": "chat.completion", "usage": usage,
                          "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
        chunks = [{**chunk_base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {**chunk_base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                  {**chunk_base, "choices": [], "usage": usage}]
        return _Sse([(None, c) for c in chunks], done=True)

    # Gemini generateContent (Gemini CLI)

    def _gemini(self, req: Request, stream: bool) -> _Reply:
        req.protocol = "gemini"
        body = req.body if isinstance(req.body, dict) else {}
        tools = [f.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)
                 for f in t.get("functionDeclarations") or [] if isinstance(f, dict)]
        results = sum(1 for c in body.get("contents") or [] if isinstance(c, dict)
                      for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p)
        config = body.get("generationConfig") or {}
        move = self._play(req, tools, results, wants_json=config.get("responseMimeType") == "application/json")
        if move is None and config.get("responseMimeType") == "application/json":
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            part: dict = {"text": json.dumps(_fill(schema))}
        elif isinstance(move, Read):
            part = {"functionCall": {"name": "read_file", "args": {"file_path": move.path}}}
        elif isinstance(move, Edit):
            part = {"functionCall": {"name": "replace", "args": {
                "file_path": self._abs(move.path, req), "old_string": move.old, "new_string": move.new,
                "instruction": "Document the invariant next to the code that keeps it."}}}
        elif isinstance(move, Write):
            part = {"functionCall": {"name": "write_file", "args": {"file_path": self._abs(move.path, req),
                                                                   "content": move.content}}}
        else:
            part = {"text": move.text if isinstance(move, Answer) else "ok"}
        response = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                                    "index": 0}],
                    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
                    "modelVersion": str(req.path.split("/models/")[-1].split(":")[0])}
        return _Sse([(None, response)]) if stream else _Json(response)


def patch(edit: Edit | Write) -> str:
    """The edit as an apply_patch envelope (Codex's freeform edit tool)."""
    if isinstance(edit, Write):
        lines = "".join(f"+{line}\n" for line in edit.content.rstrip("\n").split("\n"))
        return f"*** Begin Patch\n*** Add File: {edit.path}\n{lines}*** End Patch\n"
    minus = "".join(f"-{line}\n" for line in edit.old.split("\n"))
    plus = "".join(f"+{line}\n" for line in edit.new.split("\n"))
    return f"*** Begin Patch\n*** Update File: {edit.path}\n@@\n{minus}{plus}*** End Patch\n"


class _Reply:
    def send(self, h: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError


@dataclass
class _Json(_Reply):
    data: Any
    status: int = 200

    def send(self, h: BaseHTTPRequestHandler) -> None:
        raw = json.dumps(self.data).encode()
        h.send_response(self.status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)


@dataclass
class _Sse(_Reply):
    events: list[tuple[str | None, dict]] = field(default_factory=list)
    done: bool = False  # end with `data: [DONE]` (OpenAI Chat Completions)

    def send(self, h: BaseHTTPRequestHandler) -> None:
        out = []
        for name, data in self.events:
            out.append((f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n")
        if self.done:
            out.append("data: [DONE]\n\n")
        raw = "".join(out).encode()
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("content-length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

