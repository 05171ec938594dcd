"""The warm-up of the resident server's spare child: the reads a hook makes, done once before the
call arrives, so the call does not pay for them the first time.

A child forked for a call spends most of its time on first touches: its copy of every page of the
server's objects that it writes to (reference counts), a new SQLite connection and tantivy searcher,
the first run of each function. Measured at 10,000 facts: a prompt hook ran in 31 ms in a fresh
child and in 15 ms in a child that had warmed up on another text. So the server keeps one child
forked ahead, warmed up on its record, and hands it the next call (`resident_server.py`).

What keeps that call as independent as a fresh process: the warm-up only reads (the index as it
stands, and nothing at all when the index is behind the sources: the call catches up), closes
whatever it opened, and leaves behind only what a fresh process would compute the same way from the
same files: pure functions' caches (compiled patterns) and the query encoder, cached by its model's
content digest. It writes no file (the caches every read keeps, such as the parsed config, are
already written by the call before it), so the server may kill it at any point.
tests/serve/test_warm.py fails when it leaves any other module state behind or writes a file. A
spare is used only while the sources are as they were when it was forked; any change and it is
thrown away (the server decides, by the identity of its live scan).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..project import Project

if TYPE_CHECKING:
    from ..index.build import Index

LOCK_WAIT_S = 1.0


def warm(project: Project) -> None:
    """Run, and forget, what the prompt, session-start and edit hooks read; never raises."""
    from ..index.build import open_if_fresh

    try:
        index = open_if_fresh(project, deadline=time.monotonic() + LOCK_WAIT_S)
    except Exception:
        return
    if index is None:
        return
    try:
        with index:
            _reads(project, index)
    except Exception:
        pass  # the call that follows meets the same problem and says so


def _reads(project: Project, index: Index) -> None:
    from .. import textcut
    from ..hooks import harness, lookup
    from ..hooks.payload import parse
    from ..neutralize import neutralize
    from ..render.agent import recall_text
    from ..retrieve.recall import recall_in
    from ..retrieve.seeds import query_encoder

    title, path = index.catalog.sample()
    list(lookup.always(index))
    lookup.open_tasks(index, project, 1)
    if path is not None:
        lookup.anchored(index, [path])
    if title is None:
        return
    payload = parse('{"hook_event_name": "UserPromptSubmit", "prompt": ""}', "claude")
    room = int(project.config["hooks.max_chars"])
    text = textcut.lines(neutralize(recall_text(recall_in(index, title), room)), room, "")
    harness.answer(payload.form, "prompt", harness.Answer(text), payload.data, payload.event_name)
    # the model a paraphrase needs, loaded; the scan of the vectors is left to the call that needs it
    # (at 50,000 facts it would add ~15 MB to the peak RSS of every call, most of which need none)
    query_encoder(project).encode([title])
