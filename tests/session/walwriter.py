"""A WAL writer process for the concurrency tests and `bench/wal_concurrency.py`.

    python tests/session/walwriter.py ROOT SESSION COUNT TEXT_BYTES

Waits for one line on stdin (so every writer starts together), then appends COUNT entries (COUNT 0:
until killed) and prints each id once `append` has returned: a printed id is an acknowledged line.
"""
import sys
from pathlib import Path

from stele.project import Project
from stele.session import wal


def main() -> None:
    root, session, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    project = Project(Path(root))
    writer = f"w{sys.argv[5] if len(sys.argv) > 5 else ''}"
    sys.stdin.readline()
    n = 0
    while count == 0 or n < count:
        text = f"{writer} line {n} " + "x" * (size if n else 0)  # a short first line: a quick first ack
        entry = wal.append(project, wal.new_entry(session, "note", text), extra_patterns=())
        sys.stdout.write(entry.id + "\n")
        sys.stdout.flush()
        n += 1


if __name__ == "__main__":
    main()
