"""One fact in full (`stele show`, the MCP `show` tool), from a record built in memory."""
import datetime as dt
from pathlib import Path

from stele.project import Project
from stele.record.load import Record
from stele.record.model import Fact
from stele.render.facts import fact_lines

GOLDEN = """\
DECISION DEC-AAAA  Rate limiting runs before auth
status current · delivery ranked · priority high
file: docs/memory/decisions/DEC-AAAA.md
created: 2026-11-01
tags: auth, limits
anchor: src/auth.py::RateLimiter.check
-> caused-by RISK-BBBB: Floods reach bcrypt
-> relates-to TASK-GONE: (not in the record)
<- mentions LSN-CCCC: Order matters

Floods never reach bcrypt."""


def test_fact_lines_show_fields_links_both_ways_and_the_body():
    dec = Fact("DEC-AAAA", "decision", "Rate limiting runs before auth",
               body="\nFloods never reach bcrypt.\n", priority="high",
               anchors=["src/auth.py::RateLimiter.check"], tags=["auth", "limits"],
               links={"caused-by": ["RISK-BBBB"], "relates-to": ["TASK-GONE"]}, created=dt.date(2026, 11, 1),
               path="docs/memory/decisions/DEC-AAAA.md")
    facts = [dec, Fact("RISK-BBBB", "risk", "Floods reach bcrypt"),
             Fact("LSN-CCCC", "lesson", "Order matters", body="See DEC-AAAA.")]
    record = Record(Project(Path("/nonexistent")), {f.id: f for f in facts})
    assert "\n".join(fact_lines(record, dec)) == GOLDEN
