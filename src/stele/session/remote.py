"""Where a team's session memory is shipped: `session.store` and its neighbours, parsed and checked.

This module imports no S3 client: the hooks ask it on every session edge whether a store is set at
all, and `stele doctor` checks the settings without talking to the store. Credentials never live in
the committed config (DESIGN.md section 1): a key under `session:` named like one is refused by the
config loader; here a value that carries one (a URL with a user or password, a string shaped like an
access key) is refused, naming the key, before anything is sent anywhere.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from .. import gitrepo
from ..errors import SteleError
from ..plain import dataclass
from ..project import Project

# S3's bucket rules (3-63 characters, lower case, digits, dots, dashes; starts and ends alnum)
_BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_PREFIX_PART_RE = re.compile(r"^[A-Za-z0-9._-]+$")
_REGION_RE = re.compile(r"^[a-z0-9-]{1,32}$")
DEFAULT_REGION = "us-east-1"
KEYS = ("session.store", "session.endpoint", "session.region")
APPROVED = "stele.sessionStore"  # in `.git/config`: the store this clone agreed to sync with


@dataclass(frozen=True)
class Remote:
    """A configured store: `s3://bucket/prefix` at `endpoint` (None: AWS) in `region`."""
    bucket: str
    prefix: str  # "" or "team/app/" (always ending in "/")
    endpoint: str | None
    region: str
    deadline_ms: int  # a hook's sync
    bound_ms: int  # `stele session sync`

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def where(self) -> str:
        """How messages name the store: its URL, and the endpoint when it is not AWS."""
        return f"{self.url} at {self.endpoint}" if self.endpoint else self.url


def wanted(project: Project) -> bool:
    """Is any store setting given? When none is, `configured` is None without a word, and a hook
    at a session edge skips the sync machinery without importing it."""
    cfg = project.config
    return any(str(cfg[key] or "").strip() for key in KEYS)


def configured(project: Project) -> Remote | None:
    """The project's store, or None when `session.store` is empty (local files only).

    Raises SteleError naming the setting when it is malformed or carries a credential."""
    cfg = project.config
    store = str(cfg["session.store"] or "").strip()
    endpoint = str(cfg["session.endpoint"] or "").strip()
    region = str(cfg["session.region"] or "").strip()
    where = project.rel(project.config_path)
    for key, value in zip(KEYS, (store, endpoint, region), strict=True):
        _refuse_credential(where, key, value)
    if not store:
        return None
    bucket, prefix = parse_store(where, store)
    if endpoint:
        _check_endpoint(where, endpoint)
    if region and not _REGION_RE.match(region):
        raise SteleError(f"{where}: `session.region` {region!r} is not a region name like us-east-1")
    return Remote(bucket, prefix, endpoint.rstrip("/") or None, region or DEFAULT_REGION,
                  int(cfg["session.sync_deadline_ms"]), int(cfg["session.sync_bound_ms"]))


def parse_store(where: str, store: str) -> tuple[str, str]:
    if not store.startswith("s3://"):
        raise SteleError(f"{where}: `session.store` {store!r} must look like s3://BUCKET/PREFIX")
    bucket, _, prefix = store[len("s3://"):].partition("/")
    if not _BUCKET_RE.match(bucket) or ".." in bucket:
        raise SteleError(f"{where}: `session.store` bucket {bucket!r} is not a valid S3 bucket name "
                         "(3-63 lower-case letters, digits, '.' and '-')")
    parts = [p for p in prefix.split("/") if p]
    for part in parts:
        if not _PREFIX_PART_RE.match(part) or part in (".", ".."):
            raise SteleError(f"{where}: `session.store` prefix part {part!r}: use letters, digits, "
                             "'.', '_' and '-' between slashes")
    return bucket, "".join(f"{p}/" for p in parts)


def _check_endpoint(where: str, endpoint: str) -> None:
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SteleError(f"{where}: `session.endpoint` {endpoint!r} must be an http:// or https:// URL "
                         "like http://127.0.0.1:9000")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise SteleError(f"{where}: `session.endpoint` {endpoint!r}: give the server's URL only (the "
                         "bucket and prefix go in session.store)")


def _refuse_credential(where: str, key: str, value: str) -> None:
    from ..redact import Redactor

    # any '@' at all: none belongs in a store, endpoint or region, and a password holding a '/' hides
    # the '@' from urlsplit (`http://user:pa/ss@host` parses as host `user`), whose message then echoed it
    if "@" in value:
        raise SteleError(f"{where}: `{key}` carries a user name or password in its URL; credentials never "
                         "go in the committed config: remove it and use AWS_ACCESS_KEY_ID / "
                         "AWS_SECRET_ACCESS_KEY or an AWS profile")
    found = Redactor().find(value)
    if found:
        raise SteleError(f"{where}: `{key}` holds what looks like a credential ({found[0][0]}); credentials "
                         "never go in the committed config: remove it and use the environment or an "
                         "AWS profile")


def identity(remote: Remote) -> str:
    """What an approval names: the bucket and prefix, and the server (AWS when none is set)."""
    return f"{remote.url} {remote.endpoint or 'aws'}"


def check_approved(project: Project, remote: Remote) -> None:
    """Raise SteleError (one line) unless this clone approved `remote` in its own `.git/config`.

    The store is named by the committed config, which a pull request can change: a branch pointing
    `session.store` at its own bucket would have every hook of anyone running an agent on it ship
    their session log there. So a sync goes only to the store approved here, where no committed file
    can write (`gitrepo.local_config`, as for command checks), by `stele session sync --approve`."""
    have = gitrepo.local_config(project.root, APPROVED)
    if have == identity(remote):
        return
    where = project.rel(project.config_path)
    if have is None:
        raise SteleError(f"{where}: `session.store` {remote.where()} is not approved for this clone yet: "
                         "run `stele session sync --approve` once to sync with it (docs/sessions.md)")
    raise SteleError(f"{where}: `session.store` now names {remote.where()}, not the store this clone "
                     f"approved ({have}); a committed file changed it: if your team moved, run "
                     "`stele session sync --approve`")


def approve(project: Project, remote: Remote) -> None:
    """Record `remote` as the store this clone syncs with (`.git/config`)."""
    gitrepo.run(project.root, "config", "--local", APPROVED, identity(remote))
