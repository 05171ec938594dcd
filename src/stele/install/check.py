"""`stele install --check`: for each harness whose hooks are installed, would they run?

Trust is silent in every harness: Gemini CLI runs project hooks only in trusted folders, Codex
ignores `.codex/` in an untrusted project and runs new hooks only after `/hooks` review, Claude Code
holds project hooks back until the trust dialog is accepted, Copilot CLI loads a repository's hooks
only in a trusted folder. So this reads, without changing anything, what can be read: the hook file
parses, Stele's entries are there in their fail-open form, matchers are valid for that harness,
`stele` is on PATH, hooks are not switched off, and the trust state where the harness keeps it in a
file. What cannot be read (Codex's per-hook review) is said as a step to take, never guessed.
"""
from __future__ import annotations

import os
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .. import textform
from ..errors import SteleError
from ..project import Project
from .files import EditError, read_regular
from .jsonhooks import COMMAND_KEYS, foreign, is_ours
from .jsontext import load_object

OK, NOTE, WARN, ERROR = "ok", "note", "warning", "error"


@dataclass(frozen=True)
class Finding:
    harness: str
    level: str  # ok | note | warning | error
    message: str


def _load_json(path: Path, comments: bool = False) -> tuple[dict | None, str | None]:
    """The object a settings file holds, read as the installer reads it (`read_regular`, a BOM, CRLF,
    `load_object` in the harness's dialect: `comments` where it accepts them), or why not."""
    try:
        raw, _ = read_regular(path)
        return (None, None) if raw is None else (load_object(textform.decode(raw)[0], comments), None)
    except SteleError as e:
        return None, str(e)
    except EditError as e:
        return None, f"{path}: {e}: the harness ignores it, hooks included"
    except OSError as e:
        return None, f"{path} cannot be read ({e})"


def _handlers(hooks: dict):
    """(event, matcher, handler) for every handler, in the grouped and the flat shapes."""
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                continue
            inner = group.get("hooks")
            for h in inner if isinstance(inner, list) else [group]:
                if isinstance(h, dict):
                    yield event, group.get("matcher", h.get("matcher")), h


def _regex_ok(matcher) -> bool:
    if not isinstance(matcher, str) or not matcher:
        return True
    try:
        re.compile(matcher)
    except re.error:
        return False
    return True


def _hook_file(name: str, path: Path, out: list[Finding], comments: bool = False) -> dict | None:
    data, error = _load_json(path, comments)
    if error:
        out.append(Finding(name, ERROR, error))
        return None
    if data is None:
        return None
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        out.append(Finding(name, ERROR, f"{path}: `hooks` is not an object"))
        return None
    for event, _, h in _handlers(hooks):
        command = foreign(h)
        if command is not None:
            out.append(Finding(name, ERROR, f"{path}: {event}: a hook passes for Stele's but runs something else: "
                                            f"{command[:200]!r}; remove it, then `stele install {name}`"))
    ours = [(e, m, h) for e, m, h in _handlers(hooks) if is_ours(h) and foreign(h) is None]
    if not ours:
        return None
    bare = sorted({e for e, _, h in ours if not any("command -v stele" in str(h.get(k, "")) for k in COMMAND_KEYS)
                   and "guard-readonly" not in str(h)})
    if bare:
        out.append(Finding(name, WARN, f"{path}: {', '.join(bare)} run a bare `stele hook` that fails when stele "
                                       f"is not on PATH: run `stele install {name}` again"))
    bad = sorted({str(m) for _, m, _ in ours if not _regex_ok(m)})
    if bad:
        out.append(Finding(name, ERROR, f"{path}: matcher {', '.join(bad)} is not a valid regular expression"))
    if data.get("disableAllHooks") is True:
        out.append(Finding(name, ERROR, f"{path}: disableAllHooks is true: no hook runs"))
    out.append(Finding(name, OK, f"{path}: {len(ours)} Stele hooks ({', '.join(sorted({e for e, _, _ in ours}))})"))
    return data


