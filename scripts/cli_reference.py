"""Regenerate docs/cli.md from the commands themselves (`stele.cli.reference`).

    python scripts/cli_reference.py           # rewrite docs/cli.md
    python scripts/cli_reference.py --check   # exit 1 if it is stale (tests/test_docs.py does the same)

Run it after adding or changing a command, an option or a hook event, and commit the page with the code.
"""
from __future__ import annotations

import sys
from pathlib import Path

from stele import atomic
from stele.cli.reference import markdown

PAGE = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def main(argv: list[str]) -> int:
    text = markdown()
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run python scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    atomic.write(PAGE, text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
