"""Freshness without an editor's cooperation: however a fact file changes, the next hook sees it.

Each case changes a fact's title to a word nothing else in the record has, then asks the prompt hook
(as Claude Code runs it) a question only the new title answers. Every file's mtime is first moved out
of the racy window, so what notices the change is its stamp (mtime, size, inode), not the check by
content that covers files written in the last two seconds."""
import json
import os

from stele.index import build
from stele.index import update as update_mod
from stele.index.sources import scan
from stele.project import Project
from tests.factfiles import backdate, commit
from tests.fakes import write_fact
from tests.helpers import git, hook

QUESTION = "what do we know about the zanzibar quorum protocol in this project?"


def prompt_sees(repo, word: str) -> bool:
    payload = {"session_id": f"s-{os.urandom(4).hex()}", "transcript_path": "/t", "cwd": str(repo),
               "hook_event_name": "UserPromptSubmit", "prompt": QUESTION}
    r = hook("prompt", payload, "--harness", "claude")
    assert r.code == 0 and r.err == "", r.err
    return bool(r.out) and word in json.loads(r.out)["hookSpecificOutput"]["additionalContext"]


def setup(repo):
    for n in range(5):
        write_fact(repo, f"NOTE-{n}00A", "note", f"Note number {n} about retries and backoff")
    path = write_fact(repo, "DEC-AAAA", "decision", "Retries back off with jitter everywhere")
    backdate(repo, 60)
    assert not prompt_sees(repo, "DEC-AAAA")  # indexes the record; nothing is about zanzibar yet
    return path


def retitled(path, title: str) -> str:
    text = path.read_text()
    old = next(line for line in text.splitlines() if line.startswith("title:"))
    return text.replace(old, f"title: {title}")


def test_an_edit_in_place_is_seen(repo):
    """VS Code writes in place: the same inode, only the file changes (its folder does not)."""
    path = setup(repo)
    ino, folder = path.stat().st_ino, path.parent.stat().st_mtime_ns
    with open(path, "r+", encoding="utf-8") as f:  # truncate and rewrite, as an in-place save does
        new = retitled(path, "Zanzibar quorum protocol decides retries")
        f.seek(0)
        f.write(new)
        f.truncate()
    backdate(repo, 30)
    assert path.stat().st_ino == ino and path.parent.stat().st_mtime_ns == folder
    assert prompt_sees(repo, "DEC-AAAA")


def test_a_save_by_rename_is_seen_even_with_the_same_size_and_mtime(repo):
    """Editors that write a temporary file and rename it over the old one: a new inode. Here the new
    file is given the old one's size and mtime, so only the inode tells them apart."""
    path = setup(repo)
    st = path.stat()
    new = retitled(path, "Zanzibar quorum protocol")  # shorter: pad the body back to the old size
    new = new.rstrip("\n") + " " + "x" * (st.st_size - len(new.encode()) - 1) + "\n"
    assert len(new.encode()) == st.st_size
    tmp = path.with_name(".tmp-save")
    tmp.write_text(new)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert prompt_sees(repo, "DEC-AAAA")


def two_branches(repo) -> None:
    """main with the record, `other` with DEC-AAAA retitled and DEC-BBBB added; main checked out."""
    path = setup(repo)
    commit(repo, "record")
    git(repo, "checkout", "-q", "-b", "other")
    path.write_text(retitled(path, "Zanzibar quorum protocol decides retries"))
    write_fact(repo, "DEC-BBBB", "decision", "Zanzibar quorum protocol has a second fact")
    commit(repo, "zanzibar")
    git(repo, "checkout", "-q", "main")
    backdate(repo, 30)


def test_a_git_checkout_is_seen(repo):
    two_branches(repo)
    assert not prompt_sees(repo, "DEC-AAAA")
    git(repo, "checkout", "-q", "other")
    backdate(repo, 30)
    assert prompt_sees(repo, "DEC-AAAA") and prompt_sees(repo, "DEC-BBBB")
    git(repo, "checkout", "-q", "main")  # and back: the second fact is gone again
    backdate(repo, 30)
    assert not prompt_sees(repo, "DEC-BBBB")


