"""Write fact files and commit them in real temporary repositories (tests of doctor, hooks, review)."""
from __future__ import annotations

import os
import time
from pathlib import Path

from stele.kinds import KINDS
from stele.record.frontmatter import dump_key
from tests.helpers import git


def fact_text(fid: str, kind: str, title: str | None = None, body: str = "Body text.", **meta) -> str:
    if kind == "document" and meta.get("status") in ("reviewed", "current") and "review" not in meta:
        # a document at reviewed or current went through review: record one of this content (pass
        # review=None for a document set current by hand)
        from stele.record.lifecycle import content_digest

        meta["review"] = {"on": "2026-01-01", "note": "checked", "digest": content_digest(
            title or f"{fid} title", meta.get("summary"), body)}
    head = dump_key("id", fid) + dump_key("kind", kind) + dump_key("title", title or f"{fid} title")
    head += "".join(dump_key(k, v) for k, v in meta.items() if v is not None)
    return f"---\n{head}---\n{body}\n"


def write_fact(root: Path, fid: str, kind: str, **kw) -> str:
    """Write docs/memory/<folder>/<ID>.md; returns its repo-relative path."""
    rel = f"docs/memory/{KINDS[kind].folder}/{fid}.md"
    write(root, rel, fact_text(fid, kind, **kw))
    return rel


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def backdate(root: Path, seconds: int = 10) -> None:
    """Move fact files modified in the last `seconds` back by that much, out of the index's racy window (a
    file modified in the last two seconds makes every read refresh the index to check it by content),
    for tests of what a read does. Files already older are left alone, so their stat stays as indexed."""
    recent = time.time_ns() - seconds * 10**9
    for path in (root / "docs/memory").rglob("*.md"):
        st = path.stat()
        if st.st_mtime_ns > recent:
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9))


def commit(root: Path, message: str = "change") -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


AUTH_PY = '''\
import time

LIMIT = 10


class RateLimiter:
    def __init__(self, per_second):
        self.per_second = per_second

    def check(self, key):
        if key is None:
            return False
        return True

    def reset(self):
        self.per_second = 0


def login(user):
    return user is not None
'''
