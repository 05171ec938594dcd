"""The catalog lookups behind the session-start and edit hooks."""
import datetime as dt
import random

from stele.delivery import rule_order
from stele.hooks import lookup
from stele.kinds import KINDS, PRIORITIES
from stele.project import Project
from stele.tasks import claims
from tests.fakes import write_fact


def test_open_tasks_are_ranked_in_sqlite_as_the_rule_ranks_them(repo, fake_model, monkeypatch):
    rng = random.Random(19)
    statuses = ["open", "in-progress", "blocked", "done", "cancelled"]
    for n in range(80):
        write_fact(repo, f"TASK-{n:04d}", "task", f"Task number {n}", status=rng.choice(statuses),
                   priority=rng.choice(PRIORITIES))
    write_fact(repo, "TASK-0900", "task", "A task whose priority a hand edit mangled", status="open",
               priority="urgent")
    project = Project(repo)
    monkeypatch.setenv(claims.AGENT_ENV, "me")
    me = claims.Identity.current()
    other = claims.Identity("someone-else", None, "elsewhere")
    with lookup.open_index(project) as index:
        every = [n for n in index.catalog.committed_where("kind", "task") if n.status in lookup.OPEN_TASK_STATUSES]
    mine = {n.id for n in every[3:9:2]}
    for task in sorted(mine):
        claims.claim(project, task, me, dt.timedelta(hours=1))
    claims.claim(project, every[10].id, other, dt.timedelta(hours=1))
    expected = sorted(every, key=lambda n: (n.id not in mine, lookup.OPEN_TASK_STATUSES.index(n.status),
                                            rule_order(n)))
    with lookup.open_index(project) as index:
        for limit in (1, 10, len(every) + 5):
            shown, total = lookup.open_tasks(index, project, limit)
            assert [t.id for t in shown] == [n.id for n in expected[:limit]]
            assert total == len(every)
        shown, _ = lookup.open_tasks(index, project, len(every))
    by_id = {t.id: t for t in shown}
    assert all("claimed by you" in by_id[i].status for i in mine)
    assert "claimed by someone-else" in by_id[every[10].id].status


def test_standing_rules_come_in_the_order_and_with_the_filter_of_lifecycle(repo, fake_model):
    from stele.delivery import standing_rules, today

    rng = random.Random(9)
    kinds = ["instruction", "constraint", "decision", "architecture", "task", "document", "lesson"]
    for n in range(90):
        kind = rng.choice(kinds)
        write_fact(repo, f"{KINDS[kind].prefix}-{n:04d}", kind, f"Rule number {n}", f"body {n}", delivery="always",
                   priority=rng.choice([*PRIORITIES, "urgent"]),
                   status=rng.choice(["current", "current", KINDS[kind].statuses[0]]),
                   **({"expires": "2001-01-01"} if n % 17 == 0 else {}))
    project = Project(repo)
    with lookup.open_index(project) as index:
        expected = standing_rules(index.catalog.committed_where("delivery", "always"), today())
        got = list(lookup.always(index))
    assert len(expected) > 20 and len({n.priority for n in expected}) > 2 and len({n.kind for n in expected}) > 2
    assert [r.id for r in got] == [n.id for n in expected]
    assert got[0].text == f"body {int(got[0].id.split('-')[1])}"


def test_the_edit_hook_lists_anchored_facts_in_the_order_stele_anchored_does(repo, fake_model):
    """One rule (`delivery.anchored_order`): risks and constraints first, then priority and weight,
    whether the catalog answers (the pre-edit hook) or the parsed record does (`stele anchored`)."""
    from stele.retrieve import anchored

    rng = random.Random(4)
    kinds = ["risk", "constraint", "decision", "lesson", "instruction", "note"]
    for n in range(30):
        kind = rng.choice(kinds)
        write_fact(repo, f"{KINDS[kind].prefix}-{n:04d}", kind, f"Fact number {n}", anchors=["src/a.py"],
                   priority=rng.choice(PRIORITIES))
    project = Project(repo)
    with lookup.open_index(project) as index:
        hook = [line.id for line in lookup.anchored(index, ["src/a.py"])]
    cli = [a.fact.id for a in anchored.for_paths(project, ["src/a.py"])]
    assert hook == cli and len(hook) == 30
    firsts = [i for i in hook if i.startswith(("RISK", "CON"))]
    assert hook[:len(firsts)] == firsts and any(i.startswith("CON") for i in firsts)
