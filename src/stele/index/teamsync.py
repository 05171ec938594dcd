"""One team sync: the session lines (`session.sync`) and the vectors derived from them.

The protocol for lines lives in the session package; this module sits one layer up because vector
packs are the index's: after a segment is pushed, the vectors this clone's index already holds for
its entries go to `PREFIX/vec/<model>/<session>/<seq>.vec`, and after a segment is pulled the pack
for this clone's model (if a teammate left one) is stored beside it, where `update()` takes a
pack's row instead of embedding an entry whose text hashes the same. A pack only saves work: one
that is missing, damaged or from another model changes nothing but the time the next refresh takes.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ..errors import SteleError
from ..project import Project
from ..session import segment as seg
from ..session import sync
from ..session.remote import Remote
from . import packs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def run(project: Project, remote: Remote, *, push: bool = True, pull: bool = True,
        deadline: float | None = None, attempts: int = 3, wait: bool = True, verify: bool = False,
        on_progress: Callable[[str, Any], None] | None = None) -> sync.Result:
    """Mend this clone's segments the store lost (`sync.repair`; every one with `verify`), push, then
    pull. Raises StoreError (one line) on the first store failure, Busy when another sync holds the
    lock and `wait` is False; what was done before stays done."""
    from ..session.objstore import ObjectStore, StoreError, Unreachable
    from ..session.remote import check_approved
    from . import vectors

    check_approved(project, remote)  # before anything is sent (a pull request can rename the store)
    result = sync.Result()
    with sync.lock(project, wait=wait):
        store = ObjectStore(remote, deadline, attempts)
        model_id = vectors.wanted_model_id(project)
        pack_failed: list[str] = []

        def best_effort(what: Callable[[], None]) -> None:
            try:
                what()
            except Unreachable:
                raise
            except (StoreError, OSError, ValueError) as e:  # a pack only saves time: never fail for one
                if not pack_failed:
                    pack_failed.append(f"vector packs skipped ({e})")

        def pushed(p: sync.Pushed) -> None:
            best_effort(lambda: _push_pack(project, remote, store, p))
            if on_progress:
                on_progress("pushed", p)

        def pulled(p: sync.Pulled) -> None:
            if model_id:
                best_effort(lambda: _pull_pack(project, remote, store, model_id, p))
            if on_progress:
                on_progress("pulled", p)

        if push:
            sync.repair(project, remote, store, result, verify=verify)
            sync.push(project, remote, store, result, on_segment=pushed)
        if pull:
            sync.pull(project, remote, store, result, on_segment=pulled)
        result.problems += pack_failed
    return result


def _push_pack(project: Project, remote: Remote, store: Any, pushed: sync.Pushed) -> None:
    found = _local_rows(project, pushed.ids)
    if found is None:
        return
    model_id, dim, rows = found
    ids = [i for i in pushed.ids if i in rows]
    if not ids:
        return
    data = seg.encode_pack(model_id, dim, ids, [rows[i][0] for i in ids], b"".join(rows[i][1] for i in ids))
    store.put_new(seg.pack_key(remote.prefix, model_id, pushed.session, pushed.seq), data)


def _pull_pack(project: Project, remote: Remote, store: Any, model_id: str, pulled: sync.Pulled) -> None:
    data = seg.fetch(store, seg.pack_key(remote.prefix, model_id, pulled.session, pulled.seq))
    if data is None:
        return
    pack = seg.decode_pack(data)  # ValueError (BadSegment) when damaged: the caller notes it
    if pack.model_id != model_id:
        return
    sync.write_file(pulled.path.with_suffix(packs.PACK_SUFFIX), data)


def _local_rows(project: Project, ids: list[str]) -> tuple[str, int, dict[str, tuple[str, bytes]]] | None:
    """(model id, dim, id -> (content hash, float32 row bytes)) from the index as it stands, or None."""
    from .catalog import Catalog
    from .handle import CATALOG, shared_lock

    if not (project.index_dir / CATALOG).is_file():
        return None
    with shared_lock(project):
        cat = Catalog(project.index_dir / CATALOG)
        try:
            model_id, rows, dim = cat.meta("model_id"), int(cat.meta("rows") or 0), int(cat.meta("dim") or 0)
            if not model_id or not rows:
                return None
            wanted = {i: (row, h) for i, (row, h) in cat.vector_rows(ids).items() if row < rows}
            hashes = cat.hashes(list(wanted))
            from . import vectors

            matrix = vectors.load(project.index_dir, model_id, rows, dim)
            out = {i: (h, matrix.float_row(row)) for i, (row, h) in wanted.items() if hashes.get(i) == h}
            return model_id, dim, out
        finally:
            cat.close()


def command(project: Project, remote: Remote, *, push: bool = True, pull: bool = True,
            verify: bool = False) -> sync.Result:
    """`stele session sync`: the whole sync within `session.sync_bound_ms`. A failure (the store down,
    frozen, or the bound reached) raises one StoreError line that also says what waits for the next
    sync; what was done before it stays done."""
    from ..session.objstore import StoreError

    deadline = time.monotonic() + remote.bound_ms / 1000
    try:
        result = run(project, remote, push=push, pull=pull, deadline=deadline, verify=verify)
    except StoreError as e:
        sync.record_outcome(project, str(e), [])
        raise StoreError(f"{e}; {_waiting(project, push, pull)}") from None
    sync.record_outcome(project, None, result.problems)
    return result


def _waiting(project: Project, push: bool, pull: bool) -> str:
    """What a sync cut short left for the next one, in a few words."""
    from ..textcut import counted

    left = sync.pending(project) if push else []
    parts = []
    if left:
        names = ", ".join(left[:3]) + (", ..." if len(left) > 3 else "")
        parts.append(f"{counted(len(left), 'session')} not (fully) pushed ({names})")
    if pull:
        parts.append("the pull not finished")
    return ("skipped: " + " and ".join(parts) if parts else "nothing was left undone") + \
        "; run `stele session sync` again when the store answers"


def hook_sync(project: Project, *, push: bool, pull: bool, warn: Callable[[str], None]) -> None:
    """What a hook does at a session edge: never waits on the store. When there is work it starts
    `python -m stele.index.teamsync ROOT` (detached, like the index's background builder) and returns;
    that process syncs within `session.sync_deadline_ms`, one attempt per request, and records how it
    went (`sync.outcome`, which doctor reports). Imports no S3 client. With `STELE_BACKGROUND=0`
    (tests, or a machine that cannot start processes) the same bounded sync runs in the hook."""
    from ..session.remote import check_approved, configured

    try:
        remote = configured(project)
        if remote is None:
            return
        push = push and bool(sync.pending(project))
        pull = pull and sync.pull_due(project)
        if not (push or pull):
            return
        check_approved(project, remote)  # `run` asks too; asked here, it costs no background process
    except SteleError as e:
        warn(f"stele: session sync skipped: {e}")
        return
    if _start(project, push, pull):
        return
    bounded(project, remote, push=push, pull=pull, warn=warn)


def _start(project: Project, push: bool, pull: bool) -> bool:
    from . import background

    if not background.enabled():
        return False
    import subprocess
    import sys

    argv = [sys.executable, "-m", "stele.index.teamsync", str(project.root)]
    argv += ["--push"] * push + ["--pull"] * pull
    try:
        subprocess.Popen(argv, cwd=str(project.root), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
    except OSError:
        return False
    return True


def bounded(project: Project, remote: Remote, *, push: bool, pull: bool, warn: Callable[[str], None]) -> None:
    """One sync within `session.sync_deadline_ms`, one attempt per request, never raising; what went
    wrong is one `warn` line and the recorded outcome."""
    deadline = time.monotonic() + remote.deadline_ms / 1000
    try:
        result = run(project, remote, push=push, pull=pull, deadline=deadline, attempts=1, wait=False)
    except sync.Busy:
        return
    except SteleError as e:
        sync.record_outcome(project, str(e), [])
        warn(f"stele: session sync: {e}")
        return
    except Exception as e:  # fail open: a sync bug must not cost the agent its hook
        warn(f"stele: session sync failed ({type(e).__name__}: {e}); the lines stay in the local log")
        return
    sync.record_outcome(project, None, result.problems)
    if result.problems:
        extra = len(result.problems) - 1
        more = f" (and {extra} more: `stele session sync`)" if extra else ""
        warn(f"stele: session sync: {result.problems[0]}{more}")


def main(argv: list[str]) -> int:
    """`python -m stele.index.teamsync ROOT [--push] [--pull]`: a hook's sync, detached from it."""
    try:
        project = Project(Path(argv[0]))
        from ..session.remote import configured

        remote = configured(project)
        if remote is None:
            return 0
        bounded(project, remote, push="--push" in argv, pull="--pull" in argv, warn=lambda _: None)
    except Exception:  # nobody is listening: the outcome (or the next sync) says what is wrong
        return 1
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
