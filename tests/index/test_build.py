"""Freshness: what a read notices, what a refresh redoes, and how damage is survived."""
import os

import pytest

from stele.index import build, handle, vectorphase, vectors
from stele.index import update as update_mod
from stele.index.text import MERGE_AT
from stele.project import Project
from tests.factfiles import backdate
from tests.fakes import write_fact


@pytest.fixture
def proj(repo, fake_model):
    for n in range(5):
        write_fact(repo, f"NOTE-{n}00A", "note", f"Note number {n} about retries",
                   links={"relates-to": ["DEC-AAAA"]})
    write_fact(repo, "DEC-AAAA", "decision", "Retries back off", anchors=["src/a.py", "src/**/*.ts"])
    return Project(repo)


def refresh(p):
    with build.open_index(p) as index:
        return index.catalog.count()


def test_a_full_build_indexes_everything_once(proj, fake_model, monkeypatch):
    report = build.rebuild(proj)
    assert (report.items, report.embedded, report.full) == (6, 6, True)
    assert fake_model.bulk_loads == 0  # a handful of texts: the lean encoder
    monkeypatch.setattr(vectors, "LEAN_MAX", 2)
    assert build.rebuild(proj).embedded == 6 and fake_model.bulk_loads == 1  # many: model2vec


def test_an_edit_reparses_one_file_and_embeds_one_item(proj, fake_model, monkeypatch):
    backdate(proj.root)
    build.rebuild(proj)
    write_fact(proj.root, "NOTE-100A", "note", "Note number 1, now about refunds")
    write_fact(proj.root, "NOTE-200A", "note", "Note number 2 about retries", priority="high")  # same text
    backdate(proj.root)
    calls = []
    real = update_mod.update
    monkeypatch.setattr(update_mod, "update", lambda *a, **k: calls.append(real(*a, **k)) or calls[-1])
    assert refresh(proj) == 6
    (report,) = calls
    assert (report.full, report.parsed, report.embedded) == (False, 2, 1)
    assert refresh(proj) == 6 and len(calls) == 1  # fresh: stat() only, no update


def test_a_racy_file_is_checked_by_content_until_it_is_old_enough(proj, monkeypatch):
    path = write_fact(proj.root, "NOTE-100A", "note", "Note number 1 about retriez")
    refresh(proj)
    st = path.stat()
    path.write_text(path.read_text().replace("retriez", "refundz"))  # same size, and the same mtime:
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # a rewrite within one clock tick
    with build.open_index(proj) as index:
        assert index.catalog.nodes(["NOTE-100A"])["NOTE-100A"].title == "Note number 1 about refundz"
    backdate(proj.root)
    refresh(proj)  # old enough now: the last check by content
    calls = []
    monkeypatch.setattr(update_mod, "update", lambda *a, **k: calls.append(1))
    assert refresh(proj) == 6 and calls == []


