"""Session state and the pause switch: atomic, merged under a lock, robust to junk."""
import subprocess
import sys

from stele.hooks import state
from stele.project import Project

ADD_IDS = """
import sys
from pathlib import Path
from stele.hooks import state
from stele.project import Project
project, worker = Project(Path(sys.argv[1])), sys.argv[2]
for n in range(25):
    with state.update(project, "shared") as st:
        st.add_injected([f"DEC-{worker}{n:03d}"])
"""


def test_update_round_trips_and_no_session_remembers_nothing(repo):
    p = Project(repo)
    assert state.load(p, "s1") == state.SessionState()
    with state.update(p, "s1") as st:
        st.add_injected(["DEC-AAAA", "DEC-AAAA", "RISK-BBBB"])
        st.add_edited(["src/a.py"])
    loaded = state.load(p, "s1")
    assert loaded.injected == ["DEC-AAAA", "RISK-BBBB"] and loaded.edited == ["src/a.py"]
    assert loaded.started > 0
    with state.update(p, None) as st:
        st.add_injected(["DEC-CCCC"])
    assert state.load(p, None).injected == []


def test_unreadable_state_is_an_empty_state(repo):
    p = Project(repo)
    path = state.session_path(p, "s2")
    path.parent.mkdir(parents=True)
    path.write_text("{torn")
    assert state.load(p, "s2").injected == []
    path.write_text('{"injected": "not a list", "surprise": 1}')
    assert state.load(p, "s2").injected == []


def test_concurrent_writers_never_lose_each_others_ids(repo):
    procs = [subprocess.Popen([sys.executable, "-c", ADD_IDS, str(repo), str(w)]) for w in range(6)]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    injected = state.load(Project(repo), "shared").injected
    assert len(injected) == 6 * 25 and len(set(injected)) == 6 * 25


def test_pause_counts_prompts_down_and_resume_lifts_it(repo):
    p = Project(repo)
    assert not state.consume_paused_turn(p)
    state.pause(p, 2)
    assert state.paused(p)["turns"] == 2
    assert state.consume_paused_turn(p) and state.paused(p)["turns"] == 1
    assert state.consume_paused_turn(p) and state.paused(p) is None
    assert not state.consume_paused_turn(p)
    state.pause(p)
    for _ in range(3):
        assert state.consume_paused_turn(p)
    assert state.resume(p) and not state.resume(p)


def test_a_claim_tells_a_callout_from_an_entry_and_gives_back_only_what_it_added(repo):
    """A risk the session has as an entry may be claimed once as a callout; of two hooks that read the
    same state, one calls it out; a cut callout is given back without taking the entry with it."""
    from stele.retrieve.delivered import Delivered

    p = Project(repo)
    with state.update(p, "w") as st:
        st.add_injected(["RISK-AAAA"])
    known = state.load(p, "w").delivered()
    assert known == Delivered(frozenset({"RISK-AAAA"}), frozenset())
    mine, added = state.claim(p, "w", ["RISK-AAAA"], known, risks=frozenset({"RISK-AAAA"}))
    assert mine == ["RISK-AAAA"] and added == Delivered(frozenset(), frozenset({"RISK-AAAA"}))
    assert state.claim(p, "w", ["RISK-AAAA"], known, risks=frozenset({"RISK-AAAA"}))[0] == []  # the other hook
    state.settle(p, "w", Delivered(), added)
    after = state.load(p, "w")
    assert after.injected == ["RISK-AAAA"] and after.warned == []
