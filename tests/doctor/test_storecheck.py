"""`stele doctor` on the team store setting (issue 17 points 1 and 5): a credential in the committed
config is an error naming the key, refused the same way by the command that reads it; a store that
cannot be reached is a warning, never an error."""
from __future__ import annotations

import socket

import pytest

from tests.helpers import approve_store, invoke

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def configure(repo, extra: str = "") -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing answers there
    path = repo / ".stele" / "config.yaml"
    text = path.read_text().replace('  store: ""', "  store: s3://team-memory/app" + extra)
    path.write_text(text.replace('  endpoint: ""', f"  endpoint: http://127.0.0.1:{port}"))


@pytest.mark.parametrize("extra, named", [
    (f"\n  aws_secret_access_key: {SECRET}", "session.aws_secret_access_key"),
    ("", "session.endpoint"),
])
def test_a_credential_in_the_config_is_refused_naming_the_key(repo, extra, named):
    configure(repo, extra)
    if not extra:  # a user and password in the endpoint URL
        path = repo / ".stele" / "config.yaml"
        path.write_text(path.read_text().replace("http://127.0.0.1:", f"http://dev:{SECRET}@127.0.0.1:"))
    for args in (("doctor",), ("session", "sync")):
        r = invoke(*args)
        assert r.code == 1 and named in r.out + r.err, (args, r.out, r.err)
        assert SECRET not in r.out + r.err  # the message names the key, never repeats the secret


def test_an_unreachable_store_is_a_warning(repo, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    configure(repo)
    approve_store(repo)
    r = invoke("doctor")
    assert r.code == 0, r.out + r.err
    assert "warning:" in r.out and "the store is unreachable" in r.out and "[store]" in r.out
    assert "0 errors" in r.out + r.err


def test_doctor_sends_nothing_to_a_store_this_clone_has_not_approved(repo, monkeypatch):
    """A pull request can point `session.store` at its own endpoint, and CI runs `stele doctor` on it
    with the runner's AWS credentials. Doctor's reachability probe went to that endpoint anyway: a
    request signed with the runner's key, carrying its access key id and session token. The store a
    clone has not approved is now named in a warning and never contacted."""
    import threading

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDRUNNERKEYID")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "runner-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "runner-session-token")
    seen: list[bytes] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(30)

    def accept() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(2)
            try:
                seen.append(conn.recv(65536))
            except OSError:
                seen.append(b"(connected)")

    threading.Thread(target=accept, daemon=True).start()
    path = repo / ".stele" / "config.yaml"
    text = path.read_text().replace('  store: ""', "  store: s3://attacker-bucket/loot")
    path.write_text(text.replace('  endpoint: ""', f"  endpoint: http://127.0.0.1:{listener.getsockname()[1]}"))
    try:
        r = invoke("doctor")
    finally:
        listener.close()
    assert r.code == 0 and "is not approved for this clone yet" in r.out, r.out + r.err
    assert seen == [], seen
