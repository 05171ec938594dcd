"""The vector store: int8 rows by content hash, one store per model, and the SIMD cosine scan."""
import hashlib

import numpy as np
import pytest

from stele.index import vectors


def digest(text: str) -> bytes:
    return hashlib.sha1(text.encode()).digest()


def test_rows_are_int8_scaled_to_their_largest_component():
    m = vectors.normalize(np.array([[3, 4], [1, 0], [0, 0], [-1, 0.25]], dtype=np.float32))
    assert list(np.frombuffer(vectors.quantize(m), dtype=np.int8)) == [95, 127, 127, 0, 0, 0, -127, 32]
    for row in m:  # the query side, without numpy, scales the same way
        assert vectors.quantize_one(row.tolist()) == vectors.quantize(row.reshape(1, -1))


def test_a_store_appends_finds_by_hash_and_compacts(tmp_path):
    store = vectors.Store(tmp_path, "fake@1", dim=2)
    assert store.count == 0 and store.hash_rows() == {}
    assert store.append(bytes([1, 2, 3, 4]), bytes(16), [digest("a"), digest("b")]) == 0
    assert store.append(bytes([5, 6]), bytes(8), [digest("c")]) == 2
    assert store.count == 3 and store.hash_rows() == {digest("a"): 0, digest("b"): 1, digest("c"): 2}
    again = vectors.Store(tmp_path, "fake@1")  # the width is read back from model.json
    assert again.dim == 2 and again.count == 3 and again.digest_at(1) == digest("b")
    with open(store.folder / vectors.ROWS, "ab") as f:
        f.write(b"\x07")  # a torn append: half a row, no hash
    assert store.count == 3 and store.append(bytes([8, 9]), bytes(8), [digest("d")]) == 3
    assert vectors.load(tmp_path, "fake@1", 4, 2).row(3) == bytes([8, 9])
    store.compact([3, 0])
    assert store.count == 2 and store.hash_rows() == {digest("d"): 0, digest("a"): 1}
    with pytest.raises(ValueError):
        vectors.load(tmp_path, "fake@1", 3, 2)  # fewer rows than the catalog names: damaged
    assert vectors.Store(tmp_path, "fake@2").count == 0  # another model, another store


def test_a_few_wanted_digests_are_found_as_the_full_map_finds_them(tmp_path):
    store = vectors.Store(tmp_path, "fake@1", dim=1)
    a, b = digest("a"), digest("b")
    straddler = a[10:] + b[:10]  # the bytes across the boundary of rows 0 and 1: not a row's digest
    store.append(bytes(3), bytes(12), [a, b, a])
    full = store.hash_rows()
    assert store.hash_rows([b, a, digest("zzz"), straddler]) == {b: 1, a: 0} == {k: full[k] for k in (b, a)}
    assert store.hash_rows([a] * (vectors.FEW_WANTED + 1)) == full  # many: one map of every row


def test_only_the_most_recently_used_stores_are_kept(tmp_path):
    import os
    import time

    for n in range(5):
        store = vectors.Store(tmp_path, f"m@{n}", dim=1)
        store.append(b"\x01", bytes(4), [digest(str(n))])
        os.utime(store.folder / vectors.META, (time.time() - 100 + n, time.time() - 100 + n))
    vectors.prune(tmp_path, "m@0")
    kept = sorted(p.name for p in (tmp_path / vectors.DIR).iterdir())
    assert kept == ["m_0", "m_2", "m_3", "m_4"]  # the three newest, and the one in use


def test_top_k_is_by_cosine_best_first(tmp_path):
    m = vectors.normalize(np.array([[1, 0], [0.9, 0.1], [0, 1], [-1, 0], [0, 0]], dtype=np.float32))
    store = vectors.Store(tmp_path, "fake@1", dim=2)
    store.append(vectors.quantize(m), vectors.floats(m), [digest(str(n)) for n in range(5)])
    matrix = vectors.load(tmp_path, "fake@1", 5, 2)
    top = vectors.top_k(matrix, [1.0, 0.0], 3)
    assert [r for r, _ in top] == [0, 1, 2, 4]  # rows 2 and 4 tie with the 3rd: both come, by row
    assert abs(top[0][1] - 1.0) < 1e-3 and abs(top[1][1] - 0.994) < 0.01
    assert vectors.top_k(matrix, [1.0, 0.0], 10)[-1][0] == 3  # opposite comes last, after the zero row
    assert vectors.top_k(vectors.load(tmp_path, "fake@1", 0, 2), [1.0, 0.0], 3) == []


