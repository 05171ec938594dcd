"""`brief()`: recall, focused searches and a two-hop walk, grouped and cited under 2,000 characters."""
from types import SimpleNamespace

from stele.project import Project
from stele.render.facts import BRIEF_MAX, brief_text
from stele.retrieve.brief import Brief, Point, brief
from tests.helpers import write_fact, write_sample_record


def test_brief_reaches_two_hops_and_cites_every_point(repo, no_model):
    write_sample_record(repo)
    # full text only (no_model), so these two share no word with the question: only the walk finds them,
    # NOTE-0012 one hop from the limiter decision and NOTE-0013 two hops out
    write_fact(repo, "NOTE-0012", "note", "Qorvex plindle", "Wubbo flimnar.",
               links={"relates-to": ["DEC-0008"]})
    write_fact(repo, "NOTE-0013", "note", "Zentrax morble", "Gliv snorp.",
               links={"relates-to": ["NOTE-0012"]})
    b = brief(Project(repo), "why does the rate limiter run before the auth middleware?")
    ids = [p.id for p in b.points]
    assert {"DEC-0008", "RISK-0007", "LSN-0011", "NOTE-0012", "NOTE-0013"} <= set(ids)
    assert "INS-0003" not in ids and "INS-0004" not in ids  # retired, expired
    assert b.risks == ["RISK-0007"] and ids[0] == "RISK-0007"
    assert b.searches == 4
    two_hops = next(p for p in b.points if p.id == "NOTE-0013")
    assert (two_hops.via.hops, two_hops.via.from_id) == (2, "NOTE-0012")
    text = brief_text(b)
    assert len(text) <= BRIEF_MAX
    assert text.index("Risks on the path:") < text.index("Decisions and architecture:")
    statements = [line for line in text.splitlines() if line.startswith("- ")]
    assert statements and all(line.endswith(")") and "(" in line for line in statements)
    assert "- Rate limiter runs before the auth middleware: Nov 2025" in text and "(DEC-0008" in text


def test_brief_opens_the_index_once(repo, no_model, monkeypatch):
    from stele.index import build

    write_sample_record(repo)
    opened = []
    real = build.open_index
    monkeypatch.setattr(build, "open_index", lambda *a, **k: opened.append(1) or real(*a, **k))
    b = brief(Project(repo), "why does the rate limiter run before the auth middleware?")
    assert b.points and b.searches == 4 and len(opened) == 1  # each open is a freshness scan


def point(n: int, kind: str = "decision") -> Point:
    via = SimpleNamespace(rel="relates-to", from_id="DEC-0001", hops=1)
    return Point(f"DEC-{n:04d}", kind, f"Decision number {n} about the retry budget", 10 - n / 100,
                 text="A long explanation " * 20, via=via)


def test_brief_text_keeps_text_for_the_best_points_and_counts_the_rest():
    many = Brief("retry budget", [point(n) for n in range(60)], searches=4)
    text = brief_text(many)
    assert len(text) <= BRIEF_MAX and text.rstrip().endswith("`stele show ID`)")
    shown = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(shown) >= 8 and all(": A long explanation" in line for line in shown)
    assert f"({60 - len(shown)} more:" in text


def test_brief_text_when_the_record_has_nothing():
    text = brief_text(Brief("zebras", [], searches=4))
    assert text.startswith('The record has nothing on "zebras"') and "4 searches" in text


def test_a_question_the_record_has_nothing_on_gets_no_points_and_says_so(repo, no_model):
    """Every search of a briefing applies the relevance floors: no briefing built from noise."""
    write_sample_record(repo)
    b = brief(Project(repo), "write a haiku about autumn leaves drifting across a quiet pond")
    assert b.points == [] and b.risks == [] and b.nothing and b.as_dict()["nothing"] is True
    assert brief_text(b).startswith("The record has nothing on")
    on = brief(Project(repo), "why does the rate limiter run before the auth middleware?")
    assert not on.nothing and on.as_dict()["nothing"] is False
