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


def test_top_k_is_by_cosine_best_first():
    m = vectors.normalize(np.array([[1, 0], [0.9, 0.1], [0, 1], [-1, 0]], dtype=np.float32))
    assert [r for r, _ in vectors.top_k(m, np.array([1, 0], dtype=np.float32), 3)] == [0, 1, 2]
    assert vectors.top_k(m, np.array([1, 0], dtype=np.float32), 10)[-1][0] == 3
    assert vectors.top_k(m[:0], np.array([1, 0], dtype=np.float32), 3) == []
