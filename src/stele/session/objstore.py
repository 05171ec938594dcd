"""The one home of the S3 client: boto3, behind the five calls the sync protocol needs.

Why boto3: it is the standard client, it follows the whole AWS credential chain (environment,
profiles, SSO, web identity, container and instance roles) that the config promises, and it sends
`If-None-Match: *` on PutObject, which AWS, MinIO, RustFS, Ceph and R2 honour. Its cost is why this
module is imported only by the sync path: `import boto3` takes ~250-450 ms and making an S3 client
another ~130-190 ms on these machines (docs/benchmarks.md), which no prompt or edit hook may pay.

Every failure leaves here as one `StoreError` line that names the store and says what to do:
`Unreachable` (network, timeout: doctor warns), `Refused` (credentials or permissions), `NoBucket`.
Callers never see a botocore exception.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..errors import SteleError
from ..textcut import error_line
from .remote import Remote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_REFUSED = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken",
            "InvalidToken", "TokenRefreshRequired", "AllAccessDisabled", "InvalidClientTokenId"}
_MISSING = {"NoSuchKey", "404", "NotFound"}
_EXISTS = {"PreconditionFailed", "412", "ConditionalRequestConflict"}
RETRY_ROOM_S = 4.0  # botocore's standard backoff before a third attempt is at most 4 s
GRACE_S = 2.0  # past the deadline, how long a call may still take to end on its own timeout (a connect's)


class StoreError(SteleError):
    """The store could not do what was asked; the message is one line."""


class Unreachable(StoreError):
    """No answer (connection refused, DNS, timeout, the deadline passed)."""


class Refused(StoreError):
    """The store answered and said no (credentials, permissions)."""


class NoBucket(StoreError):
    """The bucket does not exist."""


@dataclass(frozen=True)
class Listed:
    key: str
    etag: str
    size: int


class ObjectStore:
    """A client for one configured store. `deadline` (a `time.monotonic()` value) bounds every call:
    each request, a retry included, is sent only before it, with a read timeout of what is left then
    (botocore's per-request `read_timeout`), so a store that accepts the connection and never answers
    (a frozen server) costs at most the time left, not 60 s for each of three attempts."""

    def __init__(self, remote: Remote, deadline: float | None = None, attempts: int = 3) -> None:
        self.remote = remote
        self.deadline = deadline
        self._client = _client(remote, self._left(), attempts)
        if deadline is not None:
            self._client.meta.events.register("before-send.s3", self._bound)
            self._client.meta.events.register_first("needs-retry.s3", self._late)

    def _late(self, caught_exception: Exception | None = None, **_: Any) -> None:
        """A request that failed without an answer (a timeout, a reset) is retried after a backoff of up
        to a few seconds: not when that would pass the deadline. The error says the deadline passed."""
        if caught_exception is not None and self.deadline is not None \
                and self.deadline - time.monotonic() < RETRY_ROOM_S:
            raise Unreachable(f"{self.remote.where()}: the store is unreachable ({_first_line(caught_exception)}) "
                              "and the sync deadline leaves no time to retry; what is not synced stays in the "
                              "local log for the next sync")

    def _bound(self, request: Any, **_: Any) -> None:
        """Before every HTTP request, retries included: past the deadline it is not sent (the error
        reaches the caller as it is: botocore does not retry it), else it may wait only what is left."""
        left = self._left()
        context = getattr(request, "context", None)
        if left is not None and isinstance(context, dict):
            if request.headers.get("Expect"):  # botocore waits up to 1 s for `100 Continue` first
                left -= 1.0
            context["read_timeout"] = max(0.05, left)

    # -- the five calls

    def put_new(self, key: str, data: bytes) -> bool:
        """Create `key` unless it exists (`If-None-Match: *`): True when created, False when it was there."""
        try:
            self._call("PutObject", key, Bucket=self.remote.bucket, Key=key, Body=data, IfNoneMatch="*")
            return True
        except _Exists:
            return False

    def put(self, key: str, data: bytes) -> None:
        """Create or replace `key` (heads only: each is written by one writer)."""
        self._call("PutObject", key, Bucket=self.remote.bucket, Key=key, Body=data)

    def get(self, key: str, limit: int | None = None) -> bytes | None:
        """The object's bytes, or None when there is no such key; past `limit` bytes the download
        stops and what was read is returned cut (one byte over: the caller sees it is too long)."""
        try:
            reply = self._call("GetObject", key, Bucket=self.remote.bucket, Key=key)
            return self._read(reply["Body"], key, limit)
        except _Missing:
            return None

    def list(self, prefix: str, start_after: str = "") -> Iterator[Listed]:
        """Keys under `prefix` in key order, after `start_after` (S3's StartAfter), page by page."""
        args: dict[str, Any] = {"Bucket": self.remote.bucket, "Prefix": prefix}
        if start_after:
            args["StartAfter"] = start_after
        while True:
            reply = self._call("ListObjectsV2", prefix, **args)
            for obj in reply.get("Contents", ()):
                yield Listed(obj["Key"], obj.get("ETag", "").strip('"'), int(obj.get("Size", 0)))
            if not reply.get("IsTruncated"):
                return
            args.pop("StartAfter", None)
            args["ContinuationToken"] = reply["NextContinuationToken"]

    def check(self) -> None:
        """Can we reach the bucket with these credentials? (doctor)"""
        self._call("HeadBucket", "", Bucket=self.remote.bucket)

    # -- plumbing

    def _left(self) -> float | None:
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Unreachable(f"{self.remote.where()}: the sync deadline passed; the rest waits for the "
                              "next sync")
        return left

    def _call(self, op: str, key: str, **kwargs: Any) -> Any:
        self._left()
        method = {"PutObject": "put_object", "GetObject": "get_object", "ListObjectsV2": "list_objects_v2",
                  "HeadBucket": "head_bucket"}[op]

        def call() -> Any:
            try:
                return getattr(self._client, method)(**kwargs)
            except Exception as e:
                raise _translate(self.remote, op, key, e) from None

        return self._within(call)

    def _read(self, body: Any, key: str, limit: int | None = None) -> bytes:
        def read() -> bytes:
            try:
                return body.read() if limit is None else body.read(limit + 1)
            except Exception as e:
                raise _translate(self.remote, "GetObject", key, e) from None
            finally:
                body.close()

        return self._within(read)

    def _within(self, work: Callable[[], Any]) -> Any:
        """`work()`, given up at the deadline. botocore's read timeout bounds each socket read, not a
        request: a store that answers a byte at a time (a slowloris, a broken proxy) renews it with every
        byte and would hold a sync, `doctor`, and the sync lock for as long as it trickles. So under a
        deadline the request runs in a daemon thread that is left behind when the deadline (and GRACE_S
        for its own timeout to speak first) has passed; the process ending closes its socket."""
        if self.deadline is None:
            return work()
        box: list[tuple[bool, Any]] = []

        def run() -> None:
            try:
                box.append((True, work()))
            except BaseException as e:  # handed to the caller's thread below
                box.append((False, e))

        worker = threading.Thread(target=run, name="stele-s3", daemon=True)
        worker.start()
        worker.join(max(0.0, self.deadline - time.monotonic()) + GRACE_S)
        if not box:
            raise Unreachable(f"{self.remote.where()}: the store is unreachable (no whole answer by "
                              "the sync deadline); what is not synced stays in the local log for the next sync")
        ok, value = box[0]
        if not ok:
            raise value
        return value


class _Exists(Exception):
    pass


class _Missing(Exception):
    pass


def _client(remote: Remote, left: float | None, attempts: int) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise StoreError(f"{remote.where()}: the S3 client is not installed; pip install 'stele[s3]' "
                         "(boto3), or empty `session.store` to keep session memory local") from None

    # a connect is bounded apart from the deadline (botocore sets it per client): a live host answers a
    # connect in milliseconds, so 2 s past the deadline is the most a dead one can add
    connect = 5.0 if left is None else max(0.2, min(2.0, left))
    read = 60.0 if left is None else max(0.2, left)
    config = Config(connect_timeout=connect, read_timeout=read, retries={"max_attempts": attempts,
                    "mode": "standard"}, s3={"addressing_style": "path" if remote.endpoint else "auto"},
                    user_agent_extra="stele")
    try:
        return boto3.session.Session().client("s3", endpoint_url=remote.endpoint, region_name=remote.region,
                                              config=config)
    except Exception as e:  # a broken ~/.aws/config, an unknown profile
        raise StoreError(f"{remote.where()}: the AWS client cannot be set up ({_first_line(e)}); check "
                         "AWS_PROFILE and ~/.aws/config") from None


def _translate(remote: Remote, op: str, key: str, e: Exception) -> Exception:
    from botocore import exceptions as bx

    where = remote.where()
    if isinstance(e, bx.ClientError):
        err = e.response.get("Error", {})
        code = str(err.get("Code", ""))
        status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in _EXISTS or status == 412:
            return _Exists()
        if code == "NoSuchBucket":
            return NoBucket(f"{where}: bucket {remote.bucket!r} does not exist; create it, or fix "
                            "`session.store` in .stele/config.yaml")
        if op == "HeadBucket" and status == 404:
            return NoBucket(f"{where}: bucket {remote.bucket!r} does not exist; create it, or fix "
                            "`session.store` in .stele/config.yaml")
        if code in _MISSING or status == 404:
            return _Missing()
        if code in _REFUSED or status == 403:
            return Refused(f"{where}: the store refused the credentials ({code or status}); check "
                           "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE, and that they may "
                           "read, write and list the bucket")
        return StoreError(f"{where}: {op} {key} failed ({code or status}: {err.get('Message', '')})")
    if isinstance(e, bx.NoCredentialsError):
        return Refused(f"{where}: no AWS credentials found; export AWS_ACCESS_KEY_ID and "
                       "AWS_SECRET_ACCESS_KEY, or set AWS_PROFILE")
    if isinstance(e, (bx.EndpointConnectionError, bx.ConnectTimeoutError, bx.ReadTimeoutError,
                      bx.ConnectionClosedError, bx.HTTPClientError, OSError)):
        return Unreachable(f"{where}: the store is unreachable ({_first_line(e)}); what is not synced "
                           "stays in the local log for the next sync")
    if isinstance(e, bx.BotoCoreError):
        return StoreError(f"{where}: {op} failed ({_first_line(e)})")
    return e


def _first_line(e: Exception) -> str:
    return error_line(e)
