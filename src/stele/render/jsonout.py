"""`--json` output: the one writer every command's JSON goes through (typer commands and the fast path).

Indented, UTF-8 kept as is, one trailing newline: stable enough to diff and to pipe into `jq`.
It lives in `render/` and imports nothing heavy, so the fast path (`cli/fast.py`) can use it.
"""
from __future__ import annotations

import json
import sys
from typing import Any


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
