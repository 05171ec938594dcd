"""The relevance faults seen on real records, each on the bundled example (`stele demo`) or a small
record: a repeated question brings the dregs, a pasted log misses its lesson, a named symbol gets
nothing, a long generic fact turns up everywhere, and a weak neighbour raises a false risk warning."""
import pytest

from stele.project import Project
from stele.record.scaffold import example_repository
from stele.retrieve.distill import distill
from stele.retrieve.gate import check
from stele.retrieve.recall import recall
from tests.fakes import write_fact
from tests.helpers import track, window


@pytest.fixture(scope="module")
def harbor(tmp_path_factory):
    return Project(example_repository(tmp_path_factory.mktemp("harbor") / "harbor"))


def test_a_repeated_question_brings_nothing_new(harbor):
    """The cut is judged on the whole ranking, shown facts included: the best of what is left after
    the first answer is no measure of relevance (it let in 10 unrelated entries)."""
    prompt = "how long do registry bearer tokens last before they expire?"
    first = recall(harbor, prompt)
    assert "DEC-8YBJ" in window(first)
    shown = set(window(first))
    again = recall(harbor, prompt, exclude=shown)
    assert window(again) == [], window(again)
    # a follow-up with a new angle still gets what is new and relevant
    follow = recall(harbor, "and what happens when the token signing key leaks?", exclude=shown)
    assert not set(window(follow)) & shown


LOG = """2026-11-30T10:22:01.123Z INFO  worker-3 job=8812 claimed build batch size=500
2026-11-30T10:22:02.004Z INFO  worker-3 job=8812 fetching layers from cache
2026-11-30T10:22:04.551Z DEBUG worker-3 job=8812 pool stats open=12 idle=3 waiting=0
2026-11-30T10:22:04.551Z INFO  worker-3 job=8812 uploaded 14 blobs in 2812ms
2026-11-30T10:22:31.002Z ERROR worker-3 job=8812 claim failed after 30001ms
psycopg.errors.QueryCanceled: canceling statement due to statement timeout"""


def test_a_pasted_log_finds_its_lesson(harbor):
    """Timestamps, ids, counters and routine lines do not dilute the error line."""
    for prompt in (LOG, "\n".join([LOG.splitlines()[0]] * 25 + LOG.splitlines())):
        r = recall(harbor, prompt)
        assert "LSN-8T0Y" in window(r)[:3], window(r)
        assert len(window(r)) <= 8, window(r)


def test_distill_keeps_prose_and_problem_lines_without_noise():
    out = distill("why does this fail?\n" + LOG)
    assert out.splitlines()[0] == "why does this fail?"
    assert "QueryCanceled" in out and "claim failed" in out
    assert "2026" not in out and "8812" not in out and "fetching layers" not in out
    assert distill("a plain question\nover two lines") == "a plain question\nover two lines"


KLOG = """I1130 10:22:01.123456    8812 worker.go:88] claimed build batch size=500
I1130 10:22:02.004123    8812 worker.go:102] fetching layers from cache
I1130 10:22:04.551000    8812 pool.go:40] pool stats open=12 idle=3 waiting=0
I1130 10:22:04.551000    8812 worker.go:130] uploaded 14 blobs in 2812ms
E1130 10:22:31.002000    8812 worker.go:150] claim failed after 30001ms
psycopg.errors.QueryCanceled: canceling statement due to statement timeout"""


def test_a_klog_paste_is_read_as_a_log(harbor):
    """glog/klog lines (every Kubernetes component writes them) are log lines: their routine lines and
    bookkeeping no longer find routine facts (the window was 6 entries, the lesson and five others)."""
    assert distill(KLOG).splitlines() == ["claim failed after",
                                          "psycopg.errors.QueryCanceled: canceling statement due to statement timeout"]
    r = recall(harbor, KLOG)
    assert window(r)[:1] == ["LSN-8T0Y"] and len(window(r)) <= 3, window(r)


@pytest.mark.parametrize("line", [
    "E1202 09:41:17.553120   48211 server.go:329] unable to start the controlplane",
    'time=2026-12-01T10:00:00Z level=error msg="dial tcp: connection refused"',
    "panic: runtime error: invalid memory address or nil pointer dereference",
    "--- FAIL: TestReconcile (0.02s)",
    "thread 'main' panicked at src/main.rs:10:5:",
    'Exception in thread "main" java.lang.NullPointerException',
    "Caused by: java.io.IOException: Broken pipe",
    "    at Worker.claim (/app/src/worker.js:150:11)",
    "    at async Promise.all (index 0)",
    "npm ERR! code E404",
])
def test_common_log_formats_are_log_lines(line):
    from stele.retrieve.distill import is_log_line

    assert is_log_line(line)


@pytest.mark.parametrize("line", [
    "at the moment we run the worker at two replicas",
    "I think the panic: part is a red herring",
    "Exception handling in the worker is inconsistent",
    "E1202 is the error code we see",
])
def test_prose_is_not_a_log_line(line):
    from stele.retrieve.distill import is_log_line

    assert not is_log_line(line)


def test_a_one_line_prompt_is_never_a_paste():
    """The gate skips the distiller for one line (`gate.distilled`): that holds while a paste needs
    two log lines at least."""
    from stele.retrieve import distill as distill_mod
    from stele.retrieve.gate import distilled

    assert distill_mod.MIN_LOG_LINES >= 2
    line = "2026-11-30T10:22:01Z ERROR claim failed: QueryCanceled"
    assert distilled(line)[0] == distill(line) == line
    assert distilled(f"{line}\n{line}")[0] == distill(f"{line}\n{line}") != f"{line}\n{line}"


