"""The detached builder: a read with a deadline that finds no index hands a big build over at once and
answers from nothing; the builder (a real process) then builds it whole, and at most one runs."""
import fcntl
import os
import time

import pytest

from stele.index import background, build, handle
from stele.index import update as update_mod
from stele.index.catalog import IndexUnavailable
from stele.project import Project
from tests.factfiles import backdate
from tests.fakes import write_fact


def facts(repo, n: int) -> Project:
    for i in range(n):
        write_fact(repo, f"NOTE-{i:03d}A", "note", f"Note number {i} about retries and back-off")
    return Project(repo)


@pytest.fixture
def started(monkeypatch):
    calls = []
    monkeypatch.setenv(background.ENV, "1")
    monkeypatch.setattr(background, "start", lambda project: calls.append(project.root) or True)
    return calls


def test_a_big_record_with_no_index_is_handed_to_the_builder_at_once(repo, fake_model, started, monkeypatch):
    project = facts(repo, 6)
    monkeypatch.setattr(update_mod, "BATCH_FILES", 2)  # so six files are more than a read builds itself

    def forbidden(*args, **kwargs):
        raise AssertionError("a read with a deadline must not start a full build of a big record")

    monkeypatch.setattr(update_mod, "update", forbidden)
    t0 = time.monotonic()
    with pytest.raises(IndexUnavailable, match=r"being built in the background \(0 of 6 files indexed so far\)"):
        build.open_index(project, deadline=t0 + 600)
    # handed over at once, not after waiting out the deadline (far apart, so a loaded machine cannot blur them)
    assert started == [repo] and time.monotonic() - t0 < 300


def test_a_small_record_is_still_built_by_the_read_itself(repo, fake_model, started, monkeypatch):
    project = facts(repo, 6)  # fewer than BATCH_FILES files: one batch, built at once
    # a slice no loaded machine runs out of (the 2 s one could end before the vectors): the choice
    # under test is made by the number of files, and a read that handed over would answer at once
    monkeypatch.setattr(build, "SLICE_S", 600.0)
    with build.open_index(project, deadline=time.monotonic() + 660) as index:
        assert index.catalog.count() == 6 and index.behind is None  # built by this read, not handed over
        assert index.catalog.meta("vectors_done") == "1"
    # (a builder may still be started for tantivy's merges, which reads with a deadline leave: DEC-QFQT)


def test_without_a_builder_reads_build_slice_by_slice(repo, fake_model, monkeypatch):
    project = facts(repo, 6)
    monkeypatch.setattr(update_mod, "BATCH_FILES", 2)  # 1 file a batch under a time limit
    monkeypatch.setattr(build, "SLICE_S", 0.0)
    with build.open_index(project, deadline=time.monotonic() + 8) as index:  # STELE_BACKGROUND=0 (conftest)
        assert 0 < index.catalog.count() < 6 and "being built" in index.behind


def _builder_done(project: Project, limit: float) -> None:
    """Wait (at most `limit` seconds) until the builder has settled the index and let go of the build
    lock (polling, however slowly a loaded machine starts it)."""
    end = time.monotonic() + limit
    while handle.catalog_meta(project, "settled") != "1":
        assert time.monotonic() < end, "the builder did not finish"
        time.sleep(0.1)
    fd = os.open(project.index_dir / handle.BUILD_LOCK, os.O_RDWR)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError:
                assert time.monotonic() < end, "the builder did not let go of the build lock"
                time.sleep(0.1)
    finally:
        os.close(fd)


@pytest.mark.slow
def test_the_detached_builder_builds_the_whole_index_and_the_next_read_is_fresh(repo, monkeypatch):
    project = facts(repo, 12)
    backdate(repo)  # files older than the build: none is racy, so the builder leaves nothing to check
    monkeypatch.setenv(background.ENV, "1")
    monkeypatch.setattr(update_mod, "BATCH_FILES", 4)  # this process hands over; the builder uses its own
    with pytest.raises(IndexUnavailable, match="being built in the background"):
        build.open_index(project, deadline=time.monotonic() + 8)
    _builder_done(project, 120)
    calls = []
    real = update_mod.update
    monkeypatch.setattr(update_mod, "update", lambda *a, **k: calls.append(1) or real(*a, **k))
    with build.open_index(project, deadline=time.monotonic() + 8) as index:
        assert index.behind is None and index.catalog.count() == 12
        assert index.model_id and index.catalog.meta("vectors_done") == "1"  # embedded by the builder
    assert calls == []  # nothing was left for the read to do


def refresh_count(project: Project) -> int:
    with build.open_index(project) as index:
        return index.catalog.count()
