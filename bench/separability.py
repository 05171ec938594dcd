#!/usr/bin/env python3
"""How well an embedding source tells on-topic prompts from off-topic ones on the realistic sets, in
20 seconds and before any distillation or end-to-end run (issue 26; docs/retrieval.md, "The embedding
model: candidates measured"). Measurement only.

    python bench/separability.py                                  # the bundled model, tune halves
    python bench/separability.py --model DIR                      # any model2vec folder
    python bench/separability.py --static W.safetensors --tokenizer tokenizer.json   # e.g. WordLlama

For each prompt of the half: an on-topic prompt (one that expects facts) scores its expected facts'
best cosine, an off-topic prompt the best cosine of any fact of the record (what would leak). Facts are
embedded by their title, then body (the index adds a summary when one was written). Figures: AUC (the
chance that an on-topic prompt outscores an off-topic one) and, at the thresholds that silence
80/90/95/97% of the off-topic prompts, the share of on-topic prompts still above. Two scores: the plain
cosine, and the cosine after the record's mean fact vector is taken from fact and prompt alike
("centred": what every fact of the record shares removed; `--drop N` also removes the record's first N
principal directions). Only the tune halves unless `--half heldout` is asked for (issue 26: held-out
halves are scored once, at the end).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "eval" / "sets"
sys.path.insert(0, str(ROOT / "src"))

from stele.record.frontmatter import FrontmatterError, parse  # noqa: E402

REJECT = (0.8, 0.9, 0.95, 0.97)


class TokenMean:
    """A static model given as one embedding matrix and a tokenizer.json: the mean of the tokens' rows."""

    def __init__(self, weights: Path, tokenizer: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        tensors = load_file(str(weights))
        if len(tensors) != 1:
            sys.exit(f"{weights}: expected one tensor, found {sorted(tensors)}")
        self.rows = next(iter(tensors.values())).astype(np.float32)
        self.tok = Tokenizer.from_file(str(tokenizer))
        self.tok.no_padding()
        self.tok.enable_truncation(512)

    def encode(self, texts: list[str]) -> np.ndarray:
        dim = self.rows.shape[1]
        out = []
        for t in texts:
            ids = np.clip(self.tok.encode(t).ids, 0, len(self.rows) - 1)
            out.append(self.rows[ids].mean(0) if len(ids) else np.zeros(dim, np.float32))
        return np.array(out)


def facts(record: Path) -> dict[str, str]:
    out = {}
    for path in sorted(record.rglob("*.md")):
        try:
            doc = parse(path.read_text(encoding="utf-8"))
        except (FrontmatterError, UnicodeDecodeError):
            continue
        data = doc.meta
        if "id" in data:
            out[str(data["id"])] = f"{data.get('title', '')}\n{doc.body.strip()}".strip()
    return out


def unit(m: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(n == 0, 1, n)


def centre(m: np.ndarray, mean: np.ndarray, top: np.ndarray) -> np.ndarray:
    """`m` less the record's mean vector and its `top` directions, unit length."""
    m = m - mean
    return unit(m - (m @ top.T) @ top)


def scores(model, half: str, sets: list[str], drop: int = 0) -> dict[str, tuple[list[float], list[float]]]:
    out: dict[str, tuple[list[float], list[float]]] = {"cosine": ([], []), "centred": ([], [])}
    for name in sets:
        texts = facts(SETS / name / "record")
        ids = list(texts)
        vecs = unit(model.encode([texts[i] for i in ids]))
        mean = vecs.mean(0)
        top = np.linalg.svd(vecs - mean, full_matrices=False)[2][:drop]  # the record's main directions
        centred = centre(vecs, mean, top)
        for case in yaml.safe_load((SETS / name / f"{half}.yaml").read_text(encoding="utf-8"))["queries"]:
            if "prompt" not in case:
                continue
            q = unit(model.encode([case["prompt"]]))[0]
            by = {"cosine": vecs @ q, "centred": centred @ centre(q, mean, top)}
            expected = [ids.index(e) for e in case.get("expect") or [] if e in texts]
            for key, row in by.items():
                if case["type"] == "offtopic":
                    out[key][1].append(float(row.max()))
                elif expected:
                    out[key][0].append(float(max(row[j] for j in expected)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", help="set names (default: every set in eval/sets)")
    ap.add_argument("--half", default="tune", choices=("tune", "heldout"))
    ap.add_argument("--model", type=Path, help="a model2vec folder (default: the bundled model)")
    ap.add_argument("--static", type=Path, help="one-tensor safetensors of token rows (with --tokenizer)")
    ap.add_argument("--tokenizer", type=Path, help="the tokenizer.json that goes with --static")
    ap.add_argument("--drop", type=int, default=0,
                    help="also take the record's first N principal directions out of the centred score")
    a = ap.parse_args()
    if a.static:
        if not a.tokenizer:
            sys.exit("--static needs --tokenizer")
        model = TokenMean(a.static, a.tokenizer)
    else:  # `embedding.model`'s own resolution: "bundled" or a model2vec folder
        from stele.index.encoder import BUNDLED, index_encoder, resolve

        model = index_encoder(resolve(str(a.model) if a.model else BUNDLED, ROOT))
    sets = a.sets or sorted(p.name for p in SETS.iterdir() if (p / f"{a.half}.yaml").is_file())
    for key, (on, off) in scores(model, a.half, sets, a.drop).items():
        on_a, off_a = np.array(on), np.array(off)
        auc = float((on_a[:, None] > off_a[None, :]).mean())
        kept = "  ".join(f"off {int(r * 100)}% silent: on {np.mean(on_a > np.quantile(off_a, r)):.0%}"
                         for r in REJECT)
        print(f"{key:8} on {len(on)} off {len(off)}  AUC {auc:.3f}  {kept}")


if __name__ == "__main__":
    main()
