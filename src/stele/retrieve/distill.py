"""What a prompt is about: a pasted log or stack trace reduced to the lines and words that carry it.

A developer pastes thirty lines of log with a question, and most of it is bookkeeping: timestamps,
request ids, counters, durations, log levels, repeated lines. Searched as it is, those words dilute
what the prompt is about (the coverage of the one lesson that holds the error falls under the floor)
and the routine lines' words find routine facts. So a prompt that looks like a log keeps:

- its prose (lines that are not log lines: the question before or after the paste);
- the lines that report a problem (a level of WARN or worse, or words such as error, exception,
  failed, panic, timeout, refused, denied), and the exception line of a traceback; its frame lines
  (where the error surfaced) are kept apart (`split`): searched only when nothing else is left;
- each of those once, with the noise tokens taken out (timestamps, dates, times, UUIDs, hex ids,
  numbers with or without units, IP addresses, `key=value` counters).

A line looks like log output when it starts with a timestamp, a date or a log level, in the formats
of the common stacks: ISO and syslog times, glog/klog (`E1202 09:41:17.553120 48211 file.go:329]`,
every Kubernetes component), logfmt (`time=... level=error`), Go's `panic:` and test lines, Rust's
`thread '...' panicked at`, Java's `Exception in thread` and `Caused by:`, npm's `npm ERR!`; or when it
is a stack frame (Python, Java, Node's `at fn (file:line:col)`, Go's `goroutine N`, `file.ext:line`).
A prompt that does not look like a log (fewer than `MIN_LOG_LINES` such lines) is returned as it is:
prose is never rewritten. Standard library only: the hook path uses it.
"""
from __future__ import annotations

import re

MIN_LOG_LINES = 2  # lines that look like log output before a prompt is treated as a paste

_GLOG = r"[IWEF]\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\]"  # glog / klog's header: E1202 09:41:17.553120 48211 file.go:329]
_STAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"  # ISO dates/times
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"                                                 # 10:22:01.123
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{1,2}\b"                   # syslog dates
    rf"|^\s*{_GLOG}")                                                                     # glog's header
_NOISE = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"  # UUIDs
    r"|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"                                           # IPv4[:port]
    r"|\b0x[0-9a-fA-F]+\b"                                                              # addresses
    r"|\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"                   # hex ids, hashes
    r"|\b\w+=(?:[\d.:/-]+\w{0,3}|[0-9a-fA-F]{6,})(?=\s|$|[,;)\]])"                      # key=123, id=ab12cd
    r"|\b\d+(?:\.\d+)?(?:ms|s|us|µs|ns|m|h|kb|mb|gb|b|%)?\b")                          # counters, durations
_LEVEL = re.compile(r"\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|PANIC)\b")
_BAD_LEVEL = re.compile(r"\b(?:WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|PANIC)\b")
_PROBLEM = re.compile(r"error|exception|fail|panic|fatal|timeout|timed out|refused|denied|cannot|can't|"
                      r"unable|invalid|not found|traceback|violat|abort|crash|killed|oom|unauthori[sz]ed|"
                      r"forbidden|overflow|deadlock|segfault|sigsegv|undefined|unexpected|missing", re.I)
_FRAME = re.compile(r'^\s*(?:File "[^"]+", line \d+|at [\w$.<>]+\(|at (?:async )?(?:\S+ \(|[\w/.-]+:\d+)'
                    r'|[\w/.-]+\.\w+:\d+|goroutine \d+|#\d+ )')
_LOGLIKE = re.compile(r"^\s*(?:\[?\d{4}-\d{2}-\d{2}|\[?\d{1,2}:\d{2}:\d{2}|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|"
                      r"ERROR|FATAL|CRITICAL)\b|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d"
                      rf"|{_GLOG}"                                          # glog / klog
                      r"|(?:time|ts|level)=\S"                              # logfmt
                      r"|(?:panic|fatal error): |=== RUN|--- (?:FAIL|PASS|SKIP)\b"  # Go
                      r"|thread '[^']*' panicked at"                          # Rust
                      r"|Exception in thread |Caused by: |\.\.\. \d+ more\b"  # Java
                      r"|npm (?:ERR!|error|warn) )")                          # npm


def is_log_line(line: str) -> bool:
    return bool(_LOGLIKE.match(line) or _FRAME.match(line) or line.lstrip().startswith("Traceback"))


def denoise(line: str) -> str:
    """`line` without timestamps, ids, numbers and log levels, its whitespace runs made single."""
    line = _STAMP.sub(" ", line)
    line = _NOISE.sub(" ", line)
    line = _LEVEL.sub(" ", line)
    return " ".join(line.split())


def distill(prompt: str) -> str:
    """The part of `prompt` worth searching for (see the module's docstring)."""
    return split(prompt)[0]


def split(prompt: str) -> tuple[str, str]:
    """(what to search for, the frame lines of a traceback). The frames say where the problem surfaced
    (files, functions, line numbers), not what it is: searched, a dozen frames' names, which no fact
    holds, outweigh the error line and the question, and the fact that explains the error falls under
    the floors. They are searched only when nothing else is left; the caller still takes the names
    they hold (identifiers, paths) from them."""
    lines = prompt.splitlines()
    if sum(is_log_line(x) for x in lines) < MIN_LOG_LINES:
        return prompt, ""
    kept: dict[str, None] = {}
    frames: dict[str, None] = {}
    for line in lines:
        if not line.strip():
            continue
        if is_log_line(line):
            if not (_BAD_LEVEL.search(line) or _PROBLEM.search(line) or _FRAME.match(line)):
                continue  # routine output: what the program was doing, not what went wrong
        elif not (_PROBLEM.search(line) or len(line.split()) >= 3):
            continue  # a short fragment of output that is neither prose nor a problem
        clean = denoise(line)
        if clean:
            frame = _FRAME.match(line) and not (_BAD_LEVEL.search(line) or _PROBLEM.search(line))
            (frames if frame else kept).setdefault(clean, None)
    if not kept:
        return "\n".join(frames) or prompt, ""
    return "\n".join(kept), "\n".join(frames)
