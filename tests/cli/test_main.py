"""The one place the typer app runs: usage errors exit 2 with click's message, and any other typer error
still prints one line and exits with its own code (typer's base class has no `show`)."""
import typer

from stele.cli.main import _usage_error, run


def test_a_bad_option_is_a_usage_error(capsys):
    assert run(["list", "--no-such-option"]) == 2
    assert "No such option" in capsys.readouterr().err


def test_a_typer_error_without_click_s_show_still_says_what_went_wrong(capsys):
    assert _usage_error(typer.TyperException("the app is misconfigured")) == 1  # its own exit code
    assert capsys.readouterr().err == "stele: the app is misconfigured\n"
