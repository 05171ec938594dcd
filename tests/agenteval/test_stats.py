import pytest

from stele.agenteval.stats import newcombe, paired_bootstrap, wilson


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


def test_the_paired_bootstrap_is_fixed_by_its_seed_and_uses_the_pairing():
    diffs = [1] * 10 + [0] * 8  # 10 pairs only `with` passed, 8 where both arms agreed
    got = paired_bootstrap(diffs)
    assert got == paired_bootstrap(list(diffs)) == pytest.approx((6 / 18, 14 / 18))  # fixed by its seed
    lo, hi = got
    assert 0.3 < lo < 10 / 18 < hi < 0.8
    # the same counts unpaired (10/18 against 0/18) give Newcombe's wider interval
    n_lo, n_hi = newcombe(10, 18, 0, 18)
    assert n_lo < lo and hi - lo < n_hi - n_lo
    assert paired_bootstrap([1, 1, 1]) == (1.0, 1.0)  # every pair agrees: a point (read Newcombe's then)
    assert paired_bootstrap([1, -1] * 20)[0] < 0 < paired_bootstrap([1, -1] * 20)[1]
    assert paired_bootstrap([]) == (-1.0, 1.0)