def test_a_scan_is_one_comparison_when_nothing_changed(repo, monkeypatch):
    setup(repo)
    p = Project(repo)
    with build.open_index(p):  # the hook logged what it delivered after its own refresh
        pass
    first, second = scan(p), scan(p)
    assert first.parts == second.parts and len([x for x in first.paths if x.startswith("docs/")]) == 6
    calls = []
    monkeypatch.setattr(update_mod, "update", lambda *a, **k: calls.append(1))
    with build.open_index(p):
        pass
    assert calls == []


def test_a_file_added_and_deleted_while_a_build_was_cut_short_leaves_nothing_behind(repo, monkeypatch):
    """The quick comparison against the last complete scan is used only when no update was cut short
    since: a fact indexed by a partial refresh and deleted before the next one must go."""
    setup(repo)
    p = Project(repo)
    with build.open_index(p):
        pass
    extra = write_fact(repo, "DEC-CCCC", "decision", "Zanzibar quorum protocol for a moment")
    backdate(repo, 30)
    monkeypatch.setattr(update_mod, "BATCH_FILES", 5)
    report = update_mod.update(p, False, scan(p), until=0.0)
    cat = build.open_catalog(p)
    assert "DEC-CCCC" in cat.nodes(["DEC-CCCC"])  # indexed by the refresh that was cut short
    cat.close()
    extra.unlink()
    with build.open_index(p) as index:
        assert "DEC-CCCC" not in index.catalog.nodes(["DEC-CCCC"]) and report.parsed >= 1


def old_folders(repo):
    """Every source folder's mtime moved a minute back and listed once since: the next scan stats
    their files by the names that listing kept, without listing the folders again."""
    for folder in [repo / "docs/memory", *(p for p in (repo / "docs/memory").rglob("*") if p.is_dir()),
                   repo / ".stele/wal"]:
        if not folder.is_dir():
            continue
        st = folder.stat()
        os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns - 60 * 10**9))
    scan(Project(repo))


def test_folders_that_did_not_change_are_not_listed_again(repo, monkeypatch):
    setup(repo)
    old_folders(repo)
    p = Project(repo)
    first = scan(p)
    listed = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path: (listed.append(str(path)), real(path))[1])
    assert scan(p).parts == first.parts and listed == []
    write_fact(repo, "NOTE-900A", "note", "One more note")  # its folder changes: that one is listed
    again = scan(p)
    assert listed == [str(repo / "docs/memory/notes")] and "docs/memory/notes/NOTE-900A.md" in again.paths


def test_an_edit_in_place_is_seen_in_a_folder_that_is_not_listed_again(repo):
    path = setup(repo)
    old_folders(repo)
    folder = path.parent.stat().st_mtime_ns
    with open(path, "r+", encoding="utf-8") as f:
        new = retitled(path, "Zanzibar quorum protocol decides retries")
        f.seek(0)
        f.write(new)
        f.truncate()
    backdate(repo, 30)
    assert path.parent.stat().st_mtime_ns == folder
    assert prompt_sees(repo, "DEC-AAAA")


def test_a_save_by_rename_and_a_new_file_are_seen_in_folders_listed_before(repo):
    path = setup(repo)
    old_folders(repo)
    tmp = path.with_name(".tmp-save")
    tmp.write_text(retitled(path, "Zanzibar quorum protocol"))
    os.replace(tmp, path)
    backdate(repo, 30)
    assert prompt_sees(repo, "DEC-AAAA")
    old_folders(repo)
    write_fact(repo, "DEC-BBBB", "decision", "Zanzibar quorum protocol has a second fact")
    backdate(repo, 30)
    assert prompt_sees(repo, "DEC-BBBB")


