import pytest

from stele.agenteval.stats import newcombe, wilson


def test_wilson_matches_the_published_values():
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 3) == pytest.approx((0.0, 0.5615), abs=1e-4)  # no collapse to a point at 0/n
    assert wilson(3, 3) == pytest.approx((0.4385, 1.0), abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_newcombe_matches_his_worked_example():
    # Newcombe (1998), Statistics in Medicine 17:873, method 10 on 56/70 vs 48/80: 0.0524 to 0.3339
    assert newcombe(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert newcombe(3, 3, 0, 3) == pytest.approx((0.2059, 1.0), abs=1e-4)  # spans no zero: a difference shown
    lo, hi = newcombe(3, 3, 3, 3)
    assert lo < 0 < hi and lo == pytest.approx(-hi)
    assert newcombe(1, 2, 0, 0) == (-1.0, 1.0)
