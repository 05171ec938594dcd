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
