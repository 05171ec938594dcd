"""The team store (`session.store`): is the setting sound, can the store be reached, and did the last
pulls refuse any segment.

A malformed setting or a credential in the committed config is an error: the config is the
repository's. An unreachable store, refused credentials or a missing bucket are warnings: they are
this machine's network and environment (a CI job without credentials must still pass `doctor`).
The reachability probe is one request within `session.sync_deadline_ms`, sent only to the store this
clone approved: the config is a committed file a pull request can point at its own endpoint. A hook's sync runs in the
background, where nobody reads its errors: the last one it recorded is reported here.
"""
from __future__ import annotations

import time

from ..errors import SteleError
from ..project import Project
from .findings import Finding


def check(project: Project) -> list[Finding]:
    from ..session.remote import configured

    where = project.rel(project.config_path)
    try:
        remote = configured(project)
    except SteleError as e:
        return [Finding("store-config", where, 1, str(e).split(": ", 1)[-1])]
    if remote is None:
        return []
    from ..session import sync
    from ..session.remote import check_approved

    found = []
    approved = True
    try:
        check_approved(project, remote)  # hooks do not sync with a store this clone has not approved
    except SteleError as e:
        found.append(Finding("store", where, 1, str(e).split(": ", 1)[-1]))
        approved = False
    found += [Finding("store", where, 1, f"{remote.url}/{key[len(remote.prefix):]}: {why}; skipped by sync "
                     "(delete the object or ask its writer to push again under a new session)")
             for key, why in sorted(sync.damaged(project).items())]
    gaps, lost = sync.continuity(project)
    found += [Finding("store", where, 1, f"session {session}: {sync.numbered('segment', seqs)} missing on "
                      "the store (lost by it, or not sent yet); its writer's next sync sends them again if its "
                      "log still holds them") for session, seqs in sorted(gaps.items())]
    found += [Finding("store", where, 1, f"session {session}: {sync.numbered('segment', seqs)} of this "
                      "clone gone from the store and from the local log: nobody has those lines any more")
              for session, seqs in sorted(lost.items())]
    last = sync.outcome(project)
    if last.get("error"):
        found.append(Finding("store", where, 1, f"the last sync ({last.get('at')}) did not finish: "
                             f"{last['error']}; `stele session sync` retries it"))
    if not approved:  # a pull request may name its own endpoint: no request, signed with our keys, goes there
        return found
    from ..session.objstore import ObjectStore, StoreError

    try:
        ObjectStore(remote, time.monotonic() + remote.deadline_ms / 1000, attempts=1).check()
    except StoreError as e:
        found.append(Finding("store", where, 1, f"{e} (session lines stay local until it is reachable)"))
    return found
