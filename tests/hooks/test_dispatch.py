"""The hook dispatcher reads what harnesses pass by hand (no argparse on the hook path) and must read
it exactly as its argparse parser, which stays for everything else, would."""
import pytest

from stele.hooks.dispatch import _parser, _quick


@pytest.mark.parametrize("argv", [
    ["prompt"], ["prompt", "--harness", "claude"], ["pre-edit", "--harness=gemini"],
    ["pre-commit", "--strict"], ["session", "--strict", "--harness", "codex"],
])
def test_what_harnesses_pass_is_read_as_argparse_reads_it(argv):
    quick = _quick(argv)
    args, extra = _parser().parse_known_args(argv)
    assert quick is not None and vars(quick) == vars(args) and extra == []


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["prompt", "-h"], ["prompt", "--harness", "nope"], ["prompt", "--harness"],
    ["pre-commit", "a.py"], ["prompt", "--unknown"],
])
def test_anything_else_goes_to_argparse(argv):
    assert _quick(argv) is None
