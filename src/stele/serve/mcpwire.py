"""The MCP stdio wire, screened before the SDK reads it.

The SDK drops a line that is not JSON and a request whose `params` is not an object without a reply,
so the client waits forever. `Screen` reads stdin line by line (in the SDK's reader thread) and
answers those itself, as JSON-RPC says: -32700 parse error (id null) for a line that is not JSON,
-32600 for JSON that is not a request object, -32602 invalid params for `params` that is not an
object. A batch, an id that is not a string or an integer, a method that is not a string, nesting past
`MAX_DEPTH` and any other line the SDK's own reader (`readable`, given by mcp.py) would refuse get
-32600 too: the SDK dropped every one of them. Everything else passes through untouched. Replies and
the SDK's own frames share one `Wire`, whose lock keeps each frame a whole line. Plain standard
library: `mcp` stays in mcp.py.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

MAX_DEPTH = 64  # levels of nesting; a real message needs a handful, the SDK's parser stops near 200


class Wire:
    """stdout as text for the SDK (`write`/`flush`), one whole frame per locked write."""

    def __init__(self, buffer: BinaryIO) -> None:
        self.buffer = buffer
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        with self.lock:
            self.buffer.write(text.encode("utf-8"))
            self.buffer.flush()
        return len(text)

    def flush(self) -> None:
        with self.lock:
            self.buffer.flush()

    def error(self, id_: Any, code: int, message: str) -> None:
        self.write(json.dumps({"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}) + "\n")


class Screen:
    """stdin as text lines for the SDK, with the malformed ones answered here and not passed on."""

    def __init__(self, buffer: BinaryIO, wire: Wire, readable: Callable[[str], Any] | None = None) -> None:
        self.buffer = buffer
        self.wire = wire
        self.readable = readable  # the SDK's reader of one line: raises on what it would drop

    def readline(self) -> str:
        while True:
            raw = self.buffer.readline()
            if not raw:
                return ""
            line = raw.decode("utf-8", "replace")
            if not line.strip():
                continue
            reply = self.screen(line)
            if reply is None:
                return line
            self.wire.error(*reply)

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def screen(self, line: str) -> tuple[Any, int, str] | None:
        """(id, code, message) to answer instead of passing `line` on, or None when it may pass."""
        try:
            message = json.loads(line)
        except ValueError as e:
            return (None, -32700, f"parse error: the line is not JSON ({e})")
        except RecursionError:
            return (None, -32700, "parse error: the JSON is nested too deeply to read")
        if isinstance(message, list):
            return (None, -32600, "invalid request: batches are not supported; send one message per line")
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return (message.get("id") if isinstance(message, dict) else None, -32600,
                    "invalid request: expected a JSON-RPC 2.0 object")
        id_ = message.get("id")
        if "id" in message and (isinstance(id_, bool) or not isinstance(id_, (str, int))):
            return (None, -32600, "invalid request: `id` must be a string or an integer")
        if "method" in message and not isinstance(message["method"], str):
            return (id_, -32600, "invalid request: `method` must be a string")
        if depth(message) > MAX_DEPTH:
            return (id_, -32600, f"invalid request: the JSON is nested too deeply (more than {MAX_DEPTH} levels)")
        if "method" in message and "params" in message and not isinstance(message["params"], dict):
            if "id" not in message:
                return None  # a notification gets no reply, right or wrong; the SDK drops it
            kind = type(message["params"]).__name__
            return (message["id"], -32602, f"invalid params: `params` of {message['method']} must be an object, "
                                           f"not a {kind}")
        if self.readable is not None and not ("method" in message and "id" not in message):
            try:
                self.readable(line)
            except Exception:  # whatever the SDK's reader raises, it would drop the line
                return (id_, -32600, "invalid request: not a JSON-RPC request, notification or response")
        return None


def depth(value: Any) -> int:
    """How deeply `value` (parsed JSON) nests lists and objects, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest
