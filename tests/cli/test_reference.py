"""The CLI's description of itself: one entry per command, from all three of its sources."""
from stele.cli.fast import recall_parser
from stele.cli.reference import commands, markdown
from stele.hooks.dispatch import EVENTS


def by_name():
    return {c.name: c for c in commands()}


def test_fast_commands_are_described_by_their_argparse_parsers_not_the_typer_stubs():
    recall = by_name()["stele recall"]
    parsed = {o for a in recall_parser()._actions for o in a.option_strings} - {"-h", "--help"}
    assert {n for p in recall.params for n in p.names if n.startswith("-")} == parsed
    assert recall.option("--file").multiple and recall.option("--max-chars").metavar == "MAX_CHARS"


def test_hook_lists_every_event_and_aliases_say_so():
    hook = by_name()["stele hook"]
    events = dict(hook.events)
    assert list(events) == list(EVENTS)
    assert events["session"] == "The same as `session-start`."
    assert all(events.values())


def test_options_show_choices_defaults_and_flags():
    doctor = by_name()["stele doctor"]
    fmt = doctor.option("--format")
    assert fmt.metavar == "auto|text|json|github|sarif" and fmt.default == "auto"
    assert doctor.option("--strict").metavar == "" and doctor.option("-y").names == ("--yes", "-y")
    claim = by_name()["stele task claim"]
    assert claim.usage == "stele task claim [OPTIONS] ID"


def test_groups_list_their_commands_and_each_command_has_a_section():
    names = by_name()
    assert "claim" in names["stele task"].subcommands
    page = markdown()
    assert all(f"\n## {name}\n" in page for name in names)
