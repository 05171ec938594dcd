"""Stele's public home is one setting: `Repository` in pyproject.toml's `[project.urls]`. Everything
else that names it is derived from it:

- the other `[project.urls]` (Homepage = Repository, Documentation = Repository/tree/main/docs,
  Issues = Repository/issues), written into the wheel's metadata;
- the SARIF rule help links and `informationUri` (`stele doctor --format sarif`), read from the
  installed package's metadata at run time (`render/sarif.py`);
- the `repo:` lines of `.pre-commit-hooks.yaml` and of the docs, and the GitHub Action's
  `uses: OWNER/NAME@v1` in docs/doctor.md.

    python scripts/repository_url.py https://github.com/acme/stele   # set it, rewrite the copies
    python scripts/repository_url.py --check                         # exit 1 when a copy differs

tests/test_packaging.py runs the check. Until the project has its public home the setting holds the
placeholder `https://github.com/OWNER/stele`, and every copy says the same.
"""
from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from stele import atomic

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
# `https://github.com/OWNER/NAME` and the Action's `uses: OWNER/NAME@`, in the files that quote them
URL = re.compile(r"https://github\.com/[\w.-]+/stele\b")
ACTION = re.compile(r"(uses: )[\w.-]+/stele(@)")


def setting() -> str:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["urls"]["Repository"].rstrip("/")


def derived_urls(repository: str) -> dict[str, str]:
    return {"Homepage": repository, "Documentation": f"{repository}/tree/main/docs",
            "Repository": repository, "Issues": f"{repository}/issues"}


def copies() -> list[Path]:
    return [ROOT / ".pre-commit-hooks.yaml", ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def rewritten(text: str, repository: str) -> str:
    slug = repository.removeprefix("https://github.com/")
    text = URL.sub(repository, text)
    return ACTION.sub(lambda m: f"{m.group(1)}{slug}{m.group(2)}", text) if slug != repository else text


def pyproject_text(text: str, repository: str) -> str:
    for key, value in derived_urls(repository).items():
        text = re.sub(rf'(?m)^{key} = "[^"]*"$', f'{key} = "{value}"', text)
    return text


def main(argv: list[str]) -> int:
    check = "--check" in argv
    given = [a for a in argv if not a.startswith("--")]
    repository = given[0].rstrip("/") if given else setting()
    stale = []
    for path in [PYPROJECT, *copies()]:
        text = path.read_text(encoding="utf-8")
        new = pyproject_text(text, repository) if path == PYPROJECT else rewritten(text, repository)
        if new != text:
            stale.append(path)
            if not check:
                atomic.write(path, new)
    if check and stale:
        print("not derived from [project.urls] Repository: " + ", ".join(str(p.relative_to(ROOT)) for p in stale)
              + "; run python scripts/repository_url.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
