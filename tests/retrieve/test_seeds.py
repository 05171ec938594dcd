import pytest

from stele import plain
from stele.retrieve.seeds import fuse, weights
from stele.retrieve.settings import Settings

S = Settings.defaults()


def test_fusion_is_weighted_reciprocal_rank():
    hits = fuse([("A", 9.0), ("B", 5.0)], [("B", 0.9), ("C", 0.8)], 1.0, 0.5, 1)
    assert [h.id for h in hits] == ["B", "A", "C"]  # 1/3 + 0.5/2 beats 1/2
    b = hits[0]
    assert (b.bm25_rank, b.vector_rank) == (2, 1) and abs(b.fused - (1 / 3 + 0.5 / 2)) < 1e-12
    assert hits[1].vector_rank is None and hits[2].bm25_rank is None


def test_fusion_ties_keep_bm25_order_first():
    hits = fuse([("A", 1.0)], [("B", 1.0)], 1.0, 1.0, 1)
    assert [h.id for h in hits] == ["A", "B"]


def test_weak_full_text_matches_hand_the_lead_to_the_embeddings():
    assert weights(S, S.strong_match) == (S.bm25_weight, 0.0)  # sure enough: no embeddings
    fair = weights(S, S.strong_match - 1e-9)
    weak = weights(S, 0.0)
    middle = weights(S, (S.weak_match + S.strong_match) / 2)
    assert abs(fair[1] - S.vector_weight) < 1e-6 and weak == (S.bm25_weight / 2, 1.0)
    assert weak[1] > middle[1] > fair[1] and weak[0] < middle[0] < fair[0]
    assert weights(plain.replace(S, weak_match=0.5, strong_match=0.5), 0.0) == (S.bm25_weight,
                                                                                      S.vector_weight)


def _hit(i, br, vr, coverage, cosine):
    from stele.retrieve.seeds import Hit

    return Hit(i, bm25_rank=br, vector_rank=vr, coverage=coverage, cosine=cosine)


def test_agreement_marks_the_first_hit_of_a_long_prompt_near_both_floors():
    """`agreeing`: the fused first hit, in both rankings' first AGREE_RANK, each figure BOTH of the way."""
    from stele.retrieve.seeds import AGREE_RANK, BOTH, LONG_PROMPT, agreeing, by_text, by_vector, passed

    near = S.text_floor * 0.9, 0.2 + (S.vector_floor - 0.2) * 0.9  # 0.9 of the way on both figures
    cases = {  # (words, bm25 rank, vector rank, coverage, cosine) -> marked
        (LONG_PROMPT, 1, 2, *near): True,
        (LONG_PROMPT - 1, 1, 2, *near): False,  # a short prompt: the floors apply as they are
        (LONG_PROMPT, 1, AGREE_RANK + 1, *near): False,  # the embeddings rank it further down
        (LONG_PROMPT, AGREE_RANK + 1, 1, *near): False,
        (LONG_PROMPT, 1, 1, S.text_floor * (BOTH - 0.05), near[1]): False,  # one figure short
        (LONG_PROMPT, 1, 1, near[0], 0.2 + (S.vector_floor - 0.2) * (BOTH - 0.05)): False,
    }
    for (words, br, vr, coverage, cosine), marked in cases.items():
        hits = [_hit("A", br, vr, coverage, cosine), _hit("B", 2, 3, coverage, cosine)]
        agreeing(hits, words, S)
        assert hits[0].agrees is marked, (words, br, vr, coverage, cosine)
        assert not hits[1].agrees  # only the first hit
        assert (passed(hits[0], S) is not None) is marked
        assert max(by_text(hits[0], S), by_vector(hits[0], S)) < 1.0  # no other floor passed
    hits = [_hit("A", 1, None, *near)]  # the embeddings never asked: no agreement to count
    agreeing(hits, LONG_PROMPT, S)
    assert not hits[0].agrees


@pytest.mark.parametrize("record, prompt, fact", [
    # rails-publishing `para-contract`: coverage 0.33 (0.94 of the way), cosine 0.61 (0.93), 1st and 2nd
    ("rails-publishing", "I edited a shared jsonnet definition and CI is now running government-frontend's "
     "and collections' test suites against my branch. Why does a change here run other repositories' tests?",
     "FYI-YMBV"),
    # java-routing `ident-getstop`: coverage 0.31 (0.89), cosine 0.63 (0.98), 1st and 3rd
    ("java-routing", "For the lookup method on my new repository, should it be called getParkingLot(id) or "
     "findParkingLot(id), and should it return null when the id is unknown?", "INS-350F"),
])
def test_a_long_question_both_rankings_put_first_is_answered(repo, record, prompt, fact):
    """On real records (eval/sets/): a developer's long question whose fact full text and the embeddings
    both put at the top, each figure near its floor and neither reaching it (the situation words dilute
    coverage), got nothing; agreement on a long prompt makes it a seed."""
    import shutil
    from pathlib import Path

    from stele.project import Project
    from stele.retrieve.recall import recall
    from tests.helpers import window

    src = Path(__file__).resolve().parents[2] / "eval" / "sets" / record / "record"
    shutil.copytree(src, repo / "docs" / "memory", dirs_exist_ok=True)
    r = recall(Project(repo), prompt)
    assert fact in window(r)[:3], window(r)
    seed = next(x for x in r.trace.seeds if x.id == fact)
    assert seed.hit is not None and seed.hit.agrees