TRACE = """Seeing this after my refactor of the account screen:

FATAL EXCEPTION: DefaultDispatcher-worker-3
java.lang.IllegalStateException: BillingSession object has already been destroyed
    at org.example.billing.client.BillingSession.callWithHandle$billing_release(billing_client.kt:1542)
    at org.example.components.service.billing.BillingSession.fetchInvoices(BillingSession.kt:121)
    at org.example.components.service.billing.SyncWorker.doWork(SyncWorker.kt:88)

Who is supposed to call destroy() on these objects?"""


def test_a_stack_trace_is_searched_by_its_error_not_its_frames(repo):
    """The frames say where an error surfaced, not what it is: searched, their names (files and
    functions no fact holds, here parts of the repository the record never mentions) outweighed the
    error line and the question, and the lesson explaining the error got nothing (rust-mobile
    `error-destroyed`: coverage 0.20, cosine 0.55 with the frames; a clear lead at cosine 0.75 without)."""
    track(repo, "android/src/main/java/org/example/billing/client/billing_client.kt",
          "android/src/main/java/org/example/components/service/billing/BillingSession.kt",
          "android/src/main/java/org/example/components/service/billing/SyncWorker.kt")
    write_fact(repo, "INS-0001", "instruction", "Destroying native objects from Kotlin: one owner, explicit destroy",
               body="A native interface object is a boxed Rust value behind a raw pointer, and the garbage "
                    "collector will not free it reliably, so destroy it explicitly: create and destroy it in "
                    "one function with .use { }, keep it in an application-lifetime singleton, or let exactly "
                    "one class own and destroy it. Calling a method after destroy throws "
                    "IllegalStateException (a bug, not memory corruption).")
    write_fact(repo, "DEC-0002", "decision", "Invoices are numbered per tenant and per year")
    write_fact(repo, "LSN-0003", "lesson", "Daylight saving shifted the nightly close by an hour")
    write_fact(repo, "DEC-0004", "decision", "Sync runs in a periodic worker with exponential backoff")
    r = recall(Project(repo), TRACE)
    assert window(r)[:1] == ["INS-0001"], (window(r), r.trace.unrecorded)


def test_a_frame_still_names_its_symbol():
    """Frames are not searched, but the names they hold still count: a function in a frame is a named
    identifier (a seed when few facts hold it), its file a path."""
    g = check('Traceback (most recent call last):\n  File "app/billing/pdf.py", line 12, in render_pdf\n'
              '    raise TimeoutError()\nTimeoutError: the export took too long, what now?', [], 25)
    assert "render_pdf" in g.identifiers and "app/billing/pdf.py" in g.paths
    assert "render_pdf" not in g.text and "TimeoutError" in g.text
    frames_only = "  at a.b.C.run(C.kt:1)\n  at a.b.D.go(D.kt:2)\n  at a.b.E.main(E.kt:3)"
    assert "C.run" in check(frames_only, [], 25).text  # nothing else left: the frames are what is searched


def test_dotted_names_are_identifiers_not_paths():
    g = check("does Cart.total round before psycopg.errors are raised in retry.py?", [], 25)
    assert g.named_paths == ["retry.py"]
    assert {"Cart.total", "psycopg.errors"} <= set(g.identifiers)


def test_a_question_naming_a_symbol_gets_its_fact(repo):
    """A rare identifier the prompt names is a seed, even when the prompt's other words are not in
    the fact (a strong full-text share used to skip the embeddings, then coverage refused the hit)."""
    write_fact(repo, "DEC-0001", "decision", "PDF export runs in the worker queue, never in a request",
               body="`render_pdf` takes 4-40 s on large invoices; calling it from a view timed out the "
                    "load balancer. Enqueue it with `enqueue_export` instead.",
               anchors=["src/billing/pdf.py::render_pdf"])
    write_fact(repo, "DEC-0002", "decision", "Invoices are numbered per tenant and per year")
    write_fact(repo, "LSN-0003", "lesson", "Daylight saving shifted the nightly close by an hour")
    r = recall(Project(repo), "Is render_pdf ever invoked inside a web request handler?")
    assert window(r)[:1] == ["DEC-0001"], window(r)
    assert r.trace.candidates[0].named == "render_pdf"


@pytest.mark.parametrize("prompt", [
    "what is the best way to learn to play jazz piano as an adult beginner?",
    "how do I change the default shell to zsh on macOS?",
    pytest.param("my kubernetes ingress returns 404 for every path after the upgrade, what should I check?",
                 marks=pytest.mark.xfail(strict=True, reason="coverage 0.36 from generic words (404, path, "
                                         "returns) of a lesson: docs/retrieval.md, what is left")),
    pytest.param("How do I resize a partition on my laptop's SSD without losing data?", marks=pytest.mark.xfail(
        strict=True, reason="the bundled static model puts the 2.5 objective ('no data loss ... storage "
                            "growth') 2.9 deviations above its background: docs/retrieval.md, what is left")),
])
def test_a_generic_neighbour_is_not_a_match(harbor, prompt):
    """A fact near everything (its background) needs more than a middling cosine: unrelated
    questions get nothing and no warning."""
    r = recall(harbor, prompt)
    assert (r.entries, r.risks) == ([], []), window(r)


def test_why_names_one_reason_per_candidate(harbor):
    from stele.retrieve.explain import describe

    whys = [c["why"] for prompt in ("psycopg.errors.QueryCanceled: canceling statement due to statement timeout",
                                    "How do I resize a partition on my laptop's SSD without losing data?")
            for c in describe(recall(harbor, prompt))["candidates"]]
    rejected = [w for w in whys if w.startswith("not a seed")]
    assert rejected, whys
    for why in rejected:
        assert why.count("not a seed") == 1 and " or " not in why, why
