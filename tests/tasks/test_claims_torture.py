"""The claim torture and concurrency suites, short runs (the long ones are `bench/claims_torture.py
--trials 200` and `bench/claims_cli.py --rounds 200`): real `stele` processes, killed with SIGKILL at
random points, or sixteen of them racing for one task."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
pytestmark = pytest.mark.slow


def _run(script: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, str(BENCH / script), *args, "--json"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_kill_9_during_claims_and_releases_leaves_nothing_torn_lost_or_stuck():
    result = _run("claims_torture.py", "--trials", "6", "--seed", "3")
    assert result["broken"] == [] and result["ok_trials"] == 6
    assert result["killed"] >= 1


def test_sixteen_claim_processes_one_winner_and_every_loser_told_who_and_since_when():
    result = _run("claims_cli.py", "--racers", "16", "--rounds", "2", "--solo", "1", "--facts", "0")
    assert (result["ok_rounds"], result["broken"]) == (2, [])
    assert result["solo"]["claim_ms_p50"] > 0 and result["snapshot_ms"]["p50"] > 0
