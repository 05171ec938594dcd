"""One exception base for everything Stele raises on purpose, converted to an exit code in one place.

User errors exit 1, usage errors 2, bugs 3 (a traceback only with STELE_DEBUG=1), Ctrl-C 130.
Messages are one line that names the file or field and says what to do next, and every one is
printed through `say`, which redacts and neutralizes it: a message may quote what the user passed.
"""
from __future__ import annotations

import os
import sys
import traceback
from contextlib import contextmanager
from typing import Iterator

EXIT_USER = 1
EXIT_USAGE = 2
EXIT_BUG = 3
EXIT_INTERRUPT = 130
DEBUG_ENV = "STELE_DEBUG"


class SteleError(Exception):
    """A problem the user can fix; `str()` is the whole message."""

    exit_code = EXIT_USER


class UsageError(SteleError):
    """A bad flag or argument combination."""

    exit_code = EXIT_USAGE


class RecordError(SteleError):
    """The record on disk has problems; each is one `path:line: message` line."""

    def __init__(self, problems: list) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def safe_message(text: str) -> str:
    """An error message as it may be shown: messages quote the argument or the file line that was
    wrong, and that can be a pasted credential or a terminal escape, so both are defused here."""
    from .neutralize import neutralize
    from .redact import redact

    return neutralize(redact(text).text)


def say(text: str) -> None:
    """One message on stderr, redacted and neutralized (every error path prints through here)."""
    print(safe_message(text), file=sys.stderr)


@contextmanager
def error_handler() -> Iterator[None]:
    """Convert any exception escaping a command into a message and an exit code."""
    try:
        yield
    except SteleError as e:
        say(f"stele: {e}" if not isinstance(e, RecordError) else str(e))
        raise SystemExit(e.exit_code) from None
    except KeyboardInterrupt:
        print("stele: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPT) from None
    except BrokenPipeError:
        # e.g. `stele list | head`: the reader left; not our failure.
        sys.stderr.close()
        raise SystemExit(0) from None
    except SystemExit:
        raise
    except Exception as e:  # a bug: say so, point at the way to see it
        if debug_enabled():
            traceback.print_exc()
        else:
            say(f"stele: internal error: {type(e).__name__}: {e} (rerun with {DEBUG_ENV}=1 for a traceback)")
        raise SystemExit(EXIT_BUG) from None
