"""`stele doctor` on the team store setting (issue 17 points 1 and 5): a credential in the committed
config is an error naming the key, refused the same way by the command that reads it; a store that
cannot be reached is a warning, never an error."""
from __future__ import annotations

import socket

import pytest

from tests.helpers import invoke

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
    r = invoke("doctor")
    assert r.code == 0, r.out + r.err
    assert "warning:" in r.out and "the store is unreachable" in r.out and "[store]" in r.out
    assert "0 errors" in r.out + r.err
