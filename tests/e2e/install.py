"""The real harness binaries, from npm, in a cache outside the repository, keyed by version.

`python -m tests.e2e.install` installs all five (CI runs it before the suite: CI reaches npm); the
suite calls `binary()` and installs what is missing the same way. Each harness gets its own prefix,
`<cache>/<package>@<version>/`, so versions never mix and a bumped version is a fresh install beside
the old one. The cache is `$STELE_E2E_CACHE`, else `~/.cache/stele-e2e`, read once at import: the
test fixtures point HOME at a temporary folder, and the binaries must not follow it.

Nothing here is committed or vendored: npm fetches the published packages (Claude Code, Codex,
Copilot CLI and Cline ship their native binary as a per-platform optional dependency, which npm picks).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Harness:
    name: str
    package: str
    version: str
    bin: str  # the executable npm links under node_modules/.bin


HARNESSES: dict[str, Harness] = {h.name: h for h in (
    Harness("claude", "@anthropic-ai/claude-code", "2.1.328", "claude"),
    Harness("codex", "@openai/codex", "0.171.0", "codex"),
    Harness("gemini", "@google/gemini-cli", "0.61.0", "gemini"),
    Harness("copilot", "@github/copilot", "1.0.102", "copilot"),
    Harness("cline", "cline", "3.0.65", "cline"),
)}

CACHE = Path(os.environ.get("STELE_E2E_CACHE") or Path.home() / ".cache" / "stele-e2e")
NPM_CACHE = Path(os.environ.get("npm_config_cache") or Path.home() / ".npm")  # noqa: SIM112 (npm's own name)
INSTALL_TIMEOUT = 600


class Unavailable(Exception):
    """The harness cannot be had here (no node or npm, or npm failed): the suite skips with this."""


def prefix(h: Harness) -> Path:
    return CACHE / f"{h.package.replace('/', '+')}@{h.version}"


def installed(h: Harness) -> Path | None:
    path = prefix(h) / "node_modules" / ".bin" / h.bin
    return path if path.exists() and (prefix(h) / ".complete").exists() else None


def tools_missing() -> str | None:
    """Why no harness can run here, or None (node runs four of them and npm installs all five)."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not on PATH" if missing else None


def install(h: Harness) -> Path:
    """Install `h` into its prefix (a no-op when it is there) and return its executable. Test workers
    run in parallel: the first to get the prefix's lock installs, the others wait and find it done."""
    found = installed(h)
    if found is not None:
        return found
    why = tools_missing()
    if why:
        raise Unavailable(f"{h.package}@{h.version}: {why}")
    import fcntl

    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{h.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return installed(h) or _npm_install(h)


def _npm_install(h: Harness) -> Path:
    where = prefix(h)
    where.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "npm_config_cache": str(NPM_CACHE), "npm_config_update_notifier": "false"}
    cmd = ["npm", "install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(where),
           f"{h.package}@{h.version}"]
    try:
        done = subprocess.run(cmd, check=False, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"npm install {h.package}@{h.version} took over {INSTALL_TIMEOUT} s") from None
    last = (done.stderr.strip().splitlines() or [""])[-1]
    if done.returncode != 0:
        raise Unavailable(f"npm install {h.package}@{h.version} failed (exit {done.returncode}): {last}")
    (where / ".complete").write_text(f"{h.package}@{h.version}\n")
    found = installed(h)
    if found is None:
        raise Unavailable(f"npm installed {h.package}@{h.version} but {h.bin} is not in {where}")
    return found


def binary(name: str) -> Path:
    return install(HARNESSES[name])


def main(argv: list[str]) -> int:
    names = argv or list(HARNESSES)
    status = 0
    for name in names:
        h = HARNESSES[name]
        try:
            print(f"{h.package}@{h.version}: {install(h)}")
        except Unavailable as e:
            print(f"stele e2e: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
