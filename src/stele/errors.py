"""One exception base for everything Stele raises on purpose, converted to an exit code in one place.

User errors exit 1, usage errors 2, bugs 3 (a traceback only with STELE_DEBUG=1), Ctrl-C 130.
Messages are one line that names the file or field and says what to do next, and every one is
printed through `say`, which redacts and neutralizes it: a message may quote what the user passed.
And bounds it (`message`, also the MCP server's and the web API's errors): an id given on the command
line can be 100 KB, or 50 MB through MCP; what is shown of it keeps both its ends.
"""
from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

EXIT_USER = 1
EXIT_USAGE = 2
EXIT_BUG = 3
EXIT_INTERRUPT = 130
DEBUG_ENV = "STELE_DEBUG"
# What a message quotes of one word and of one line: no id, option or path of a real project is near
# the first, nor the longest message of Stele's own (up to 64 records named, ~4,000) the second.
MESSAGE_WORD_CHARS = 300
MESSAGE_LINE_CHARS = 16_000
# A message up to this long is redacted whole, then cut; a longer one (a 50 MB id through MCP took ~40 s
# to redact whole) is cut first, each kept end redacted with its context (`neutralize.shown_part`).
MESSAGE_WHOLE_CHARS = 4 * MESSAGE_LINE_CHARS


class SteleError(Exception):
    """A problem the user can fix; `str()` is the whole message."""

    exit_code = EXIT_USER


class UsageError(SteleError):
    """A bad flag or argument combination."""

    exit_code = EXIT_USAGE


class ConfigError(SteleError):
    """`.stele/config.yaml` is invalid: the message names the file, the key path and what to do. No
    rebuild can fix it, so no caller wraps it into advice about the index."""


class RecordError(SteleError):
    """The record on disk has problems; each is one `path:line: message` line."""

    def __init__(self, problems: list) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class OutOfTime(BaseException):
    """A time budget ran out (a hook's alarm). A BaseException, like KeyboardInterrupt, so that no
    `except Exception` on the way up (a refresh falling back to a rebuild, recall degrading to session
    context) can catch it and carry on outside the budget: only the code that set the budget stops it."""


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def message(text: str) -> str:
    """What a message may show of `text`: redacted (it can quote a pasted credential), neutralized (no
    escape or hidden character reaches a terminal or an agent), then bounded: a word (a run without
    whitespace: an id, a path, an option) over `MESSAGE_WORD_CHARS` and a line over
    `MESSAGE_LINE_CHARS` keep their two ends and say how long they were, so the start of what was
    quoted and the advice after it stay. Cut after redacting, so no secret is cut in two before the
    redactor sees it. Lists of Stele's own (every record that does not fit a snapshot) stay whole.
    A text over `MESSAGE_WHOLE_CHARS` is cut first, to the ends a line keeps, each redacted with the
    context around it (`shown_part`); a word cut in two there keeps the end a long word keeps."""
    import re

    from .neutralize import shown, shown_part

    if len(text) <= MESSAGE_WHOLE_CHARS:
        return _bounded(shown(text))
    half, word = MESSAGE_LINE_CHARS // 2, MESSAGE_WORD_CHARS // 2
    head, tail = shown_part(text, 0, half), shown_part(text, len(text) - half, len(text))
    if not text[half - 1].isspace() and not text[half].isspace():  # the cut falls inside a word
        run = len(re.split(r"\s", head)[-1])  # the word the cut ends in
        head = head[:len(head) - run + word] if run > word else head
    if not text[-half - 1].isspace() and not text[-half].isspace():
        run = len(re.split(r"\s", tail, maxsplit=1)[0])
        tail = tail[run - word:] if run > word else tail
    return f"{_bounded(head)} [... {len(text):,} characters in all ...] {_bounded(tail)}"


def _bounded(text: str) -> str:
    """Shown text with its long words and lines cut to their two ends, each saying its length."""
    import re

    def cut(run: str, limit: int) -> str:
        from .textcut import ends

        return ends(run, limit, f" [... {len(run):,} characters in all ...] ")

    long_word = re.compile(rf"\S{{{MESSAGE_WORD_CHARS + 1},}}")
    lines = (long_word.sub(lambda m: cut(m[0], MESSAGE_WORD_CHARS), line) for line in text.split("\n"))
    return "\n".join(line if len(line) <= MESSAGE_LINE_CHARS else cut(line, MESSAGE_LINE_CHARS) for line in lines)


def say(text: str) -> None:
    """One message on stderr, redacted, neutralized and bounded (every error path prints through here)."""
    print(message(text), file=sys.stderr)


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
    except OSError as e:
        if e.errno not in ENVIRONMENT_ERRNOS:
            _bug(e)
        say(f"stele: {describe_os_error(e)}")
        raise SystemExit(EXIT_USER) from None
    except Exception as e:  # a bug: say so, point at the way to see it
        _bug(e)


def _bug(e: BaseException) -> None:
    if debug_enabled():
        import traceback

        traceback.print_exc()
    else:
        say(f"stele: internal error: {type(e).__name__}: {e} (rerun with {DEBUG_ENV}=1 for a traceback)")
    raise SystemExit(EXIT_BUG) from None


# The machine's state, not a bug: a full disk, a read-only folder, something of the wrong type in the way.
_HINTS = {
    errno.ENOSPC: "free some space and run it again",
    errno.EDQUOT: "free some space and run it again",
    errno.EFBIG: "the file is over the size limit of this system or shell (ulimit -f)",
    errno.EROFS: "the file system is read-only: run it where Stele can write",
    errno.EACCES: "fix the permissions (or run it as the owner)",
    errno.EPERM: "fix the permissions (or run it as the owner)",
    errno.ENOTDIR: "a file is where a folder should be: move it aside",
    errno.EISDIR: "a folder is where a file should be: move it aside",
    errno.EEXIST: "something is in the way: move it aside",
    errno.ENAMETOOLONG: "use a shorter path",
    errno.ELOOP: "a symbolic link loops: fix it",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n)",
}
ENVIRONMENT_ERRNOS = frozenset(_HINTS)


def describe_os_error(e: OSError) -> str:
    """One line for an OSError the user can fix: the path, what the system said, what to do. Writes
    are whole (temp file and rename) and a WAL line is rolled back, so nothing is half-written."""
    where = f"{e.filename}: " if e.filename else ""
    what = e.strerror or str(e)
    return f"{where}{what}; {_HINTS.get(e.errno or 0, 'fix it and run it again')} (nothing was half-written)"