def _claude(project: Project, out: list[Finding]) -> None:
    found = [d for d in (_hook_file("claude", project.root / ".claude" / "settings.json", out),
                         _hook_file("claude", Path.home() / ".claude" / "settings.json", out)) if d]
    if not found:
        return
    state, _ = _load_json(Path.home() / ".claude.json")
    entry = ((state or {}).get("projects") or {}).get(str(project.root)) or {}
    if entry.get("hasTrustDialogAccepted") is True:
        out.append(Finding("claude", OK, "the workspace trust dialog was accepted for this folder"))
    else:
        out.append(Finding("claude", NOTE, "interactive Claude Code holds project hooks back until you accept the "
                                           "workspace trust dialog (`claude -p` treats the folder as trusted)"))


def _table(data: dict, key: str) -> dict:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _codex(project: Project, out: list[Finding]) -> None:
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    path = project.root / ".codex" / "hooks.json"
    data = _hook_file("codex", path, out) or _hook_file("codex", home / "hooks.json", out)
    if data is None:
        return
    extra = sorted(set(data) - {"hooks", "description"})
    if extra:
        out.append(Finding("codex", ERROR, f"{path}: root keys {', '.join(extra)}: Codex rejects the whole file"))
    try:
        config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except FileNotFoundError:
        config = {}
    except (OSError, tomllib.TOMLDecodeError) as e:
        out.append(Finding("codex", ERROR, f"{home / 'config.toml'} does not parse ({e})"))
        config = {}
    features = _table(config, "features")
    if features.get("hooks") is False or features.get("codex_hooks") is False:
        out.append(Finding("codex", ERROR, f"{home / 'config.toml'}: [features] turns hooks off"))
    if path.exists():
        projects = _table(config, "projects")
        trusted = any(isinstance(v, dict) and v.get("trust_level") == "trusted" and
                      (project.root == Path(k) or Path(k) in project.root.parents) for k, v in projects.items())
        out.append(Finding("codex", OK, "the project is trusted in config.toml") if trusted else Finding(
            "codex", WARN, "Codex ignores .codex/hooks.json in an untrusted project, without a warning: trust the "
                           "project when Codex asks (or set trust_level = \"trusted\" for it in config.toml)"))
    out.append(Finding("codex", NOTE, "Codex runs new or changed hooks only after review: run /hooks in Codex and "
                                      "approve the stele entries (trust is not kept where Stele can read it)"))


def _gemini(project: Project, out: list[Finding]) -> None:
    from .gemini import HOOKS  # Gemini reads comments in its settings and trusted folders files

    found = []
    for path in (project.root / ".gemini" / "settings.json", Path.home() / ".gemini" / "settings.json"):
        data = _hook_file("gemini", path, out, HOOKS.comments)
        if data:
            found.append((path, data))
            for event, matcher, h in _handlers(data["hooks"]):
                if is_ours(h) and event == "SessionStart" and isinstance(matcher, str) and "|" in matcher:
                    out.append(Finding("gemini", ERROR, f"{path}: SessionStart matcher {matcher!r} never fires "
                                                        "(Gemini compares it as one exact string): reinstall"))
    if not found:
        return
    for path in (project.root / ".gemini" / "settings.json", Path.home() / ".gemini" / "settings.json"):
        data, _ = _load_json(path, HOOKS.comments)
        cfg = (data or {}).get("hooksConfig")
        if isinstance(cfg, dict) and cfg.get("enabled") is False:
            out.append(Finding("gemini", ERROR, f"{path}: hooksConfig.enabled is false: no hook runs"))
    if (project.root / ".gemini" / "settings.json").exists():
        trust_file = Path(os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or
                          Path.home() / ".gemini" / "trustedFolders.json")
        folders, _ = _load_json(trust_file, HOOKS.comments)
        trusted = any((v == "TRUST_FOLDER" and project.root == Path(k)) or
                      (v in ("TRUST_FOLDER", "TRUST_PARENT") and Path(k) in project.root.parents)
                      for k, v in (folders or {}).items())
        out.append(Finding("gemini", OK, f"the folder is trusted ({trust_file})") if trusted else Finding(
            "gemini", WARN, "Gemini CLI runs project hooks only in a trusted folder: trust it when Gemini asks "
                            f"(kept in {trust_file})"))


