"""Test doubles: a deterministic fake embedding model, and fact files written by hand."""
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

    def load(ref, bulk):
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
    from stele.retrieve import seeds

    def missing(project):
        raise vectors.NoModel("embedding model folder /nowhere does not exist")

    monkeypatch.setattr(vectors, "model_ref", missing)
    seeds._ENCODERS.clear()
    yield
    seeds._ENCODERS.clear()


def write_fact(root: Path, fact_id: str, kind: str, title: str, body: str = "", **meta) -> Path:
    """A fact file under docs/memory/, frontmatter in the order given."""
    lines = ["---", f"id: {fact_id}", f"kind: {kind}", f"title: {title!r}" if ":" in title else f"title: {title}"]
    for key, value in meta.items():
        key = key.replace("_", "-") if key in ("caused_by", "relates_to", "part_of") else key
        if isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {k}: [{', '.join(v)}]" for k, v in value.items()]
        elif isinstance(value, list):
            lines.append(f"{key}: [{', '.join(value)}]")
        else:
            lines.append(f"{key}: {value}")
    lines += ["---", body or title, ""]
    path = root / "docs" / "memory" / f"{fact_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
