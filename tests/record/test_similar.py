"""The near-duplicate join finds exactly the pairs a brute-force comparison finds."""
import itertools
import random

from stele.record.similar import shingles, similar_pairs


def brute(texts, t):
    out = []
    for a, b in itertools.combinations(sorted(texts), 2):
        x, y = shingles(texts[a]), shingles(texts[b])
        if x and y and len(x & y) / len(x | y) >= t:
            out.append((a, b))
    return sorted(out)


def test_prefix_filtered_join_equals_brute_force():
    rng = random.Random(7)
    words = [f"w{i}" for i in range(40)]
    base = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 30))) for _ in range(60)]
    texts = {}
    for i, text in enumerate(base):
        texts[f"A{i}"] = text
        tokens = text.split()
        if i % 3 == 0 and tokens:  # a near copy: one word changed
            tokens[rng.randrange(len(tokens))] = rng.choice(words)
            texts[f"B{i}"] = " ".join(tokens)
    for t in (0.5, 0.8, 0.92):
        found = sorted(tuple(sorted((a, b))) for a, b, _ in similar_pairs(texts, t))
        assert found == brute(texts, t)
    assert any(a.startswith("A") and b.startswith("B") for a, b in brute(texts, 0.5))


def test_identical_texts_score_one_and_different_texts_nothing():
    texts = {"X": "Rate limit before auth.", "Y": "rate LIMIT before auth", "Z": "Totally other"}
    pairs = similar_pairs(texts, 0.92)
    assert pairs == [("X", "Y", 1.0)]


def test_compared_words_are_the_words_of_the_compared_text():
    from stele.record.similar import compared, words

    cases = [("Use Redis", "Use Redis for sessions."), ("Cache keys", "Expire them hourly."),
             ("ΟΔΟΣ", "Σ at the start"), ("end ΣΑΣ'", "'Σ after a quote"), ("", "only a body"),
             ("Title", ""), ("İstanbul", "ǅ titlecase"), ("a_b-c", "a_b c")]
    for title, body in cases:
        text, seq = compared(title, body)
        assert seq == words(text), (title, body)


def test_words_of_ascii_text_are_the_regex_words():
    """`words` splits ASCII text without the regex; on every ASCII character it gives `\\w+`'s words."""
    import random
    import re

    from stele.record.similar import words

    rnd = random.Random(23)
    alphabet = [chr(c) for c in range(128)] + ["ab", "Z9_", "  ", "\r\n"]
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60))) for _ in range(3000)]
    texts += ["Use `CartItem` (v2.1) for DB_PASSWORD-free snake_case; 42 tests.", "", "___", "é-ASCII? no"]
    assert [words(t) for t in texts] == [tuple(re.findall(r"\w+", t.lower())) for t in texts]
