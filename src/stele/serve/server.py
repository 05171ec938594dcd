"""The HTTP shell of `stele serve`: the standard library's ThreadingHTTPServer, GET and HEAD only.

Why the standard library: the server is read-only, local and used by one person at a time; every
answer is a small JSON document or a static file. A framework (and an ASGI server under it) would add
dependencies and startup time for routing that fits in a list of regular expressions (`api.ROUTES`).

What keeps it safe to leave running on a laptop:
- It binds to 127.0.0.1 unless told otherwise, and writes nothing: any method but GET/HEAD is 405,
  with `Allow: GET, HEAD` (`Handler.__getattr__`: not the standard library's 501).
- A web page on another site could point a DNS name at 127.0.0.1 and read the answers (DNS
  rebinding), so a request whose Host is a name other than `localhost` is refused (403); IP
  literals pass, which keeps `--host 0.0.0.0` usable from another machine on purpose. Only the
  shapes a browser sends pass (`host_allowed`), and only an origin-form target (`/path`): a proxy or
  a parser elsewhere could read `[::1]evil.example` or `GET http://evil.example/` as another host.
- No CORS headers (other origins cannot read the API) and a Content-Security-Policy that allows only
  this server's own scripts, so text from a fact can never run as code in the page.
- A request it cannot read (a bad request line, an over-long target, too many or too long headers)
  gets the API's JSON error with fixed text (`Handler.send_error`), never the standard library's
  HTML page quoting the request line.
- A connection that sends nothing for `request_timeout` seconds is closed, and so is one whose request
  has not arrived whole `request_deadline` seconds after its first byte (`deadline.py`: slowloris):
  each holds a thread and a descriptor, and a few hundred held open would lock the page out for everyone.
"""
from __future__ import annotations

import io
import ipaddress
import re
import socket
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from ..errors import say
from ..project import Project
from . import api, deadline

SERVED = ("GET", "HEAD")  # the methods with a `do_` method below; every other one is 405
STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


# What a request the standard library cannot read is told (`Handler.send_error`), by status: fixed
# text, never the request's own (its line and headers are the client's, and reached the HTML page).
UNREADABLE = {
    400: "bad request: the request line or a header could not be read",
    414: "the request target is too long (at most 65,536 bytes)",
    431: "the request headers are too many or too long (at most 100, of 65,536 bytes each)",
    505: "HTTP version not supported: use HTTP/1.1",
}


def _phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return "error"


def static_file(name: str) -> api.Response | None:
    """A file of the web page (package data under `static/`), by its bare name; None if there is none."""
    suffix = name[name.rfind("."):] if "." in name else ""
    if "/" in name or name.startswith(".") or suffix not in STATIC_TYPES:
        return None
    path = resources.files(__package__).joinpath("static", name)
    try:
        return api.Response(200, path.read_bytes(), STATIC_TYPES[suffix]) if path.is_file() else None
    except OSError:  # a name too long for the file system (it dropped the connection unanswered)
        return None


# What a browser sends as Host: `localhost`, a dotted IPv4 address or a bracketed IPv6 one, then
# perhaps `:` and the port's digits. Nothing else: no space, no name after a bracket, no zone id.
HOST_SHAPE = re.compile(r"(?:(?P<name>localhost)|(?P<ip>[0-9.]+)|\[(?P<ip6>[0-9A-Fa-f:.]+)\])(?::[0-9]+)?",
                        re.IGNORECASE)
HOST_REFUSED = "Host not allowed: open the page at http://127.0.0.1 or http://localhost"


def host_allowed(host: str | None) -> bool:
    """`localhost` or an IP literal, with any port, in the exact shape a browser sends (see the
    module docstring: DNS rebinding). Whitespace around the value is the header's, not the host's."""
    if host is None:
        return True  # HTTP/1.0 clients may omit it; browsers, the rebinding vector, always send it
    shape = HOST_SHAPE.fullmatch(host.strip(" \t"))
    if shape is None:
        return False
    if shape["name"]:
        return True
    try:
        return ipaddress.ip_address(shape["ip"] or shape["ip6"]).version == (4 if shape["ip"] else 6)
    except ValueError:
        return False


