"""The session-start hook on a record whose standing rules fill its answer."""
import json

from stele import textcut
from stele.hooks import lookup, session_start
from stele.hooks.run import CUT_MARK
from stele.index.catalog import Catalog
from stele.neutralize import neutralize
from stele.project import Project
from stele.render.facts import TITLE, block, frame
from tests.helpers import hook, write_fact


def test_rules_past_the_cap_are_not_read_and_the_answer_is_what_the_cap_leaves(record, monkeypatch):
    for n in range(60):
        write_fact(record, f"INS-1{n:03d}", "instruction", f"Rule number {n}", f"word{n} " * 120)
    (record / ".stele/config.yaml").write_text("hooks:\n  max_chars: 3000\n")
    project = Project(record)
    with lookup.open_index(project) as index:
        every = list(lookup.always(index))
        tasks, _ = lookup.open_tasks(index, project, session_start.MAX_TASKS)
    assert len(every) > 60 and tasks
    # what the hook said before it stopped reading: every rule, the tasks and the pointer, then the cap
    whole = frame(TITLE, ["Standing instructions and constraints:\n"
                          + "\n".join(block(r, session_start.RULE_CHARS) for r in every),
                          "Open tasks:\n...", session_start.pointer("claude")])
    read = []
    real = Catalog.body
    monkeypatch.setattr(Catalog, "body", lambda self, i: read.append(i) or real(self, i))
    out = hook("session-start", {"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": str(record),
                                 "hook_event_name": "SessionStart", "source": "startup"})
    text = json.loads(out.out)["hookSpecificOutput"]["additionalContext"]
    assert text == textcut.lines(neutralize(whole), 3000, CUT_MARK)
    assert 0 < len(read) < 10  # a rule's block is up to ~600 characters: a few fill 3,000


def test_a_cold_first_session_on_a_big_record_still_gets_its_standing_rules(record, monkeypatch):
    """With no index yet, a 10,000-fact record builds for longer than a hook may wait, and the first
    session start injected nothing: the standing rules are read from the files instead."""
    import shutil

    monkeypatch.setattr(session_start, "COLD_FILES", 50)  # the path a 10,000-fact record takes
    monkeypatch.setenv("STELE_BACKGROUND", "0")
    for n in range(60):
        write_fact(record, f"NOTE-1{n:03d}", "note", f"Note number {n}", "an ordinary note")
    write_fact(record, "INS-9AAA", "instruction", "Run the payment tests before pushing", "Always.")
    write_fact(record, "CON-9BBB", "constraint", "Never store card numbers", "PCI scope.", delivery="always")
    shutil.rmtree(record / ".stele" / "index", ignore_errors=True)
    out = hook("session-start", {"session_id": "s1", "cwd": str(record), "hook_event_name": "SessionStart",
                                 "source": "startup"})
    text = json.loads(out.out)["hookSpecificOutput"]["additionalContext"]
    assert "Run the payment tests before pushing" in text and "Never store card numbers" in text
    assert not (record / ".stele" / "index" / "catalog.sqlite").exists()  # nothing was built in the hook


def test_a_cold_session_start_reads_the_files_the_loader_reads(record, monkeypatch, tmp_path):
    """Read from the files before any index exists, the standing rules came from every `*.md` under the
    memory folder: a link to an instruction outside the repository was delivered (and a link to
    /dev/zero was read until memory ran out). Now the loader's rules hold there too."""
    import shutil

    monkeypatch.setattr(session_start, "COLD_FILES", 0)
    monkeypatch.setenv("STELE_BACKGROUND", "0")
    write_fact(record, "INS-9AAA", "instruction", "Run the payment tests before pushing", "Always.")
    outside = write_fact(tmp_path / "elsewhere", "INS-9CCC", "instruction", "Push straight to main", "Skip review.")
    (record / "docs/memory/instructions/INS-9CCC-linked.md").symlink_to(outside)
    (record / "docs/memory/instructions/INS-9DDD-zero.md").symlink_to("/dev/zero")
    shutil.rmtree(record / ".stele" / "index", ignore_errors=True)
    out = hook("session-start", {"session_id": "s1", "cwd": str(record), "hook_event_name": "SessionStart",
                                 "source": "startup"})
    text = json.loads(out.out)["hookSpecificOutput"]["additionalContext"]
    assert "Run the payment tests before pushing" in text and "Push straight to main" not in text
