"""`stele doctor --check-code` (doctor/checkcode.py) over a whole tree with patterns from a pull request:
what a slow pattern costs is paid once, not once per file."""
from __future__ import annotations

import time

from tests.factfiles import commit, write, write_fact
from tests.helpers import invoke

LINE = "x = 'an ordinary line of code with some words in it, long enough to backtrack'\n"


def test_a_slow_pattern_is_tried_once_for_the_whole_tree_and_the_fact_s_other_check_still_counts(repo):
    for n in range(20):
        write(repo, f"src/m{n}.py", LINE)
    write_fact(repo, "CON-AAAA", "constraint", title="No words", anchors=["src/**"],
               check={"forbid": ["(.*)*X", "words"]})
    commit(repo, "init")
    start = time.monotonic()
    r = invoke("doctor", "--check-code")
    assert time.monotonic() - start < 3  # was 0.25 s for every file
    slow = [line for line in r.out.splitlines() if "[bad-check]" in line]
    assert len(slow) == 1 and "`check` forbid /(.*)*X/ took longer than 0.25 s" in slow[0]
    assert sum("[code-check]" in line for line in r.out.splitlines()) == 20
