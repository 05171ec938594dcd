"""The git layer: diffs with line numbers, renames, trailers, blobs at a revision, the hooks folder."""
from stele import gitrepo
from stele.gitrepo import FileDiff, parse_diff
from tests.factfiles import commit, write
from tests.helpers import git

PATCH = b"""\
diff --git a/x.py b/sub/y.py
similarity index 60%
rename from x.py
rename to sub/y.py
index 1111111..2222222 100644
--- a/x.py
+++ b/sub/y.py
@@ -2 +2 @@
-b
+B
@@ -4 +3,0 @@
-d
@@ -5,0 +5 @@
+f
diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+a
+b
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,3 +0,0 @@
-a
-b
-c
diff --git "a/tab\\there.py" "b/tab\\there.py"
--- "a/tab\\there.py"
+++ "b/tab\\there.py"
@@ -1 +1 @@
-a
+b
diff --git a/logo.png b/logo.png
Binary files a/logo.png and b/logo.png differ
"""


def test_parse_diff_reads_statuses_paths_and_ranges():
    files = parse_diff(PATCH)
    assert [(f.path, f.old_path, f.status) for f in files] == [
        ("sub/y.py", "x.py", "R"), ("new.py", None, "A"), ("gone.py", None, "D"),
        ("tab\there.py", None, "M"), ("logo.png", None, "B")]
    renamed = files[0]
    assert renamed.new_ranges == ((2, 2), (4, 3), (5, 5))  # (4, 3): a deletion between new lines 3 and 4
    assert renamed.old_ranges == ((2, 2), (4, 4), (6, 5))
    assert renamed.paths == ("sub/y.py", "x.py")
    assert files[2].old_ranges == ((1, 3),)


def test_touches_counts_overlaps_and_deletions_inside_a_span():
    d = FileDiff("a.py", None, "M", new_ranges=((10, 12), (21, 20)), old_ranges=((10, 11), (22, 22)))
    assert d.touches((1, 10), None) and d.touches((12, 15), None)
    assert not d.touches((1, 9), None) and not d.touches((13, 19), None)
    assert d.touches((20, 25), None)  # lines deleted between new lines 20 and 21
    assert not d.touches((21, 25), None) and not d.touches((15, 20), None)  # the deletion is at an edge
    assert d.touches(None, (22, 30)) and not d.touches(None, (23, 30))
    assert not d.touches(None, None)
    assert FileDiff("b.png", None, "B").touches(None, None)


def test_diff_renames_trailers_and_blobs_in_a_real_repo(plain_repo):
    write(plain_repo, "x.py", "a\nb\nc\n")
    write(plain_repo, "keep.py", "k\n")
    first = commit(plain_repo, "one")
    git(plain_repo, "mv", "x.py", "y.py")
    write(plain_repo, "y.py", "a\nB\nc\n")
    commit(plain_repo, "two\n\nStele-Ack: RISK-AAAA the order is unchanged\nStele-Ack: CON-BBBB\n")
    git(plain_repo, "mv", "keep.py", "kept.py")
    staged = gitrepo.diff(plain_repo, staged=True)
    assert [(f.path, f.old_path, f.status) for f in staged] == [("kept.py", "keep.py", "R")]
    between = gitrepo.diff(plain_repo, ref=f"{first}..HEAD")
    assert [(f.path, f.old_path, f.new_ranges) for f in between] == [("y.py", "x.py", ((2, 2),))]
    renames = gitrepo.renames(plain_repo)
    assert renames["keep.py"] == ("kept.py", "uncommitted")
    assert renames["x.py"][0] == "y.py" and len(renames["x.py"][1]) >= 7
    acks = gitrepo.trailers(plain_repo, f"{first}..HEAD", "Stele-Ack")
    assert [v for _, v in acks] == ["RISK-AAAA the order is unchanged", "CON-BBBB"]
    blobs = gitrepo.read_blobs(plain_repo, [f"{first}:x.py", "HEAD:y.py", ":kept.py", "HEAD:nope", "HEAD:"])
    assert blobs == {f"{first}:x.py": b"a\nb\nc\n", "HEAD:y.py": b"a\nB\nc\n", ":kept.py": b"k\n",
                     "HEAD:nope": None, "HEAD:": None}
    assert gitrepo.ls_files(plain_repo, first) == ["keep.py", "x.py"]
    assert gitrepo.rev_parse(plain_repo, "nope") is None


def test_hooks_dir_honours_core_hooks_path(plain_repo):
    assert gitrepo.hooks_dir(plain_repo) == plain_repo / ".git" / "hooks"
    git(plain_repo, "config", "core.hooksPath", ".githooks")
    assert gitrepo.hooks_dir(plain_repo) == plain_repo / ".githooks"


def test_why_is_gits_own_fatal_line_not_the_last_line_of_its_advice():
    from stele.gitrepo import Outcome

    err = ("fatal: 'origin' does not appear to be a git repository\nfatal: Could not read from remote "
           "repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n")
    assert Outcome(128, b"", err).why == "'origin' does not appear to be a git repository"
    assert Outcome(1, b"", "error: cannot lock ref 'refs/x'\n").why == "cannot lock ref 'refs/x'"
    assert Outcome(1, b"", "hint: one\nsomething broke\n").why == "something broke"
    assert Outcome(2, b"", "").why == "exit 2"