def _copilot(project: Project, out: list[Finding]) -> None:
    found = [d for d in (_hook_file("copilot", project.root / ".github" / "hooks" / "stele.json", out),
                         _hook_file("copilot", Path.home() / ".copilot" / "hooks" / "stele.json", out)) if d]
    if found:
        out.append(Finding("copilot", NOTE, "Copilot CLI loads a repository's hooks only in a folder you trust "
                                            "(it asks on first use; `copilot -p --trust-folder` for one run)"))


def _cursor(project: Project, out: list[Finding]) -> None:
    _hook_file("cursor", project.root / ".cursor" / "hooks.json", out)
    _hook_file("cursor", Path.home() / ".cursor" / "hooks.json", out)


def _cline(project: Project, out: list[Finding]) -> None:
    """Cline's hooks are files (install/cline.py): each of Stele's in place, in its fail-open form."""
    from .cline import EVENTS, script

    for base in (project.root / ".clinerules" / "hooks", Path.home() / ".cline" / "hooks"):
        texts = {}
        for name in EVENTS:
            try:
                texts[name] = (base / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
        for n, t in texts.items():
            if "stele hook " in t and t != script(EVENTS[n]):
                out.append(Finding("cline", ERROR, f"{base / n}: passes for Stele's hook but is not the script Stele "
                                                   "writes; read it, remove it, then `stele install cline`"))
        ours = [n for n, t in texts.items() if t == script(EVENTS[n])]
        if not ours:
            continue
        missing = [n for n in EVENTS if n not in ours]
        if missing:
            out.append(Finding("cline", WARN, f"{base}: Stele's {' and '.join(missing)} hook is missing: "
                                              "run `stele install cline` again"))
        else:
            out.append(Finding("cline", OK, f"{base}: Stele's PreToolUse and PostToolUse hooks are in place"))
        out.append(Finding("cline", NOTE, "the Cline CLI runs them as they are; the VS Code extension runs "
                                          "hooks only with Settings > Feature Settings > Enable Hooks on"))


def check(project: Project) -> list[Finding]:
    out: list[Finding] = []
    for part in (_claude, _codex, _gemini, _copilot, _cursor, _cline):
        part(project, out)
    if out:
        where = shutil.which("stele")
        out.insert(0, Finding("stele", OK, f"stele is on PATH ({where})") if where else Finding(
            "stele", WARN, "stele is not on PATH here: the hooks do nothing (they stay silent) until it is; "
                           "install it where the harness's shell finds it (pipx or uv tool)"))
        out.append(resident_finding(project))
    return out


# Where the resident server pays (docs/benchmarks.md, "The prompt hook against its floor"): the facts
# past which a prompt hook in its own process is slow enough that one process per repository is worth it.
RESIDENT_PAYS_FACTS = 20000


def resident_finding(project: Project) -> Finding:
    """Whether hooks run in their own process or through the resident server here, and whether turning
    it on would pay for this record's size (docs/hooks.md, "The resident process")."""
    from ..residency import forced, refusal

    facts = sum(p.name != "README.md" for p in project.memory_dir.rglob("*.md")) if project.memory_dir.is_dir() else 0
    try:
        configured = bool(project.config["hooks.resident"])
    except Exception:
        configured = False
    why_not = refusal(str(project.root), configured)
    cost = ("it costs one process and one inotify instance per repository (about 25 MiB of memory of "
            "its own) while hooks run, and exits 10 minutes after the last call")
    if why_not is None:
        how = "STELE_RESIDENT=1" if forced() and not configured else "hooks.resident: true"
        return Finding("resident", NOTE, f"hooks are answered by a resident server ({how}); {cost}")
    pays = (f"{facts} facts here: a hook in its own process stays well under its budget, turning the "
            "resident server on would not pay" if facts < RESIDENT_PAYS_FACTS else
            f"{facts} facts here: `hooks.resident: true` would cut the prompt hook from ~190 ms to ~35 ms "
            f"(50k facts, docs/benchmarks.md); {cost}")
    return Finding("resident", NOTE, f"hooks run in their own process ({why_not}); {pays}")
