"""The vocabulary of the record: kinds, statuses, relations and their default weights.

Everything here is data from DESIGN.md section 2, kept in one place so the parser, the ranker and the
docs agree. Weights are defaults; `.stele/config.yaml` may override them (see `config.py`).
"""
from __future__ import annotations

from .plain import dataclass

LIFECYCLE_STATUSES = ("current", "draft", "reviewed", "superseded", "retired")
TASK_STATUSES = ("open", "in-progress", "blocked", "done", "cancelled")
DELIVERIES = ("always", "ranked", "manual")
PRIORITIES = ("critical", "high", "normal", "low")  # the priority order, most urgent first
TITLE_MAX = 120  # characters; longer titles are cut (index, derived titles) or refused (a given title)


@dataclass(frozen=True)
class Kind:
    name: str
    prefix: str
    weight: float
    folder: str
    statuses: tuple[str, ...] = LIFECYCLE_STATUSES
    default_status: str = "current"

    @property
    def default_delivery(self) -> str:
        return "always" if self.name == "instruction" else "ranked"

    @property
    def is_container(self) -> bool:
        return self.name in CONTAINERS


CONTAINERS = frozenset({"epic", "objective", "milestone"})

_KINDS = (
    Kind("decision", "DEC", 3, "decisions"),
    Kind("architecture", "ARCH", 3, "architecture"),
    Kind("instruction", "INS", 3, "instructions"),
    Kind("constraint", "CON", 3, "constraints"),
    Kind("goal", "GOAL", 2, "goals"),
    Kind("risk", "RISK", 2, "risks"),
    Kind("lesson", "LSN", 2, "lessons"),
    Kind("priority", "PRI", 2, "priorities"),
    Kind("document", "DOC", 2, "knowledge", default_status="draft"),
    Kind("gap", "GAP", 1, "gaps"),
    Kind("fyi", "FYI", 1, "fyi"),
    Kind("opportunity", "OPP", 1, "opportunities"),
    Kind("note", "NOTE", 1, "notes"),
    Kind("task", "TASK", 1, "tasks", TASK_STATUSES, default_status="open"),
    Kind("diagram", "DIAG", 1, "diagrams"),
    Kind("component", "COMP", 0, "components"),
    Kind("epic", "EPIC", -3, "epics", LIFECYCLE_STATUSES + TASK_STATUSES),
    Kind("objective", "OBJ", -3, "objectives", LIFECYCLE_STATUSES + TASK_STATUSES),
    Kind("milestone", "MS", -3, "milestones", LIFECYCLE_STATUSES + TASK_STATUSES),
)

KINDS: dict[str, Kind] = {k.name: k for k in _KINDS}
BY_PREFIX: dict[str, Kind] = {k.prefix: k for k in _KINDS}

# relation -> default weight of following it during the walk
RELATIONS: dict[str, float] = {
    "fulfills": 3,
    "blocks": 3,
    "supersedes": 3,
    "caused-by": 2,
    "contradicts": 2,
    "relates-to": 1,
    "part-of": 1,
    "mentions": 1,
    "embeds": 1,
    "expires-on": 1,
}
# Only these lift a risk into the callout: a risk on the path, not merely in the neighbourhood.
CAUSAL = frozenset({"caused-by", "blocks", "contradicts", "supersedes"})
# `mentions` edges are derived from bodies; a file may not declare them.
DECLARABLE_RELATIONS = tuple(r for r in RELATIONS if r != "mentions")

# Statuses that end a fact's life: never auto-injected, still findable by explicit search.
# (A done task is history, not dead: it is still recalled, labeled with its status.)
ENDED_STATUSES = frozenset({"superseded", "retired"})
# ...and with finished work: what no longer blocks anything or needs watching in code.
CLOSED_STATUSES = ENDED_STATUSES | {"done", "cancelled"}
# What a change to anchored code can break: listed first wherever facts anchored to a file are shown
# (`delivery.anchored_order`), and what the pre-commit hook and the co-change gate hold a change for.
FIRST_KINDS = ("risk", "constraint")
# Work items: tasks and the containers they roll up into.
WORK_KINDS = ("task", *sorted(CONTAINERS))
# Never copied into a run as a context record unless named by id: work (task progress stays with the
# task) and knowledge (documents are pulled, not pushed: the briefing carries their titles).
NOT_CONTEXT_RECORDS = frozenset({*WORK_KINDS, "document"})


def priority_rank(priority: str | None) -> int:
    """The priority order as a sort key: 0 for critical .. 3 for low. A missing or unknown priority
    ranks as normal (a hand-edited file may hold anything; the parser reports it, sorting must not)."""
    return PRIORITIES.index(priority) if priority in PRIORITIES else PRIORITIES.index("normal")
