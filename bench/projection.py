#!/usr/bin/env python3
"""A linear map of the bundled model's token rows, learned on other projects' design documents to tell a
section from its same-domain neighbours (issue 26; docs/retrieval.md, "The embedding model: candidates
measured"). Measurement only: nothing here is used by Stele.

    python bench/projection.py --mirror /work/.mirror/kubernetes+enhancements/repo \\
        --mirror /work/.mirror/rust-lang+rfcs/repo --mirror /work/.mirror/python+peps/repo \\
        --mirror /work/.mirror/golang+proposal/repo --loss calibrated --lam 0.01 --out /tmp/proj
    python bench/separability.py --static /tmp/proj/model.safetensors \\
        --tokenizer src/stele/bundled_model/tokenizer.json

The static model's sentence vector is the mean of its tokens' rows, so a map W applied to it is the same
as W applied to every row: a learned map costs nothing at query time, and `separability.py` judges it
like any other static source. Training pairs come from the repositories' Markdown and reStructuredText
sections of 40 words or more (none of them a repository a realistic set was built on): a sentence of a
section against the rest of it, and a specific heading against its section; the other sections of the
same repository in a batch of 256 are the negatives (the same domain, as a record's other facts are).
Two losses: `infonce` (rank the section first among the batch) and `calibrated` (the pair above one
learned line, the hardest same-domain negatives below it: what a floor needs). W starts as the identity
and is held near it by `--lam`; the last repository given is held out and reported.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

import numpy as np

MODEL = Path(__file__).resolve().parent.parent / "src" / "stele" / "bundled_model"
HEADING = re.compile(r"^#{1,4}\s+(.*)$")
RST_RULE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
GENERIC = {"summary", "motivation", "goals", "non-goals", "alternatives", "design details", "proposal",
           "abstract", "rationale", "background", "drawbacks", "unresolved questions", "prior art",
           "test plan", "implementation", "specification", "references", "copyright", "risks and mitigations",
           "graduation criteria", "user stories", "guide-level explanation", "reference-level explanation",
           "future possibilities", "how to teach this", "security implications", "backwards compatibility"}
BATCH = 256


def sections(text: str, rst: bool) -> list[tuple[str, str]]:
    """(heading, body) of a document; code blocks, indented blocks and tables left out."""
    lines, out, head, buf, code = text.splitlines(), [], None, [], False
    for i, line in enumerate(lines):
        if line.strip().startswith("```"):
            code = not code
            continue
        if code or RST_RULE.match(line):
            continue
        m = HEADING.match(line) if not rst else None
        if rst and line.strip() and i + 1 < len(lines) and RST_RULE.match(lines[i + 1]):
            m = re.match(r"\s*(.*)", line)
        if m:
            if head is not None:
                out.append((head, " ".join(" ".join(buf).split())))
            head, buf = m.group(1).strip(), []
        elif not line.startswith(("    ", "\t", "|", ".. ")):
            buf.append(line)
    if head is not None:
        out.append((head, " ".join(" ".join(buf).split())))
    return out


def pairs(mirrors: list[Path]) -> tuple[list[str], list[str], list[int]]:
    rng = np.random.default_rng(0)
    queries, docs, group = [], [], []
    for g, mirror in enumerate(mirrors):
        names = subprocess.run(["git", f"--git-dir={mirror}", "ls-tree", "-r", "--name-only", "HEAD"],
                               capture_output=True, text=True, check=True).stdout.split("\n")
        for name in (n for n in names if n.endswith((".md", ".rst")) and "template" not in n.lower()):
            text = subprocess.run(["git", f"--git-dir={mirror}", "show", f"HEAD:{name}"],
                                  capture_output=True, text=True, errors="replace").stdout
            for head, body in sections(text, name.endswith(".rst")):
                body = body[:4000]
                usable = [s for s in SENTENCE.split(body) if 8 <= len(s.split()) <= 40]
                if len(body.split()) < 40 or not usable:
                    continue
                q = usable[rng.integers(len(usable))]
                queries.append(q), docs.append(head + "\n" + " ".join(body.replace(q, " ").split()[:120]))
                group.append(g)
                if len(head.split()) >= 3 and head.lower() not in GENERIC:
                    queries.append(head), docs.append(" ".join(body.split()[:120])), group.append(g)
    return queries, docs, group


def encode(rows: np.ndarray, texts: list[str]) -> np.ndarray:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(512)
    out = np.zeros((len(texts), rows.shape[1]))
    for k, e in enumerate(tok.encode_batch(texts)):
        if e.ids:
            out[k] = rows[np.clip(e.ids, 0, len(rows) - 1)].mean(0)
    return unit(out)


def unit(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n == 0, 1, n)


def gradient(W: np.ndarray, b: float, q: np.ndarray, d: np.ndarray, loss: str, tau: float
             ) -> tuple[float, np.ndarray, float]:
    """(loss, dL/dW without the penalty, dL/db) for one batch; row i of q belongs with row i of d."""
    pu, pv = q @ W.T, d @ W.T
    nu, nv = np.linalg.norm(pu, axis=1, keepdims=True), np.linalg.norm(pv, axis=1, keepdims=True)
    u, v = pu / nu, pv / nv
    S, n, eye = u @ v.T, len(q), np.eye(len(q), dtype=bool)
    if loss == "infonce":
        P1, P2 = softmax(S / tau), softmax(S.T / tau)
        value = -(np.log(P1[eye]).mean() + np.log(P2[eye]).mean()) / 2
        G, gb = ((P1 - eye) + (P2 - eye).T) / (2 * n * tau), 0.0
    else:  # calibrated: the pair above b, the hardest same-domain negatives (softmax-weighted) below it
        w = softmax(np.where(eye, -np.inf, S / 0.05))
        value = float(np.logaddexp(0, (b - S[eye]) / tau).mean() + (w * np.logaddexp(0, (S - b) / tau)).sum(1).mean())
        G = w * sigmoid((S - b) / tau) / (tau * n)
        G[eye] = -sigmoid((b - S[eye]) / tau) / (tau * n)
        gb = -float(G.sum())
    gu, gv = G @ v, G.T @ u
    gu = (gu - u * (u * gu).sum(1, keepdims=True)) / nu
    gv = (gv - v * (v * gv).sum(1, keepdims=True)) / nv
    return float(value), gu.T @ q + gv.T @ d, gb


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def held_out_mrr(W: np.ndarray, q: np.ndarray, d: np.ndarray) -> float:
    S = unit(q @ W.T) @ unit(d @ W.T).T
    return float((1 / ((S.diagonal()[:, None] < S).sum(1) + 1)).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, action="append", required=True, help="a git directory (repeat)")
    ap.add_argument("--loss", choices=("calibrated", "infonce"), default="calibrated")
    ap.add_argument("--lam", type=float, default=0.01, help="penalty on W's distance from the identity")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--out", type=Path, required=True, help="folder for model.safetensors (the mapped rows)")
    a = ap.parse_args()
    from safetensors.numpy import load_file, save_file

    rows = load_file(str(MODEL / "model.safetensors"))["embeddings"].astype(np.float64)
    texts_q, texts_d, group = pairs(a.mirror)
    Q, D, grp = encode(rows, texts_q), encode(rows, texts_d), np.array(group)
    train, held = np.where(grp < len(a.mirror) - 1)[0], np.where(grp == len(a.mirror) - 1)[0]
    print(f"{len(Q)} pairs, {len(held)} held out ({a.mirror[-1]})")
    W, b, rng = np.eye(rows.shape[1]), 0.55, np.random.default_rng(1)
    m, s, t = np.zeros_like(W), np.zeros_like(W), 0
    print(f"held-out MRR, identity: {held_out_mrr(W, Q[held], D[held]):.4f}")
    for epoch in range(a.epochs):
        batches = []
        for g in np.unique(grp[train]):
            ix = train[grp[train] == g]
            rng.shuffle(ix)
            batches += [ix[i:i + BATCH] for i in range(0, len(ix) - BATCH + 1, BATCH)]
        rng.shuffle(batches)
        total = 0.0
        for bt in batches:  # Adam
            value, gW, gb = gradient(W, b, Q[bt], D[bt], a.loss, a.tau)
            gW += 2 * a.lam * (W - np.eye(len(W)))
            total, t = total + value, t + 1
            m, s = 0.9 * m + 0.1 * gW, 0.999 * s + 0.001 * gW * gW
            W -= 2e-3 * (m / (1 - 0.9 ** t)) / (np.sqrt(s / (1 - 0.999 ** t)) + 1e-8)
            b -= 1e-3 * gb
        print(f"epoch {epoch}: loss {total / len(batches):.4f}, held-out MRR {held_out_mrr(W, Q[held], D[held]):.4f}")
    a.out.mkdir(parents=True, exist_ok=True)
    save_file({"embeddings": (rows @ W.T).astype(np.float32)}, str(a.out / "model.safetensors"))
    (a.out / "run.json").write_text(json.dumps({"loss": a.loss, "lam": a.lam, "epochs": a.epochs,
                                                "mirrors": [str(x) for x in a.mirror]}) + "\n")
    print(f"wrote {a.out / 'model.safetensors'}")


if __name__ == "__main__":
    main()
