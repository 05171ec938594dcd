"""New record files and repositories: `stele init` (the folders and files a repository needs, written
once and never clobbered), `stele new KIND` (a fact from its kind's template) and the demo's example
repository (the bundled example's code and record, committed and initialised).

The memory folder's README is a static explainer, not a generated index: an index file would conflict
in every pull request that adds a fact.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import atomic
from ..config import TEMPLATE
from ..project import Project

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "harbor"  # the demo's bundled project

MEMORY_README = """\
# Project memory

This folder is the project's committed memory, kept with Stele, the `stele` command.
Each Markdown file is one fact: a decision, risk, lesson, instruction, constraint, task or longer
knowledge document that agents (and people) should know before changing the code.

## Reading it

- `stele list` shows every fact; `stele show ID` shows one with its links both ways.
- `stele recall "your question"` shows what an agent would be told before answering.
- Folders are by kind (`decisions/`, `risks/`, ...) but only the frontmatter matters.

## Editing it

- Add facts with `stele remember "text" --kind decision --anchor src/file.py` (or `stele new KIND`),
  or write a file by hand: frontmatter (`id`, `kind`, `title`, ...) then the body.
- Change facts with `stele edit`, `stele link`, `stele supersede`, `stele retire`, `stele verify`,
  or edit the file directly; `stele doctor` checks the whole folder (run it in CI).
- Ids are random (`DEC-4F7K`) so parallel branches never collide. Link facts with typed edges
  (`caused-by`, `blocks`, `supersedes`, `relates-to`, ...); mention ids in text to link them loosely.
- Facts are reviewed in pull requests like code. Never store credentials here.

This file explains the folder; it is not a fact and Stele never rewrites it.
"""

STELE_GITIGNORE = """\
# Everything under .stele/ is per-machine or derived (index, session log, snapshots, claims),
# except the committed settings.
*
!.gitignore
!config.yaml
"""


def init(project: Project) -> list[Path]:
    """Create what is missing; returns the paths written (empty when everything was there)."""
    written = []
    for path, text in _missing(project):
        atomic.write(path, text)
        written.append(path)
    return written


def missing(project: Project) -> list[Path]:
    """What `init` would write here (a dry run's answer)."""
    return [path for path, _ in _missing(project)]


def set_up(project: Project) -> bool:
    """Whether Stele is set up here: the settings file is what `init` writes first and a user commits."""
    return project.config_path.exists()


def _missing(project: Project) -> list[tuple[Path, str]]:
    wanted = (
        (project.config_path, TEMPLATE),
        (project.stele_dir / ".gitignore", STELE_GITIGNORE),
        (project.memory_dir / "README.md", MEMORY_README),
    )
    return [(path, text) for path, text in wanted if not path.exists()]


def templates_dir() -> Path:
    """`templates/` ships inside the wheel as `stele/templates`; in a source checkout it is at the root."""
    package = Path(__file__).resolve().parents[1]  # src/stele
    packaged = package / "templates"
    return packaged if packaged.is_dir() else package.parents[1] / "templates"


def template_text(project: Project, kind: str, title: str | None) -> tuple[str, str]:
    """A new fact of `kind` from its template, not yet written: (repo-relative path, text)."""
    from ..delivery import today
    from ..errors import UsageError
    from ..ids import new_id
    from ..kinds import KINDS
    from .frontmatter import dump_key
    from .load import load
    from .model import Fact, check_flag
    from .write import new_fact_path

    check_flag("KIND", "kind", kind)
    title = (title or f"New {kind}: replace this title").strip()
    check_flag("--title", "title", title)
    template = (templates_dir() / f"{kind}.md").read_text(encoding="utf-8")
    fact_id = new_id(kind, load(project).facts)
    text = (template.replace("{{id}}", fact_id)
            .replace("title: {{title}}\n", dump_key("title", title))
            .replace("{{status}}", KINDS[kind].default_status)
            .replace("{{created}}", today().isoformat()))
    path = new_fact_path(project, Fact(id=fact_id, kind=kind, title=title))
    if path.exists():
        raise UsageError(f"{project.rel(path)} already exists")
    return project.rel(path), text


def example_repository(dest: Path, example: Path = EXAMPLE) -> Path:
    """A git repository at `dest` holding the example's code and record, committed and initialised."""
    import shutil

    from .. import gitrepo
    from ..errors import SteleError

    if not (example / "record").is_dir():
        raise SteleError(f"the bundled example is missing from {example}; reinstall Stele")
    if dest.exists() and any(dest.iterdir()):
        raise SteleError(f"{dest} is not empty: give --keep a new or empty folder")
    dest.mkdir(parents=True, exist_ok=True)
    if (example / "code").is_dir():
        shutil.copytree(example / "code", dest, dirs_exist_ok=True)
    shutil.copytree(example / "record", dest / "docs" / "memory", dirs_exist_ok=True)
    gitrepo.run(dest, "init", "-q")
    gitrepo.run(dest, "add", "-A")
    gitrepo.run(dest, "-c", "user.name=Stele demo", "-c", "user.email=demo@example.invalid",
                "commit", "-qm", "Harbor: code and record")
    init(Project(dest))
    return dest


@contextmanager
def example_checkout(keep: Path | None, example: Path = EXAMPLE) -> Iterator[Path]:
    """The example repository for the `with` block: at `keep`, which stays, else in a temporary folder
    removed afterwards (whatever happens in the block)."""
    import shutil
    import tempfile

    if keep is not None:
        yield example_repository(keep.resolve(), example)
        return
    tmp = Path(tempfile.mkdtemp(prefix="stele-demo-"))
    try:
        yield example_repository(tmp / "harbor", example)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
