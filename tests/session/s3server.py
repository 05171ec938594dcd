"""A real S3-compatible server for the sync tests: `moto_server` on 127.0.0.1, with authentication on.

moto starts with `INITIAL_NO_AUTH_ACTION_COUNT` set, so after the few unauthenticated calls that make
an IAM user, its access key, an allow-all policy and the bucket, every request is checked: wrong
credentials get the real `InvalidAccessKeyId` / `SignatureDoesNotMatch` answers.

`Gate` is a TCP relay in front of it that a test can cut, and reopen, in the middle of a push: the
client sees what it would see when a server dies (connections reset, then refused), while moto keeps
its objects the way a real server keeps them on disk across a restart.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

BUCKET = "team-memory"
SETUP_CALLS = 4  # create_user, create_access_key, put_user_policy, create_bucket


def moto_command() -> list[str] | None:
    exe = Path(sys.executable).with_name("moto_server")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("moto_server")
    return [found] if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    key_id: str
    secret: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": self.key_id, "AWS_SECRET_ACCESS_KEY": self.secret}

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.url, region_name="us-east-1",
                            aws_access_key_id=self.key_id, aws_secret_access_key=self.secret)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def start(log: Path) -> Server:
    import boto3

    cmd = moto_command()
    assert cmd is not None
    port = free_port()
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(SETUP_CALLS)}
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd + ["-H", "127.0.0.1", "-p", str(port)], stdout=out, stderr=subprocess.STDOUT,
                                env=env)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"moto_server did not start: {log.read_text(errors='replace')[-500:]}")
            time.sleep(0.1)
    url = f"http://127.0.0.1:{port}"
    iam = boto3.client("iam", endpoint_url=url, region_name="us-east-1", aws_access_key_id="setup",
                       aws_secret_access_key="setup")
    iam.create_user(UserName="stele")
    key = iam.create_access_key(UserName="stele")["AccessKey"]
    iam.put_user_policy(UserName="stele", PolicyName="all", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
    server = Server(proc, port, key["AccessKeyId"], key["SecretAccessKey"])
    server.client().create_bucket(Bucket=BUCKET)
    return server


class Gate:
    """A relay 127.0.0.1:port -> the server that can be cut (`close`) after `cut_after` bytes sent
    upstream, and opened again on the same port."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.cut_after: int | None = None
        self.sent = 0
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self.open()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def open(self) -> None:
        self.sent, self.cut_after = 0, None
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def close(self) -> None:
        with self._lock:
            if self._listener is not None:
                self._listener.close()
                self._listener = None
            for c in self._conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                c.close()
            self._conns.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, server]
            threading.Thread(target=self._pipe, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, upstream: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if upstream:
                    with self._lock:
                        self.sent += len(data)
                        cut = self.cut_after is not None and self.sent >= self.cut_after
                    if cut:
                        dst.send(data[: len(data) // 2])  # half a request reaches the server
                        threading.Thread(target=self.close, daemon=True).start()
                        return
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