class Handler(BaseHTTPRequestHandler):
    server_version = "stele"
    server: WebServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.request_timeout)  # each read and write; closed on expiry
        self.reading = deadline.Reader(self.connection, self.server.request_timeout, self.server.request_deadline)
        self.rfile.close()  # the plain reader `setup` made: read through the deadline instead
        self.rfile = io.BufferedReader(self.reading)

    def parse_request(self) -> bool:
        ok = super().parse_request()  # the request line was read before; this reads the headers
        self.reading.done()
        return ok

    def do_GET(self) -> None:
        self._answer(self._route(), head=False)

    def do_HEAD(self) -> None:
        self._answer(self._route(), head=True)

    def __getattr__(self, name: str) -> Callable[[], None]:
        """`do_<METHOD>` of every method but GET and HEAD (`PUT`, `FOO`, `get`): the standard library
        answers a method without one 501 in HTML; this server says 405, in its own error shape."""
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A request the standard library could not read (a bad request line, a target over 64 KiB, too
        many or too long headers, HTTP/2): the API's JSON error shape, with the page's headers, instead
        of its HTML page, which quoted the request line (and, for a bad one, had no status line). The
        text is fixed by status: nothing the client sent is echoed. The log line says what was wrong,
        through `say`, neutralized like every log line."""
        self.log_error("code %d, message %s", code, message)
        if self.request_version == "HTTP/0.9":  # the default until a version was read: answer in 1.0,
            self.request_version = "HTTP/1.0"   # so the client gets a status line and headers
        text = UNREADABLE.get(code) or _phrase(code)
        self._answer(api.error(code, text), head=self.command == "HEAD", extra={"Connection": "close"})

    def _not_allowed(self) -> None:
        self._answer(api.error(405, "stele serve is read-only: only " + " and ".join(SERVED)), head=False,
                     extra={"Allow": ", ".join(SERVED)})

    def _route(self) -> api.Response:
        sent = self.headers.get_all("Host")
        hosts: list[str | None] = list(sent) if sent else [None]
        if len(hosts) > 1 or not all(host_allowed(h) for h in hosts):  # every Host header, not the first
            return api.error(403, HOST_REFUSED)
        if not self.path.startswith("/"):  # absolute form (`http://other/`) or `*`: never from a browser
            return api.error(403, HOST_REFUSED)
        url = urlsplit(self.path)
        if url.path.startswith("/api/"):
            try:
                params = parse_qs(url.query, keep_blank_values=True, max_num_fields=64, errors="strict")
            except (ValueError, UnicodeDecodeError) as e:
                return api.error(400, f"bad query string ({e})")
            return api.handle(self.server.project, url.path, params)
        name = "index.html" if url.path == "/" else url.path.removeprefix("/static/")
        found = static_file(name) if url.path == "/" or url.path.startswith("/static/") else None
        return found or api.error(404, f"nothing at {url.path}")

    def _answer(self, response: api.Response, head: bool, extra: dict[str, str] | None = None) -> None:
        self.send_response(response.status)
        headers = {"Content-Type": response.content_type, "Content-Length": str(len(response.body)),
                   "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
                   "Referrer-Policy": "no-referrer", "Content-Security-Policy": CSP, **(extra or {})}
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(response.body)

    def log_message(self, format: str, *args) -> None:
        """One line on stderr through `errors.say`: the request line is the client's text, and an
        escape sequence in it would act on the terminal serving it."""
        if not self.server.quiet:
            say(f"stele serve: {self.address_string()} {format % args}")


class WebServer(ThreadingHTTPServer):
    daemon_threads = True
    request_timeout = 10.0  # seconds a connection may stay silent (a browser sends a request at once)
    request_deadline = 10.0  # seconds from a request's first byte to the end of its headers (`deadline`)

    def __init__(self, project: Project, host: str, port: int, quiet: bool = False) -> None:
        self.project = project
        self.quiet = quiet
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), Handler)

    @property
    def url(self) -> str:
        host, port = self.socket.getsockname()[:2]  # the bound address (port 0 becomes the real one)
        return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
