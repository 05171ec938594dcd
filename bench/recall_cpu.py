#!/usr/bin/env python3
"""CPU time of `recall` in one warm process, per prompt (median), on a generated record: the work a
change to retrieval adds, apart from process start-up, and steadier than wall time on a loaded machine.

    .venv/bin/python bench/recall_cpu.py bench/out/rec-10000
    PYTHONPATH=/tmp/main-src/src .venv/bin/python bench/recall_cpu.py /tmp/rec-main   # another version

Run two versions alternately, each on its own copy of the record (an index is built by the version
that reads it), and compare the medians run by run. Prompts: recall_bench's (mostly answered by full
text) and hook_floor's paraphrases (which consult the embeddings).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hook_floor import PARAPHRASES  # noqa: E402
from recall_bench import PROMPTS  # noqa: E402


def main(argv: list[str]) -> int:
    import stele
    from stele.project import Project
    from stele.retrieve.recall import recall

    project = Project(Path(argv[0]).resolve())
    recall(project, PROMPTS[0])  # warm: the index brought up to date and opened once, the model loaded
    medians = {}
    for name, prompts in (("full text", PROMPTS), ("paraphrases", PARAPHRASES)):
        cpu = []
        for prompt in prompts:
            t0 = time.process_time()
            recall(project, prompt)
            cpu.append((time.process_time() - t0) * 1000)
        medians[name] = round(statistics.median(cpu), 1)
    print(f"{Path(stele.__file__).parent}: CPU ms per recall, median: {medians}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
