import numpy as np
import pytest

from stele.index import vectors


def test_the_file_is_a_plain_float32_npy_and_round_trips(tmp_path):
    m = vectors.normalize(np.array([[3, 4], [1, 0], [0, 0]], dtype=np.float32))
    vectors.save(tmp_path, m)
    raw = np.load(tmp_path / vectors.FILE)
    assert raw.dtype == np.float32 and raw.shape == (3, 2)
    assert np.allclose(raw, [[0.6, 0.8], [1, 0], [0, 0]])
    assert np.allclose(vectors.load(tmp_path, 3, 2), raw)


def test_a_file_that_disagrees_with_the_catalog_is_refused(tmp_path):
    vectors.save(tmp_path, np.zeros((2, 4), dtype=np.float32))
    with pytest.raises(ValueError):
        vectors.load(tmp_path, 3, 4)
    (tmp_path / vectors.FILE).write_bytes(b"not numpy")
    with pytest.raises(ValueError):
        vectors.load(tmp_path, 2, 4)


def test_merge_keeps_the_chosen_old_rows_then_appends():
    old = np.arange(8, dtype=np.float32).reshape(4, 2)
    new = np.full((1, 2), 9, dtype=np.float32)
    assert vectors.merge(old, None, new).tolist() == [[0, 1], [2, 3], [4, 5], [6, 7], [9, 9]]
    assert vectors.merge(old, [1, 3], new).tolist() == [[2, 3], [6, 7], [9, 9]]
    assert vectors.merge(old, [], None).shape == (0, 2)
    assert vectors.merge(None, None, new).tolist() == [[9, 9]]


def test_top_k_is_by_cosine_best_first():
    m = vectors.normalize(np.array([[1, 0], [0.9, 0.1], [0, 1], [-1, 0]], dtype=np.float32))
    assert [r for r, _ in vectors.top_k(m, np.array([1, 0], dtype=np.float32), 3)] == [0, 1, 2]
    assert vectors.top_k(m, np.array([1, 0], dtype=np.float32), 10)[-1][0] == 3
    assert vectors.top_k(m[:0], np.array([1, 0], dtype=np.float32), 3) == []