def test_a_git_checkout_is_seen_in_folders_listed_before(repo):
    two_branches(repo)
    old_folders(repo)
    assert not prompt_sees(repo, "DEC-AAAA")
    old_folders(repo)
    git(repo, "checkout", "-q", "other")
    backdate(repo, 30)
    assert prompt_sees(repo, "DEC-AAAA") and prompt_sees(repo, "DEC-BBBB")
    old_folders(repo)
    git(repo, "checkout", "-q", "main")
    backdate(repo, 30)
    assert not prompt_sees(repo, "DEC-BBBB")


def test_a_damaged_listing_costs_one_full_listing(repo):
    setup(repo)
    p = Project(repo)
    first = scan(p)
    (p.index_dir / "listing.marshal").write_bytes(b"\x00garbage")
    assert scan(p).parts == first.parts


def _scan_of(files: dict[str, tuple[int, int, int]]):
    from array import array

    from stele.index.sources import Scan

    paths = list(files)
    numbers = array("q")
    for p in paths:
        numbers.extend(files[p])
    return Scan(paths, numbers)


def _truth(old: dict, new: dict) -> tuple[set, set]:
    return {p for p in new if old.get(p) != new[p]}, {p for p in old if p not in new}


def test_changed_since_finds_every_change_part_by_part(monkeypatch):
    """The manifest is kept in parts (`Scan.parts`): a diff against it finds exactly what a dict of
    every file would, whatever changed where: stamps in place, names added, deleted or renamed,
    across part boundaries, against a manifest cut in other parts (an older Stele kept one)."""
    import random

    from stele.index import sources

    monkeypatch.setattr(sources, "PART", 4)
    rng = random.Random(7)
    for trial in range(400):
        old = {f"d/{n:03}.md": (n, 10, n) for n in sorted(rng.sample(range(200), rng.randrange(0, 30)))}
        new = dict(old)
        for _ in range(rng.randrange(0, 4)):
            what = rng.choice(("stamp", "add", "delete"))
            if what == "stamp" and new:
                p = rng.choice(list(new))
                new[p] = (new[p][0] + 1, 11, new[p][2])
            elif what == "add":
                new[f"d/{rng.randrange(200):03}.md"] = (999, 1, 999)
            elif what == "delete" and new:
                del new[rng.choice(list(new))]
        new = dict(sorted(new.items()))
        before = _scan_of(old)
        olds = before.parts if trial % 5 else [sources._part(before.paths, before.numbers)]  # one big part
        after = _scan_of(new)
        changed, gone = after.changed_since(olds)
        assert (set(changed), set(gone)) == _truth(old, new), (old, new)
        assert after.stamps(changed) == {p: new[p] for p in changed}


def test_a_refresh_rewrites_only_the_parts_that_changed(tmp_path, monkeypatch):
    """A session log that grew changes one part of the manifest: the others stay as they were."""
    from stele.index import catalog, sources

    monkeypatch.setattr(sources, "PART", 2)
    cat = catalog.Catalog(tmp_path / "c.sqlite", create=True)
    first = _scan_of({f"d/{n}.md": (n, 1, n) for n in range(7)})
    cat.set_manifest(first.parts)
    assert cat.manifest() == first.parts and len(first.parts) == 4
    grown = _scan_of({**{f"d/{n}.md": (n, 1, n) for n in range(7)}, "d/6.md": (6, 2, 6)})
    written = []
    cat.db.set_trace_callback(written.append)
    cat.set_manifest(grown.parts, first.parts)
    cat.db.set_trace_callback(None)
    assert cat.manifest() == grown.parts
    assert len([w for w in written if w.startswith("INSERT")]) == 1
    shorter = _scan_of({f"d/{n}.md": (n, 1, n) for n in range(3)})
    cat.set_manifest(shorter.parts, grown.parts)
    assert cat.manifest() == shorter.parts
