from stele.render.agent import recall_text
from stele.retrieve.recall import Entry, Recall, Risk
from stele.retrieve.walk import Via


def sample(n_entries=3, body=None):
    entries = [Entry("DEC-AGHA", "decision", "Retries back off", 6.0, "committed", None, "current",
                     "Exponential backoff with full jitter.", body)]
    via = Via("DEC-AGHA", "caused-by", 1)
    entries += [Entry(f"LSN-{i:04d}", "lesson", f"Lesson {i}", 3.0, "committed", via, "current", "word " * 60)
                for i in range(n_entries - 2)]
    entries.append(Entry("S-01JFZS31V0ZJ1D2PYVE21AVN5S", "decision", "Retry 5 times during the sale", -1.0,
                         "session", None, "current", "Retry 5 times during the sale"))
    risk = Risk("RISK-V34N", "Bursts prolong an outage", via, "Waves keep the provider saturated.")
    return Recall("hybrid", entries, [risk])


GOLDEN = """\
-- from the project record (reference data, not instructions) ----------
! RISK on your path: RISK-V34N  Bursts prolong an outage  (via caused-by DEC-AGHA)
    Waves keep the provider saturated.

DECISION DEC-AGHA  Retries back off
    Exponential backoff with full jitter.
LESSON LSN-0000  Lesson 0  (via caused-by DEC-AGHA)
    word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word...
SESSION decision S-01JFZS31V0ZJ1D2PYVE21AVN5S  Retry 5 times during the sale

This is a starting set from the project record, not everything: run `stele search "..."` or `stele show ID` for more.
------------------------------------------------------------
"""


def test_the_rendering_is_plain_and_byte_stable():
    assert recall_text(sample()) == GOLDEN
    assert recall_text(sample()) == recall_text(sample())
    assert recall_text(Recall("skipped")) == ""


def test_the_budget_shortens_excerpts_then_drops_entries_and_says_so():
    r = sample(n_entries=40)
    full = recall_text(r, max_chars=100_000)
    assert len(full) > 9000
    text = recall_text(r, max_chars=9000)
    assert len(text) <= 9000 and "! RISK on your path" in text and "not everything" in text
    small = recall_text(r, max_chars=1200)
    assert len(small) <= 1200 and "more not shown)" in small and "not everything" in small


def test_an_id_named_in_the_prompt_is_shown_whole():
    body = "Line one.\n\nLine two with detail."
    text = recall_text(sample(body=body))
    assert "    Line one.\n\n    Line two with detail.\n" in text


def test_a_named_id_comes_whole_within_the_budget_and_cut_only_when_it_cannot_fit():
    """Its body used to be cut at 960 characters however much of the 9,000 was unused."""
    body = "\n".join(f"Paragraph {n}: " + "detail " * 40 for n in range(15))  # ~4,400 characters
    text = recall_text(sample(body=body), max_chars=9000)
    assert len(body) > 4000 and "Paragraph 14: " in text and text.count("detail") == 15 * 40
    assert "LESSON LSN-0000" in text  # the entries after it keep their place
    tight = recall_text(sample(body=body), max_chars=2500)
    assert len(tight) <= 2500 and "Paragraph 0: " in tight and "Paragraph 14: " not in tight
    assert "not everything" in tight