def test_the_int8_ranking_is_the_float32_ranking_on_the_real_model(tmp_path):
    """On the bundled model, over a few hundred short facts (drawn from 30 words, so their cosines
    crowd together) and paraphrased queries, the int8 scan and its float32 re-ranking rank exactly as
    numpy's float32 dot product over every row did before (ties closer than float32 rounding aside)."""
    from stele.index.encoder import BUNDLED_DIR, LeanEncoder

    enc = LeanEncoder(BUNDLED_DIR)
    words = ["payment", "retry", "backoff", "jitter", "provider", "outage", "checkout", "cart", "reservation", "stock", "webhook", "idempotency", "refund", "invoice", "rate", "limit", "partner", "api", "key", "redis", "failover", "runbook", "migration", "table", "lock", "session", "token", "login", "privilege", "billing", "twice", "order", "sale", "queue", "worker"]
    import random

    rng = random.Random(7)
    texts = [" ".join(rng.sample(words, rng.randint(4, 12))) for _ in range(400)]
    queries = ["customers were charged two times for one purchase", "what happens when the cache dies",
               "how long do we hold items someone put in their basket", "stop robots guessing passwords",
               "why do we wait longer between attempts to reach the bank"]
    rows = vectors.embed(enc, texts)
    store = vectors.Store(tmp_path, "real", dim=rows.shape[1])
    store.append(vectors.quantize(rows), vectors.floats(rows), [digest(t) for t in texts])
    matrix = vectors.load(tmp_path, "real", len(texts), rows.shape[1])
    same = 0
    for q in queries:
        qv = enc.encode([q])[0]
        exact = rows @ qv
        float_order = [int(r) for r in np.argsort(-exact, kind="stable")[:20]]
        int8_order = [r for r, _ in vectors.top_k(matrix, qv.tolist(), 20)]
        for a, b in zip(float_order, int8_order, strict=True):
            assert a == b or abs(exact[a] - exact[b]) < 1e-6, (q, float_order, int8_order)
            same += a == b
    assert same >= 0.95 * 20 * len(queries)


def test_near_ties_are_ordered_by_the_exact_cosine(tmp_path):
    """Rows whose cosines differ by less than float32 summation can resolve (a millionth) are still
    ranked as a float64 sum of their float32 products ranks them, and the cut at k falls among them."""
    import math
    import random

    rng = random.Random(3)
    dim = 256
    base = np.array([rng.gauss(0, 1) for _ in range(dim)], dtype=np.float32)
    rows = [base + np.float32(1e-4) * np.array([rng.gauss(0, 1) for _ in range(dim)], dtype=np.float32)
            for _ in range(60)]
    rows += [np.array([rng.gauss(0, 1) for _ in range(dim)], dtype=np.float32) for _ in range(200)]
    m = vectors.normalize(np.array(rows, dtype=np.float32))
    store = vectors.Store(tmp_path, "fake@1", dim=dim)
    store.append(vectors.quantize(m), vectors.floats(m), [digest(str(n)) for n in range(len(m))])
    matrix = vectors.load(tmp_path, "fake@1", len(m), dim)
    query = m[0].astype(np.float64).tolist()
    exact = [math.fsum(float(a) * b for a, b in zip(row, query, strict=True)) for row in m]
    want = sorted(range(len(m)), key=lambda r: (-exact[r], r))[:25]
    top = vectors.top_k(matrix, query, 25)
    assert [r for r, _ in top] == want
    assert all(abs(cos - exact[r]) < 1e-12 for r, cos in top)
    assert max(exact[r] for r in want) - min(exact[r] for r in want) < 1e-5  # they are near ties


def test_the_background_digest_names_the_background_texts():
    """The background file is named by a digest kept in the code (no read hashes the texts): edit
    background.txt and this says what the new digest is."""
    digest = hashlib.sha1("\n".join(vectors.background_texts()).encode()).hexdigest()[:12]
    assert digest == vectors.BACKGROUND_DIGEST, f"set vectors.BACKGROUND_DIGEST to {digest!r}"
