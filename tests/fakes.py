"""Test doubles: a deterministic fake embedding model, and a fact-file writer for retrieval tests."""
from __future__ import annotations

import re
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

DIM = 64
# Words the fake model treats as one meaning, so paraphrase tests mean something.
SYNONYMS = {"billed": "charge", "charged": "charge", "charges": "charge", "twice": "double", "two": "double",
            "duplicate": "double", "times": "double", "purchase": "order", "orders": "order"}


class FakeEncoder:
    dim = DIM

    def __init__(self) -> None:
        self.calls: list[int] = []

    def encode(self, texts):
        self.calls.append(len(texts))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for n, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[n, zlib.crc32(SYNONYMS.get(word, word).encode()) % DIM] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


@pytest.fixture
def fake_model(monkeypatch):
    """Replace the embedding model with FakeEncoder; yields a handle whose `model_id` may be changed."""
    from stele.index import vectors
    from stele.retrieve import seeds

    state = SimpleNamespace(model_id="fake@1", encoder=FakeEncoder(), bulk_loads=0)

    def load(ref, bulk, index_dir=None):
        state.bulk_loads += bool(bulk)
        return state.encoder

    monkeypatch.setattr(vectors, "model_ref", lambda project: SimpleNamespace(ref="fake", path=None,
                                                                              model_id=state.model_id))
    monkeypatch.setattr(vectors, "load_encoder", load)
    seeds._ENCODERS.clear()
    yield state
    seeds._ENCODERS.clear()


@pytest.fixture
def no_model(monkeypatch):
    """No usable embedding model at all."""
    from stele.index import vectors
    from stele.index.encoder import EncoderUnavailable
    from stele.retrieve import seeds

    def missing(project):
        raise EncoderUnavailable("embedding model folder /nowhere does not exist")

    monkeypatch.setattr(vectors, "model_ref", missing)
    seeds._ENCODERS.clear()
    yield
    seeds._ENCODERS.clear()


def write_fact(root: Path, fact_id: str, kind: str, title: str, body: str = "", **meta) -> Path:
    """`tests.factfiles.write_fact` with the title positional and the body defaulting to the title
    (so a fact's words are all its own); returns the file's path."""
    from tests.factfiles import write_fact as write

    return root / write(root, fact_id, kind, title=title, body=body or title, **meta)
