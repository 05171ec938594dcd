"""The HTTP shell on a real socket: status codes, read-only methods, the Host check, static files and
the headers that keep the page from running anything it did not ship."""
from __future__ import annotations

import http.client
import json
import socket
import threading

import pytest

from stele.project import Project
from stele.record import edit
from stele.serve.server import WebServer, host_allowed, is_loopback


@pytest.fixture
def server(repo):
    edit.remember(Project(repo), "Rate limiting runs before auth.", kind="decision")
    srv = WebServer(Project(repo), "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def request(srv, method: str, path: str, headers: dict | None = None):
    conn = http.client.HTTPConnection(*srv.server_address[:2], timeout=10)
    conn.request(method, path, headers=headers or {})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r, body


def test_api_and_page_answer_with_safe_headers(server):
    r, body = request(server, "GET", "/api/memory/facts")
    assert r.status == 200 and r.getheader("Content-Type") == "application/json; charset=utf-8"
    assert len(json.loads(body)["facts"]) == 1
    assert "script-src 'self'" in r.getheader("Content-Security-Policy")
    assert r.getheader("Access-Control-Allow-Origin") is None and r.getheader("Cache-Control") == "no-store"
    r, body = request(server, "GET", "/")
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/html")
    assert b"/static/app.js" in body
    for name in ("app.js", "graph.js", "dom.js", "style.css"):
        r, body = request(server, "GET", f"/static/{name}")
        assert r.status == 200 and body, name
    r, body = request(server, "HEAD", "/api/memory/facts")
    assert r.status == 200 and body == b"" and int(r.getheader("Content-Length")) > 0


@pytest.mark.parametrize("path", ["/static/../api.py", "/static/.hidden.js", "/static/api.py",
                                  "/static/nope.js", "/index.html", "/api",
                                  "/static/" + "a" * 300 + ".js"])  # too long a file name: it crashed the handler
def test_nothing_outside_the_page_and_api_is_served(server, path):
    assert request(server, "GET", path)[0].status == 404


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_writes_are_refused(server, method):
    r, body = request(server, method, "/api/memory/facts")
    assert r.status == 405 and r.getheader("Allow") == "GET, HEAD"
    assert "read-only" in json.loads(body)["error"]


@pytest.mark.parametrize("method", [b"FOO", b"PROPFIND", b"TRACE", b"CONNECT", b"M-SEARCH", b"get"])
def test_every_method_not_served_is_405_not_the_standard_librarys_501(server, method):
    answer = raw(server, method + b" /api/memory/facts HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert status_of(answer) == 405 and b"\r\nAllow: GET, HEAD\r\n" in head + b"\r\n", answer[:300]
    assert json.loads(body) == {"error": "stele serve is read-only: only GET and HEAD", "status": 405}


def test_a_foreign_host_name_is_refused(server):
    r, body = request(server, "GET", "/api/memory/facts", {"Host": "attacker.example:7411"})
    assert r.status == 403 and "Host not allowed" in json.loads(body)["error"]
    assert request(server, "GET", "/api/memory/facts", {"Host": "localhost:7411"})[0].status == 200


def test_host_and_loopback_rules():
    assert all(host_allowed(h) for h in (None, "localhost", "LOCALHOST:80", "127.0.0.1:7411", "[::1]:7411",
                                         "[::1]", "192.168.1.20:7411", "[fe80::1]:7411"))
    foreign = ("evil.example", "localhost.evil.example:7411", "127.0.0.1.nip.io", "[::1]evil.example",
               "localhost :80", "localhost:80x", "localhost:", "", "::1", "[127.0.0.1]", "1.2.3",
               "[::1%eth0]:80", "127.0.0.01", "localhost:+80")
    assert not any(host_allowed(h) for h in foreign)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.20")


def raw(srv, data: bytes) -> bytes:
    """Send `data` as is on a fresh connection and read the answer to its end (shapes http.client
    will not send)."""
    with socket.create_connection(srv.server_address[:2], timeout=10) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def status_of(answer: bytes) -> int:
    return int(answer.split(b"\r\n", 1)[0].split()[1])


@pytest.mark.parametrize("target, host", [
    (b"/api/memory/facts", b"[::1]evil.example"),  # a bracketed literal with a name after it
    (b"/api/memory/facts", b"[::1]evil.example:7411"),
    (b"/api/memory/facts", b"localhost :7411"),  # a space before the colon
    (b"/api/memory/facts", b"127.0.0.1 :7411"),
    (b"/api/memory/facts", b"[::1] :7411"),
    (b"/api/memory/facts", b"localhost:7411x"),  # a port that is not digits
    (b"/api/memory/facts", b"localhost:"),
    (b"/api/memory/facts", b"local host"),
    (b"/api/memory/facts", b""),  # present but empty
    (b"http://evil.example/api/memory/facts", b"localhost"),  # absolute form: a proxy reads the other host
    (b"http://localhost/api/memory/facts", b"localhost"),
    (b"*", b"localhost"),
])
def test_host_and_target_shapes_no_browser_sends_are_refused(server, target, host):
    """A browser sends `Host: name[:port]` and an origin-form target (`/path`); anything else is a shape
    a proxy or a parser elsewhere may read differently, so it gets the Host check's 403."""
    answer = raw(server, b"GET " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
    assert status_of(answer) == 403 and b"Host not allowed" in answer, answer[:300]


def test_a_target_starting_with_two_slashes_is_a_path_not_a_host(server):
    """`//evil.example/api/...` is an origin-form path, never an authority followed by a path."""
    answer = raw(server, b"GET //evil.example/api/memory/facts HTTP/1.1\r\nHost: localhost\r\n"
                         b"Connection: close\r\n\r\n")
    assert status_of(answer) == 404, answer[:300]
    answer = raw(server, b"GET /api/memory/facts?q=rate HTTP/1.1\r\nHost: localhost:7411 \r\n"
                         b"Connection: close\r\n\r\n")  # whitespace after the value is the header's own
    assert status_of(answer) == 200, answer[:300]


def test_a_huge_id_or_path_is_echoed_bounded_in_the_error(server):
    """A request line may be 64 KiB; the 404 quoted all of the id or path it named."""
    for path in ("/api/memory/facts/DEC-" + "A" * 30_000, "/" + "b" * 30_000):
        r, body = request(server, "GET", path)
        error = json.loads(body)["error"]
        assert r.status == 404 and len(error) <= 1_000 and "characters in all" in error, error[:300]


def test_a_bad_query_string_is_400(server):
    r, body = request(server, "GET", "/api/memory/facts?q=%ff%fe")
    assert r.status == 400 and "bad query string" in json.loads(body)["error"]


def test_every_host_header_is_checked_not_only_the_first(server):
    """Two Host headers (one allowed, one not) are refused: a proxy may read the other one."""
    import socket

    host, port = server.server_address[:2]
    for hosts in ([b"localhost", b"attacker.example"], [b"attacker.example", b"localhost"],
                  [b"localhost", b"localhost"]):
        with socket.create_connection((host, port), timeout=10) as s:
            s.sendall(b"GET /api/memory/facts HTTP/1.1\r\n" + b"".join(b"Host: " + h + b"\r\n" for h in hosts)
                      + b"Connection: close\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        assert data.split(b"\r\n", 1)[0].split()[1] == b"403", data[:200]


def test_a_client_that_sends_nothing_is_let_go(server):
    """A connection that never finished its request held a thread and a descriptor until the client
    left: a few hundred of them (a ulimit of 1,024, 256 on macOS) locked the page out for everyone."""
    import socket
    import time

    server.request_timeout = 0.5
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as idle, \
            socket.create_connection((host, port), timeout=10) as slow:
        slow.sendall(b"GET /api/memory/facts HTTP/1.1\r\nHost: localhost\r\n")  # headers never end
        started = time.monotonic()
        assert request(server, "GET", "/api/memory/facts")[0].status == 200  # others are answered meanwhile
        assert idle.recv(1) == b"" and slow.recv(1) == b""  # the server closed both
        assert time.monotonic() - started < 5


def test_a_client_that_dribbles_its_request_is_cut_off_at_the_deadline(server):
    """Slowloris: a byte every 0.2 s never trips the per-receive timeout, and held a connection (and a
    thread) for as long as the client liked. The request line and headers must all arrive within
    `request_deadline` of their first byte; then the server closes the connection."""
    import select
    import time

    server.request_timeout, server.request_deadline = 1.0, 1.0
    dribble = b"GET /api/memory/facts HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * 200
    with socket.create_connection(server.server_address[:2], timeout=10) as s:
        started, closed = time.monotonic(), None
        for byte in dribble:
            if time.monotonic() - started > 5:
                break
            try:
                s.sendall(bytes([byte]))
            except OSError:  # reset by the server: closed
                closed = time.monotonic() - started
                break
            if select.select([s], [], [], 0.2)[0]:
                assert s.recv(1) == b""  # nothing is answered to a request that never ended
                closed = time.monotonic() - started
                break
    assert closed is not None, "the server kept reading a request dribbled for 5 s"
    assert 0.8 < closed < 3, closed
    assert request(server, "GET", "/api/memory/facts")[0].status == 200  # and it still answers others
    with socket.create_connection(server.server_address[:2], timeout=10) as s:  # slow, but within the bound
        s.sendall(b"GET /api/memory/facts HTTP/1.1\r\n")
        time.sleep(0.4)
        s.sendall(b"Host: localhost\r\n\r\n")
        assert s.recv(12) == b"HTTP/1.0 200"


def test_the_request_log_never_writes_a_control_character_to_the_terminal(repo, capfd):
    """The log line quotes the request line as sent: an escape sequence in the path (no browser sends
    one, any local process or, with --host, any machine can) set the serving terminal's title or
    cleared its screen."""
    srv = WebServer(Project(repo), "127.0.0.1", 0, quiet=False)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        answer = raw(srv, b"GET /\x1b]0;owned\x07\x1b[2J\x9b31m HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        assert status_of(answer) == 404
    finally:
        srv.shutdown()
        srv.server_close()
    err = capfd.readouterr().err
    assert "stele serve: 127.0.0.1" in err and "^[]0;owned^G^[[2J" in err, err
    assert not any(c in err for c in "\x1b\x07\x9b\u009b"), err


EVIL = b"<script>alert(1)</script>\x1b]0;owned\x07"


@pytest.mark.parametrize("data, status", [
    (b"GARBAGE" + EVIL + b"\r\n\r\n", 400),  # no target, no version
    (b"GET / HTTP/9.9" + EVIL + b"\r\n\r\n", 400),  # a version that is none
    (b"GET /" + EVIL + b" HTTP/1.1 more\r\n\r\n", 400),  # four words
    (b"GET / HTTP/2.0\r\nHost: localhost\r\n\r\n", 505),
    (b"GET /" + b"a" * 70_000 + EVIL + b" HTTP/1.1\r\n\r\n", 414),
    (b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Long: " + b"a" * 70_000 + EVIL + b"\r\n\r\n", 431),
    (b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: %s\r\n" % (i, EVIL) for i in range(120)) + b"\r\n", 431),
], ids=["bad request line", "bad version", "four words", "HTTP/2", "long target", "long header", "many headers"])
def test_a_request_the_standard_library_cannot_read_gets_the_apis_error_shape(server, data, status):
    """Malformed requests were answered with the standard library's HTML error page (for a bad request
    line, with no status line at all, quoting the line): now a status line and the API's JSON error,
    the same fixed text whatever was sent, so nothing of the request reaches a terminal or a browser."""
    answer = raw(server, data)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert status_of(answer) == status, answer[:300]
    assert b"\r\nContent-Type: application/json; charset=utf-8\r\n" in head + b"\r\n", head
    assert b"\r\nX-Content-Type-Options: nosniff\r\n" in head + b"\r\n" and b"\r\nConnection: close" in head
    error = json.loads(body)
    assert error["status"] == status and error["error"], error
    assert b"<" not in body and b"\x1b" not in answer and b"alert" not in answer and b"owned" not in answer


def test_a_head_request_that_cannot_be_read_gets_no_body(server):
    answer = raw(server, b"HEAD / HTTP/1.1\r\nHost: localhost\r\nX: " + b"a" * 70_000 + b"\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert status_of(answer) == 431 and body == b"" and b"application/json" in head, answer[:300]
