"""Where things are: the repository root, the record folder, `.stele/` and its parts.

Finding the root walks up to the nearest repository itself (`gitroot`: a `.git` holding `HEAD`, or a
`.git` file) instead of asking git: this runs on every hook.
"""
from __future__ import annotations

from functools import cached_property
from pathlib import Path

from . import config as config_mod
from . import treefile
from .errors import SteleError
from .gitroot import marks_repository
from .plain import dataclass


@dataclass(frozen=True)
class Project:
    root: Path

    def __post_init__(self) -> None:
        # Every path below is joined to the root and compared with paths the index stored; a relative
        # root would find them under another name (the vector store went unseen).
        if not self.root.is_absolute():
            object.__setattr__(self, "root", self.root.absolute())

    @property
    def stele_dir(self) -> Path:
        return self.root / ".stele"

    @property
    def config_path(self) -> Path:
        return self.stele_dir / "config.yaml"

    @cached_property
    def config(self) -> config_mod.Config:
        return config_mod.load(self.config_path)

    @cached_property
    def memory_dir(self) -> Path:
        """The record folder. It must be inside the repository: the committed config is shared, so a
        `memory_dir: /etc/notes` or `../x` from a pull request would send every write elsewhere."""
        value = str(self.config["memory_dir"])
        rel = Path(value)
        if rel.is_absolute() or ".." in rel.parts or not self.contains(self.root / rel):
            raise SteleError(f".stele/config.yaml: memory_dir {value!r} is outside the repository; a record "
                             "is a folder inside it (e.g. docs/memory)")
        return self.root / rel

    def contains(self, path: Path) -> bool:
        """Does `path`, with every symbolic link followed, stay inside the repository?"""
        return treefile.inside(path, self.root)

    def local(self, name: str) -> Path:
        """A folder of `.stele/` that Stele writes on this machine (index, wal, state, snapshots, ...).
        Neither it nor `.stele` may be a symbolic link out of the repository: a pull request can commit
        `.stele/wal -> /tmp/x`, and every hook would then write the session log (the user's prompts)
        there. Refused with one line (hooks fail open); a link that stays inside is followed."""
        path = self.stele_dir / name
        for part in (self.stele_dir, path):
            if part.is_symlink() and not self.contains(part):
                raise SteleError(f"{self.rel(part)} is a symbolic link out of the repository; Stele keeps "
                                 f"its files inside it: remove the link (`rm {self.rel(part)}`)")
        return path

    @cached_property
    def index_dir(self) -> Path:
        return self.local("index")

    @cached_property
    def wal_dir(self) -> Path:
        return self.local("wal")

    @cached_property
    def state_dir(self) -> Path:
        """Per-machine state that is neither record nor index (hook dedupe, pauses)."""
        return self.local("state")

    def rel(self, path: Path | str) -> str:
        """`path` relative to the root, posix style (how anchors and problems name files)."""
        p = Path(path)
        if p.is_absolute():
            try:
                return p.relative_to(self.root).as_posix()  # the common case, without a syscall
            except ValueError:
                pass
            try:
                p = p.resolve().relative_to(self.root.resolve())
            except ValueError:
                return p.as_posix()
        return p.as_posix()

    @property
    def git_dir(self) -> Path:
        """This worktree's git dir (`.git`, or where a worktree's `.git` file points)."""
        dot = self.root / ".git"
        if dot.is_file():
            text = dot.read_text(encoding="utf-8").strip()
            if text.startswith("gitdir:"):
                target = Path(text.split(":", 1)[1].strip())
                return target if target.is_absolute() else (self.root / target).resolve()
        return dot

    @property
    def git_common_dir(self) -> Path:
        """Shared by every worktree of one clone (claims live here)."""
        gd = self.git_dir
        common = gd / "commondir"
        if common.is_file():
            target = Path(common.read_text(encoding="utf-8").strip())
            return target if target.is_absolute() else (gd / target).resolve()
        return gd


def find_root(start: Path | None = None) -> Path | None:
    """The nearest directory at or above `start` that is a git repository's root (`gitroot`)."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if marks_repository(str(d)):
            return d
    return None


def find(start: Path | None = None) -> Project:
    """The project containing `start` (default: the working directory), or a clear error."""
    root = find_root(start)
    if root is None:
        raise SteleError(f"{start or Path.cwd()} is not inside a git repository: run `git init` first, "
                         "or cd into your project")
    return Project(root)


def check_inside(project: Project, path: Path) -> None:
    """Refuse a write that would leave the repository or replace a symbolic link with a file."""
    if path.is_symlink():
        raise SteleError(f"{project.rel(path)} is a symbolic link; Stele does not write through or replace "
                         "links in the record (replace it with the file itself); nothing was written")
    if not project.contains(path):
        raise SteleError(f"{project.rel(path)} is outside the repository; nothing was written")
