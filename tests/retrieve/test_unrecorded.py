"""A prompt about a part of the repository the record never mentions gets nothing (`retrieve.unrecorded`),
while the same prompt is answered when the repository has no such part, and a named identifier still
makes a seed."""
import subprocess

import pytest

from stele.index.build import open_index
from stele.project import Project
from stele.retrieve.recall import recall
from stele.retrieve.unrecorded import unrecorded
from tests.fakes import write_fact
from tests.helpers import track, window

PROMPT = "how does the querier reach the sidecars for exemplars?"


@pytest.fixture
def record(repo):
    write_fact(repo, "DEC-0001", "decision", "The querier fans out to every sidecar with a 30 s deadline",
               anchors=["pkg/query/querier.go"])
    write_fact(repo, "LSN-0002", "lesson", "Sidecars behind a proxy dropped long-lived streams")
    write_fact(repo, "CON-0003", "constraint", "Invoices are numbered per tenant and per year")
    track(repo, "pkg/query/querier.go", "pkg/store/bucket.go", "cmd/dev/main.go")
    return repo


def test_the_prompt_is_answered_when_the_repository_has_no_such_part(record):
    r = recall(Project(record), PROMPT)
    assert "DEC-0001" in window(r), window(r)
    assert r.trace.unrecorded == []


def test_a_part_of_the_repository_the_record_never_mentions_gets_nothing(record):
    assert window(recall(Project(record), PROMPT))  # the vocabulary is cached in the index...
    track(record, "pkg/exemplars/exemplars.go", "pkg/exemplars/proxy.go")  # ...until the next commit
    r = recall(Project(record), PROMPT)
    assert (r.mode, window(r)) == ("no_match", []), window(r)
    assert r.trace.unrecorded == ["exemplars"]


def test_only_tracked_distinctive_unrecorded_words_count(record):
    """A plain word (`dev`: one whole token of the model's vocabulary) names no part, however many
    paths hold it; a file not committed is no part of the repository (yet); a word the record holds is
    covered."""
    track(record, "pkg/exemplars/exemplars.go")
    (record / "pkg" / "otlp").mkdir(parents=True)
    (record / "pkg" / "otlp" / "otlp.go").touch()
    subprocess.run(["git", "add", "pkg/otlp/otlp.go"], cwd=record, check=True)  # staged, not committed
    with open_index(Project(record)) as index:
        assert unrecorded(index, "the dev querier and otlp exemplars for sidecars") == ["exemplars"]
        assert unrecorded(index, "the dev server") == []


def test_a_named_identifier_still_makes_a_seed(record):
    write_fact(record, "LSN-0004", "lesson", "fetch_exemplars must pass the querier's deadline on",
               body="`fetch_exemplars` ignored the caller's context and kept sidecar streams open.")
    track(record, "pkg/exemplars/exemplars.go")
    r = recall(Project(record), "does fetch_exemplars still leak sidecar streams in the exemplars proxy?")
    assert "LSN-0004" in window(r), window(r)


def test_the_cached_table_is_searched_exactly():
    from stele.index.repowords import _holds

    terms = sorted({b"a", b"ab", b"abc", b"b", b"exemplar", b"querier", b"z", b"zz"})
    table = b"".join(t + b"\n" for t in terms)
    for probe in [*terms, b"", b"aa", b"abd", b"c", b"exemplars", b"zzz", b"0"]:
        assert _holds(table, probe) == (probe in terms), probe
    assert not _holds(b"", b"a")
