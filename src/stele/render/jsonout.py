"""`--json` output: the one writer every command's JSON goes through (typer commands and the fast path).

Indented, UTF-8 kept as is, one trailing newline: stable enough to diff and to pipe into `jq`. Every
string is neutralized first (`stele.neutralize`): JSON escapes C0 controls but, with UTF-8 kept, not
C1 controls, bidi overrides or tag characters, and JSON is read on terminals and by agents too.
It lives in `render/` and imports nothing heavy, so the fast path (`cli/fast.py`) can use it.
"""
from __future__ import annotations

import json
import sys
from typing import Any

from ..neutralize import neutralize_data


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(neutralize_data(data), indent=2, ensure_ascii=False) + "\n")