def test_a_racy_file_stays_checked_by_content_through_a_refresh_for_another_file(proj):
    """A refresh looks for racy files among the changed ones and those racy last time (not every
    file's mtime): one racy at the last refresh, untouched since, is still checked by content."""
    path = write_fact(proj.root, "NOTE-100A", "note", "Note number 1 about retriez")
    refresh(proj)
    st = path.stat()
    write_fact(proj.root, "NOTE-900A", "note", "A new note about invoices")
    refresh(proj)  # NOTE-100A's stamp did not change: it is racy still, by its mtime
    path.write_text(path.read_text().replace("retriez", "refundz"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime
    with build.open_index(proj) as index:
        assert index.catalog.nodes(["NOTE-100A"])["NOTE-100A"].title == "Note number 1 about refundz"


def test_a_new_model_reembeds_everything(proj, fake_model, monkeypatch):
    build.rebuild(proj)
    fake_model.model_id = "fake@2"
    calls = []
    real = update_mod.update
    monkeypatch.setattr(update_mod, "update", lambda *a, **k: calls.append(real(*a, **k)) or calls[-1])
    refresh(proj)
    assert calls[0].embedded == 6 and calls[0].parsed == 0


def test_a_rebuild_leaves_the_code_index_and_its_lock_alone(proj):
    from stele.index import code

    (proj.root / "src").mkdir()
    (proj.root / "src/a.py").write_text("def limit():\n    return 1\n")
    code.refresh(proj)
    folder = code.code_dir(proj)
    manifest, lock = (folder / "manifest.json").read_bytes(), (folder / "lock").stat().st_ino
    (proj.index_dir / "anchors.sqlite").write_bytes(b"left by an older version")
    build.rebuild(proj)
    assert (folder / "manifest.json").read_bytes() == manifest and (folder / "lock").stat().st_ino == lock
    assert not (proj.index_dir / "anchors.sqlite").exists()  # the rest of the folder is the record index's
    report = code.Report()
    assert code.refresh(proj, report).search("limit", 3) and report.chunked == []


def test_deleting_the_index_loses_nothing(proj):
    build.rebuild(proj)
    import shutil

    shutil.rmtree(proj.index_dir)
    assert refresh(proj) == 6


def test_a_damaged_catalog_is_reported_once_and_rebuilt(proj):
    build.rebuild(proj)
    (proj.index_dir / handle.CATALOG).write_bytes(b"garbage" * 100)
    warnings = []
    with build.open_index(proj, warn=warnings.append) as index:
        assert index.catalog.count() == 6
    assert len(warnings) == 1 and "unreadable" in warnings[0] and "rebuilding" in warnings[0]


@pytest.mark.parametrize("key,stamp", [
    ("schema", f"schema 0; this one reads {build.catalog_mod.SCHEMA}"),
    ("index_version", f"index version 0; this one reads {handle.INDEX_VERSION}")])
def test_an_index_from_another_version_is_rebuilt_and_called_that(proj, key, stamp):
    import sqlite3

    build.rebuild(proj)
    db = sqlite3.connect(proj.index_dir / handle.CATALOG)
    db.execute("UPDATE meta SET value = '0' WHERE key = ?", (key,))
    db.commit()
    db.close()
    warnings = []
    with build.open_index(proj, warn=warnings.append) as index:
        assert index.catalog.count() == 6
    assert warnings == [f"stele: the index in .stele/index was built by another Stele version ({stamp}); "
                        "rebuilding it"]


def test_bad_files_are_left_out_and_reported(proj):
    (proj.root / "docs/memory/broken.md").write_text("---\nid: DEC-BBBB\nkind: decision\n---\nno title\n")
    write_fact(proj.root, "DEC-AAAA", "decision", "A second file with the same id").rename(
        proj.root / "docs/memory/zz-dup.md")
    write_fact(proj.root, "DEC-AAAA", "decision", "Retries back off")
    (proj.root / ".stele/wal").mkdir(parents=True, exist_ok=True)
    (proj.root / ".stele/wal/s.jsonl").write_text(
        '{"v": 1, "id": "S-01JFZS31V0ZJ1D2PYVE21AVN5S", "type": "note", "text": "ok"}\n{"v": 1, "id": "S-01J')
    report = build.rebuild(proj)
    assert report.items == 7  # 6 facts and one session entry
    joined = "\n".join(report.skipped)
    assert "broken.md" in joined and "title" in joined
    assert "duplicate id DEC-AAAA" in joined and "torn last line" in joined


def test_without_a_model_the_text_index_still_works(proj, no_model):
    report = build.rebuild(proj)
    assert report.items == 6 and report.embedded == 0 and "does not exist" in report.vector_error
    with build.open_index(proj) as index:
        assert index.model_id == "" and index.text.search("retries", 3, {})[0][0]


def test_anchor_lookups_use_exact_paths_and_globs(proj):
    with build.open_index(proj) as index:
        assert {r[0] for r in index.catalog.anchored(["src/a.py"])} == {"DEC-AAAA"}
        assert {r[0] for r in index.catalog.anchored(["src/web/x.ts"])} == {"DEC-AAAA"}
        assert index.catalog.anchored(["src/b.py"]) == []
        assert index.catalog.anchor_paths_ending("a.py") == ["src/a.py"]


def check_vectors(proj, fake_model) -> int:
    """Refresh; every item's row holds its own vector. Returns the number of rows."""
    from stele.index.items import Item

    with build.open_index(proj) as index:
        m = index.matrix()
        live = index.catalog.live_vectors(m.shape[0])
        assert len(live) == index.catalog.count()
        for item_id, row, _ in live:
            node = index.catalog.nodes([item_id])[item_id]
            text = Item(item_id, "", "", node.title, index.catalog.body(item_id), "").embed_text
            q = vectors.embed(fake_model.encoder, [text])
            assert m.row(row) == vectors.quantize(q)  # the row holds this item's own vector
        return m.shape[0]


def test_vectors_stay_right_through_edits_appends_and_compaction(proj, fake_model, monkeypatch):
    build.rebuild(proj)
    assert check_vectors(proj, fake_model) == 6
    monkeypatch.setattr(vectorphase, "GARBAGE", 10.0)  # never compact: edits append
    write_fact(proj.root, "NOTE-100A", "note", "Note one, rewritten")
    assert check_vectors(proj, fake_model) == 7  # one stale row kept, one appended
    monkeypatch.setattr(vectorphase, "GARBAGE", 0.0)   # always compact
    (proj.root / "docs/memory/notes/NOTE-200A.md").unlink()
    assert check_vectors(proj, fake_model) == 5


def test_a_damaged_vectors_file_is_embedded_again_by_the_next_refresh(proj, fake_model, monkeypatch):
    build.rebuild(proj)
    (vectors.store_dir(proj.index_dir, "fake@1") / vectors.ROWS).write_bytes(b"garbage")
    write_fact(proj.root, "NOTE-100A", "note", "Note one, rewritten")
    calls = []
    real = update_mod.update
    monkeypatch.setattr(update_mod, "update", lambda *a, **k: calls.append(real(*a, **k)) or calls[-1])
    assert check_vectors(proj, fake_model) == 6  # nothing appended to the damaged rows
    assert (calls[0].full, calls[0].parsed, calls[0].embedded) == (False, 1, 6)  # a refresh, not a rebuild


def test_compacted_session_logs_stay_indexed_once(proj):
    import gzip
    import json

    line = json.dumps({"v": 1, "id": "S-01JFZS31V0ZJ1D2PYVE21AVN5S", "ts": "2026-11-20T10:00:00Z",
                       "session": "old", "type": "decision", "text": "Keep the retry cap at three",
                       "refs": {"paths": ["src/a.py"]}})
    archive = proj.root / ".stele/wal/archive"
    archive.mkdir(parents=True)
    (archive / "old.01JFZS31V0ZJ1D2PYVE21AVN5S.jsonl.gz").write_bytes(gzip.compress((line + "\n").encode()))
    (proj.root / ".stele/wal/old.jsonl").write_text(line + "\n")  # compaction interrupted: both copies exist
    report = build.rebuild(proj)
    assert report.items == 7 and report.skipped == []
    with build.open_index(proj) as index:
        node = index.catalog.nodes(["S-01JFZS31V0ZJ1D2PYVE21AVN5S"])["S-01JFZS31V0ZJ1D2PYVE21AVN5S"]
        assert (node.source, node.kind, node.title) == ("session", "decision", "Keep the retry cap at three")
        anchored = {r[0] for r in index.catalog.anchored(["src/a.py"])}
        assert anchored == {"DEC-AAAA", "S-01JFZS31V0ZJ1D2PYVE21AVN5S"}


def test_running_out_of_time_in_a_refresh_stops_there_instead_of_rebuilding(proj, monkeypatch):
    """A hook's alarm that goes off inside the refresh is not a damaged index: it must reach the hook
    (which answers without memory), not start a full rebuild outside the timer (a hook once ran 63-73 s
    against its 8 s budget that way)."""
    from stele.hooks.run import HookTimeout

    build.rebuild(proj)
    write_fact(proj.root, "NOTE-100A", "note", "Note number 1, now about refunds")
    calls = []

    def slow(project, full, *a, **k):
        calls.append(full)
        raise HookTimeout("the hook ran out of its time budget")

    monkeypatch.setattr(update_mod, "update", slow)
    with pytest.raises(HookTimeout):
        build.open_index(proj)
    assert calls == [False]


def test_switching_the_model_and_back_embeds_nothing_the_second_time(proj, fake_model, monkeypatch):
    calls = []
    real = update_mod.update
    monkeypatch.setattr(update_mod, "update", lambda *a, **k: calls.append(real(*a, **k)) or calls[-1])
    refresh(proj)
    fake_model.model_id = "fake@2"
    refresh(proj)
    fake_model.model_id = "fake@1"
    refresh(proj)
    assert [c.embedded for c in calls] == [6, 6, 0]  # the first model's store still had every text
    with build.open_index(proj) as index:
        assert index.model_id == "fake@1" and index.matrix().shape[0] == 6


def test_a_live_session_log_that_grew_is_read_from_where_the_last_refresh_stopped(proj, monkeypatch):
    import json

    from stele.index import sources

    log = proj.root / ".stele/wal/s.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)

    def line(n):
        return json.dumps({"v": 1, "id": f"S-01JFZS31V0ZJ1D2PYVE21AVN{n:02d}", "ts": "2026-11-20T10:00:00Z",
                           "session": "s", "type": "note", "text": f"note {n} about retries"}) + "\n"

    log.write_text(line(0) + line(1))
    assert refresh(proj) == 8
    reads = []
    real = sources.read_items
    monkeypatch.setattr(update_mod, "read_items", lambda p, rel, s, start=0: reads.append(start) or real(p, rel, s, start))
    with open(log, "a") as f:
        f.write(line(2) + line(3)[:20])  # one whole line and one being written
    assert refresh(proj) == 9 and reads == [len(line(0) + line(1))]
    with open(log, "a") as f:
        f.write(line(3)[20:])
    assert refresh(proj) == 10 and reads[-1] == len(line(0) + line(1) + line(2))
    log.write_text(line(5))  # rewritten (not a growth): read whole, the old entries go
    assert refresh(proj) == 7 and reads[-1] == 0


def test_a_build_cut_short_keeps_its_batches_and_the_next_read_carries_on(proj, monkeypatch):
    from stele.index.sources import scan

    monkeypatch.setattr(update_mod, "BATCH_FILES", 10)  # 2 at a time under a time limit
    update_mod.create(proj)
    report = update_mod.update(proj, False, scan(proj), until=0.0)  # the deadline has passed: one batch
    assert not report.done and report.parsed == 2
    cat = build.open_catalog(proj)
    assert cat.count() == 2  # what a hook can read meanwhile
    cat.close()
    assert refresh(proj) == 6


def test_a_read_with_a_deadline_answers_from_what_is_there_and_says_so(proj, monkeypatch):
    import time

    monkeypatch.setattr(update_mod, "BATCH_FILES", 1)
    monkeypatch.setattr(build, "SLICE_S", 0.0)
    with build.open_index(proj, deadline=time.monotonic() + 8) as index:
        assert 0 < index.catalog.count() < 6
        assert "being built" in index.behind and "of 6 files indexed so far" in index.behind
    # a slice no loaded machine runs out of (5 s is 5 batches and 5 text commits, which load can stretch
    # past it): the rest is built here
    monkeypatch.setattr(build, "SLICE_S", 600.0)
    with build.open_index(proj, deadline=time.monotonic() + 660) as index:
        assert index.catalog.count() == 6 and index.behind is None


def _session_line(n: int, text: str) -> str:
    import json

    return json.dumps({"v": 1, "id": f"S-01JFZS31V0ZJ1D2PYVE21AVN{n:02d}", "ts": "2026-11-20T10:00:00Z",
                       "session": "s", "type": "note", "text": text}) + "\n"


@pytest.fixture
def builder(monkeypatch):
    """The background builder on, started in this process: the calls a hook's read made to start it
    (a detached process would outlive the test)."""
    from stele.index import background

    monkeypatch.setenv(background.ENV, "1")
    started: list[str] = []
    monkeypatch.setattr(background, "start", lambda project: started.append(str(project.root)) or True)
    return started


def test_a_hooks_read_finds_a_new_session_line_by_full_text_and_leaves_its_vector_to_the_builder(
        proj, fake_model, builder, monkeypatch):
    import time

    build.rebuild(proj)
    log = proj.root / ".stele/wal/s.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(_session_line(0, "the ledger export retries the refund worker"))
    calls = []
    real = update_mod.update
    monkeypatch.setattr(update_mod, "update", lambda *a, **k: calls.append(real(*a, **k)) or calls[-1])
    fake_model.encoder.calls.clear()
    with build.open_index(proj, deadline=time.monotonic() + 8) as index:  # what a hook does
        assert index.behind is None
        hits = index.text.search("ledger export", 5, {})
        assert [i for i, _ in hits] == ["S-01JFZS31V0ZJ1D2PYVE21AVN00"]
        assert "S-01JFZS31V0ZJ1D2PYVE21AVN00" not in {i for i, _, _ in index.catalog.live_vectors(10**6)}
    assert (calls[-1].deferred, calls[-1].embedded) == (1, 0) and fake_model.encoder.calls == []
    assert builder == [str(proj.root)]
    scans = []
    real_scan = build.scan
    monkeypatch.setattr(build, "scan", lambda p: scans.append(1) or real_scan(p))
    report = build.finish(proj, leftover=True)  # what the builder it started does: no scan
    assert report.embedded == 1 and fake_model.encoder.calls == [1] and scans == []
    assert check_vectors(proj, fake_model) == 7
    assert build.finish(proj).embedded == 0  # nothing left: the builder exits


def test_the_builder_scans_when_the_last_update_was_cut_short(proj, fake_model, monkeypatch):
    """Leftovers alone only follow an update that ran to its end: after one cut short, the builder
    brings the index up to date with the sources."""
    import time

    build.rebuild(proj)
    write_fact(proj.root, "NOTE-900A", "note", "A new note about invoices")
    real = update_mod.update_vectors
    monkeypatch.setattr(update_mod, "update_vectors", lambda *a, **k: setattr(a[2], "done", False))
    with build.open_index(proj, deadline=time.monotonic() + 8) as index:
        assert index.behind is not None  # cut short: settled stays 0
    monkeypatch.setattr(update_mod, "update_vectors", real)
    assert handle.catalog_meta(proj, "settled") == "0"
    build.finish(proj, leftover=True)
    cat = build.open_catalog(proj)
    try:
        assert cat.meta("settled") == "1" and "NOTE-900A" in cat.nodes(["NOTE-900A"])
    finally:
        cat.close()


def test_hooks_commit_text_without_merging_and_the_builder_merges(proj, fake_model, builder, monkeypatch):
    """What the code guarantees, not what tantivy's merge threads happen to finish: a hook's refresh
    commits with `merge=False` (it never waits for a merge), and after `finish` fewer than MERGE_AT
    segments are left. How many segments the hooks leave depends on whether tantivy's merge threads
    finish before the writer is dropped (they publish if they do), so that count is not asserted."""
    import time

    from stele.index import text as text_mod
    from stele.index.text import TextIndex

    build.rebuild(proj)
    log = proj.root / ".stele/wal/s.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    merges: list[bool] = []
    real = text_mod.Writer.commit
    monkeypatch.setattr(text_mod.Writer, "commit", lambda self, merge=True: merges.append(merge) or real(self, merge))
    for n in range(MERGE_AT + 1):
        with open(log, "a") as f:
            f.write(_session_line(n, f"note {n} about the ledger"))
        with build.open_index(proj, deadline=time.monotonic() + 8) as index:
            assert len(index.text.search("ledger", 20, {})) == n + 1  # each line at the next read
    assert merges == [False] * (MERGE_AT + 1)  # one commit a read, none waiting for a merge
    merges.clear()
    build.finish(proj)
    text = TextIndex(proj.index_dir / handle.TEXT_DIR)
    assert text.segments() < MERGE_AT
    with build.open_index(proj) as index:
        assert len(index.text.search("ledger", 20, {})) == MERGE_AT + 1
    assert check_vectors(proj, fake_model) == 6 + MERGE_AT + 1


@pytest.mark.parametrize("segments, merged", [(MERGE_AT, True), (MERGE_AT - 1, False)])
def test_the_builder_merges_once_tantivy_would(proj, fake_model, monkeypatch, segments, merged):
    from stele.index import text as text_mod

    build.rebuild(proj)
    calls: list[str] = []
    monkeypatch.setattr(text_mod.TextIndex, "segments", lambda self: segments)
    monkeypatch.setattr(text_mod.TextIndex, "merge", lambda self: calls.append("merge"))
    build.finish(proj)
    assert calls == (["merge"] if merged else [])


def test_a_refresh_looks_only_at_the_items_it_changed_for_vectors(proj, fake_model, monkeypatch):
    from stele.index import catalog

    build.rebuild(proj)
    asked = []
    real = catalog.Catalog.needing_vectors
    monkeypatch.setattr(catalog.Catalog, "needing_vectors",
                        lambda self, rows, ids=None: asked.append(ids) or real(self, rows, ids))
    monkeypatch.setattr(catalog.Catalog, "vector_rows_used", lambda self, rows: pytest.fail("counted every row"))
    write_fact(proj.root, "NOTE-100A", "note", "Note number 1, now about refunds")
    assert check_vectors(proj, fake_model) == 7  # one row appended, one stale: no compaction due
    assert asked == [["NOTE-100A"]]


def test_items_written_by_a_refresh_cut_short_before_its_vectors_get_them_next_time(proj, fake_model, monkeypatch):
    backdate(proj.root)
    build.rebuild(proj)
    write_fact(proj.root, "NOTE-100A", "note", "Note number 1, now about refunds")
    write_fact(proj.root, "NOTE-900A", "note", "A new note about invoices")
    backdate(proj.root)  # not racy: the next refresh has no reason to read them again

    def killed(*a, **k):
        raise KeyboardInterrupt  # the process dies after the items' batch committed

    real = update_mod.update_vectors
    monkeypatch.setattr(update_mod, "update_vectors", killed)
    with pytest.raises(KeyboardInterrupt):
        build.open_index(proj)
    monkeypatch.setattr(update_mod, "update_vectors", real)
    assert check_vectors(proj, fake_model) >= 7  # NOTE-100A and NOTE-900A have their own vectors


def test_a_builder_started_while_another_waits_for_its_turn_leaves_the_work_to_it(proj, fake_model, builder):
    import time

    build.rebuild(proj)
    log = proj.root / ".stele/wal/s.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(_session_line(0, "the ledger export retries the refund worker"))
    with build.open_index(proj, deadline=time.monotonic() + 8):
        pass
    waiting = handle.Lock(proj.index_dir, handle.QUEUE_LOCK)  # a builder still waiting for build.lock
    waiting.acquire(True, None)
    try:
        assert build.main([str(proj.root)]) == 0
        cat = build.open_catalog(proj)
        assert handle.pending_vectors(cat) == {"S-01JFZS31V0ZJ1D2PYVE21AVN00"}  # left to the waiting one
        cat.close()
    finally:
        waiting.release()
    assert build.main([str(proj.root)]) == 0  # nobody waiting: this one does it
    assert check_vectors(proj, fake_model) == 7


def test_a_read_waits_for_a_refresh_caught_between_its_batch_and_its_end(proj, monkeypatch):
    """Every refresh leaves `settled` at 0 from its first batch to its end. A read that finds one
    under way then must still wait for it (as for any refresh of an index that was whole), not take
    it for a build from nothing and answer from the index as it was. The wait and the slice are made
    longer than any loaded machine needs (a timer releasing at 0.2 s raced the 0.5 s WAIT_S): a read
    that does not wait at all still answers at once, from the index as it was."""
    import threading
    import time

    from stele.index import catalog

    build.rebuild(proj)
    write_fact(proj.root, "NOTE-100A", "note", "Note number 1, now about refunds")
    holder = handle.Lock(proj.index_dir, handle.BUILD_LOCK)
    holder.acquire(True, None)
    cat = catalog.Catalog(proj.index_dir / handle.CATALOG)
    cat.set_meta(settled="0")  # what the refresh holding the lock has committed so far
    cat.close()
    monkeypatch.setattr(build, "WAIT_S", 60.0)
    monkeypatch.setattr(build, "SLICE_S", 60.0)
    threading.Timer(0.2, holder.release).start()
    with build.open_index(proj, deadline=time.monotonic() + 120) as index:
        assert index.behind is None
        assert index.catalog.nodes(["NOTE-100A"])["NOTE-100A"].title == "Note number 1, now about refunds"


def test_a_read_only_checkout_answers_from_the_index_without_the_lock(proj, monkeypatch):
    """recall, search and the prompt hook opened `.stele/index/lock` for writing, so a read-only
    checkout (a CI cache, a mounted volume) got no memory. (Tests run as root, which no file mode
    stops: the read-only file system is simulated at `os.open`.)"""
    import errno

    from stele.retrieve.recall import recall

    build.rebuild(proj)
    backdate(proj.root, 60)
    real_open = os.open
    index_dir = str(proj.index_dir)

    def read_only(path, flags, *args, **kwargs):
        if str(path).startswith(index_dir) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    r = recall(proj, "how do retries back off after a failure?")
    assert "DEC-AAAA" in [e.id for e in r.entries], (r.mode, r.warnings)


def test_bookkeeping_lines_leave_the_index_fresh_without_a_write_within_bounds(proj, monkeypatch):
    """A hook's delivery note adds no item: the next read answers from the index as it is, writing
    nothing (no commit, so no fsync), and re-reads the unrecorded lines until a refresh that indexes
    something, or the first past the bounds, records them; the items are the same either way."""
    import json

    from stele.index.catalog import Catalog

    backdate(proj.root)
    build.rebuild(proj)
    wal = proj.root / ".stele/wal"
    wal.mkdir(parents=True, exist_ok=True)

    def note(n, session, **extra):
        return json.dumps({"v": 1, "id": f"S-01JFZS31V0ZJ1D2PYVE21AVN{n:02d}", "ts": "2026-11-20T10:00:00Z",
                           "session": session, "type": "note", "text": f"note {n} about retries", **extra}) + "\n"

    def manifest():
        cat = Catalog(proj.index_dir / handle.CATALOG)
        try:
            return cat.manifest()
        finally:
            cat.close()

    before = manifest()
    commits = []
    real_exit = handle.Committer.__exit__
    monkeypatch.setattr(handle.Committer, "__exit__", lambda self, *a: commits.append(1) or real_exit(self, *a))
    for n in range(update_mod.DEFER_FILES):  # a new log each, as a hook of a new session writes
        (wal / f"s{n}.jsonl").write_text(note(n, f"s{n}", event="start") + note(50 + n, f"s{n}", event="delivered",
                                                                                  ids=["DEC-AAAA"]))
        assert refresh(proj) == 6
    assert commits == [] and manifest() == before
    (wal / "s0.jsonl").open("a").write(note(99, "s0"))  # a note that is an item: recorded, with the rest
    assert refresh(proj) == 7 and commits and manifest() != before
    commits.clear()
    for n in range(update_mod.DEFER_FILES + 1):  # past the bound: the read records them
        (wal / f"t{n}.jsonl").write_text(note(n, f"t{n}", event="delivered", ids=["DEC-AAAA"]))
    assert refresh(proj) == 7 and commits
    with open(wal / "t0.jsonl", "w") as f:  # rewritten, not grown: never taken as bookkeeping only
        f.write(note(1, "t0", event="delivered", ids=[]))
    commits.clear()
    assert refresh(proj) == 7 and commits
