"""`stele import`: ADRs, guidance files and harness memories as facts, on fixtures in real shapes
(tests/fixtures/import/README.md names the repositories they were taken from)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stele.project import find
from stele.record.imports import markdown as md
from stele.record.load import load
from tests.helpers import git, invoke

FIXTURES = Path(__file__).parent.parent / "fixtures" / "import"


def commit(repo, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def _checkout(repo: Path, name: str) -> None:
    shutil.copytree(FIXTURES / name, repo, dirs_exist_ok=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{name} fixture")


def _facts(repo: Path) -> dict:
    return load(find(repo)).facts


def _by_source(repo: Path, path: str):
    return next(f for f in _facts(repo).values() if any(s.startswith(path + "#") for s in f.source))


def _doctor_clean() -> None:
    r = invoke("doctor")
    assert r.code == 0 and "error" not in r.out + r.err and "warning" not in r.out + r.err, r.out + r.err


def test_nygard_adrs_become_decisions_with_provenance_amends_links_and_anchors(repo):
    _checkout(repo, "nygard")
    r = invoke("import", "adr", "--json")
    assert r.code == 0, r.err
    written = json.loads(r.out)["written"]
    assert len(written) == 3
    head = git(repo, "rev-parse", "HEAD").strip()
    scripts = _by_source(repo, "doc/adr/0009-help-scripts.md")
    comments = _by_source(repo, "doc/adr/0005-help-comments.md")
    assert scripts.title == "Help scripts" and scripts.kind == "decision" and scripts.status == "current"
    assert scripts.source[0].startswith("doc/adr/0009-help-scripts.md#L1-L21@")
    assert head.startswith(scripts.source[0].split("@")[1])
    assert scripts.links == {"relates-to": [comments.id]}  # "Amends"; "Amended by" is the other side
    assert comments.links == {}
    assert scripts.anchors == ["doc/adr/0009-help-scripts.md", "src/adr-help"]  # named and resolving
    assert scripts.body.startswith("Where necessary, help text can be generated")
    assert "dated 2018-06-26" in scripts.body
    _doctor_clean()


def test_a_second_import_writes_nothing(repo):
    _checkout(repo, "zooniverse")
    assert invoke("import", "adr", "docs/arch").code == 0
    commit(repo, "imported")
    again = invoke("import", "adr", "docs/arch")
    assert again.code == 0 and "nothing new: 4 already in the record" in again.out
    assert git(repo, "status", "--porcelain") == ""


def test_superseded_by_becomes_a_supersedes_link_and_partial_supersession_a_relation(repo):
    _checkout(repo, "zooniverse")
    assert invoke("import", "adr", "docs/arch").code == 0
    old, new = _by_source(repo, "docs/arch/adr-15.md"), _by_source(repo, "docs/arch/adr-22.md")
    routing, selection = _by_source(repo, "docs/arch/adr-18.md"), _by_source(repo, "docs/arch/adr-34.md")
    assert old.status == "superseded" and new.links.get("supersedes") == [old.id]
    assert selection.links == {"relates-to": [routing.id]} and routing.status == "current"
    assert old.title == "Drawing tools API"  # "ADR 15:" is the number, not the title
    _doctor_clean()


def test_madr_frontmatter_status_and_vale_comments(repo):
    _checkout(repo, "madr")
    r = invoke("import", "adr", "--json")  # docs/decisions is found without a PATH
    assert r.code == 0, r.err
    assert len(json.loads(r.out)["written"]) == 2  # the template is not an ADR
    accepted = _by_source(repo, "docs/decisions/0013-use-yaml-front-matter-for-meta-data.md")
    proposed = _by_source(repo, "docs/decisions/0014-allow-neutral-arguments.md")
    assert accepted.status == "current" and proposed.status == "draft"
    assert accepted.body.startswith('Chosen option: "Use YAML front matter"')
    assert "vale" not in accepted.body and "<!--" not in accepted.body and "optional element" not in accepted.body
    assert "Consequences:\n\n- Good, because tools" in accepted.body
    _doctor_clean()


def test_dry_run_writes_nothing(repo):
    _checkout(repo, "nygard")
    r = invoke("import", "adr", "--dry-run")
    assert r.code == 0 and "would write" in r.out and "nothing was written" in r.out
    assert _facts(repo) == {}


def test_agents_md_with_20_bullets_gives_at_most_20_facts_and_rules_files_take_their_globs(repo):
    _checkout(repo, "guidance")
    r = invoke("import", "agents-md", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert len(out["written"]) == 19  # 20 bullets, one of them twice; the `stele install` block is not read
    assert any("merged into" in s["why"] for s in out["skipped"])
    kinds = {f["title"]: f["kind"] for f in out["written"]}
    assert kinds["Do not create small helper methods that are referenced only once"] == "constraint"
    assert kinds["When using format! and you can inline variables into {}, always do that"] == "instruction"
    sandbox = next(f for f in _facts(repo).values() if "CODEX_SANDBOX_ENV_VAR" in f.title)
    assert "network" not in sandbox.title.lower() and "CODEX_SANDBOX_NETWORK_DISABLED=1" in sandbox.body
    assert sandbox.delivery == "ranked" and sandbox.source[0].startswith("AGENTS.md#L7-L9@")
    assert not any("Project memory" in f.title or "stele recall" in f.body for f in _facts(repo).values())
    assert invoke("import", "cursor-rules").code == 0
    rule = next(f for f in _facts(repo).values() if f.title.startswith("Prefer Stylize helpers"))
    assert rule.anchors == ["codex-rs/tui/**/*.rs", "codex-rs/tui/styles.md"]  # unquoted `globs:`
    assert invoke("import", "copilot-instructions").code == 0
    typed = next(f for f in _facts(repo).values() if f.title.startswith("Type every public function"))
    assert typed.anchors == ["**/*.py"]
    _doctor_clean()
    assert "nothing new" in invoke("import", "agents-md").out


def test_a_bullet_already_in_the_record_is_not_imported_again(repo):
    _checkout(repo, "guidance")
    assert invoke("remember", "Always use textwrap::wrap to wrap plain strings.", "--kind", "instruction").code == 0
    out = json.loads(invoke("import", "agents-md", "--json").out)
    assert any(s["why"].startswith("repeats INS-") for s in out["skipped"])
    assert len(out["written"]) == 18


def test_claude_auto_memory_becomes_drafts_and_personal_memories_stay_out(repo, monkeypatch, tmp_path):
    config = tmp_path / "claude"
    folder = config / "projects" / str(repo).replace("/", "-").replace(".", "-").replace("_", "-") / "memory"
    shutil.copytree(FIXTURES / "claude-memory", folder)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    r = invoke("import", "claude-memory", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    got = {f["title"]: (f["kind"], f["status"]) for f in out["written"]}
    assert got == {"Start Docker before running the integration tests": ("instruction", "draft"),
                   "Releases are cut from release branches, never from main": ("note", "draft")}
    assert any("about you, not the project" in n for n in out["notes"])
    assert out["written"][0]["source"][0].startswith(str(folder) + "/feedback_docker_tests.md#L6-L7")


def test_codex_memories_keep_only_sections_about_this_repository(repo, monkeypatch, tmp_path):
    home = tmp_path / "codex"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text(
        f"# {repo.name}\n\n- Run `make check` before pushing: CI runs the same target.\n\n"
        "# other-project\n\n- The staging database is reset every night.\n", encoding="utf-8")
    monkeypatch.setenv("CODEX_HOME", str(home))
    out = json.loads(invoke("import", "codex-memories", "--json").out)
    assert [f["title"] for f in out["written"]] == ["Run `make check` before pushing: CI runs the same target."]
    assert out["written"][0]["status"] == "draft"


def test_unknown_source_and_missing_folder_are_one_clear_line(repo):
    r = invoke("import", "wiki")
    assert r.code == 2 and "unknown source 'wiki'" in r.err
    r = invoke("import", "adr")
    assert r.code == 2 and "no ADR folder found" in r.err


@pytest.mark.parametrize("text,lines", [
    ("# T\n\n<!-- vale off -->\n<!--\nprompt\n-->\nBody line.\n", [(7, 7)]),
    ("- a\n  - b\n\n- c\n\nAfter.\n", [(1, 2), (4, 4), (6, 6)]),
    ("```sh\n# not a heading\n```\n", [(1, 3)]),
])
def test_markdown_blocks_keep_their_line_numbers(text, lines):
    secs = md.sections(md.strip_comments(text))
    assert [(b.start, b.end) for s in secs for b in s.blocks] == lines


def test_an_adr_whose_name_holds_a_hash_is_known_on_the_next_run(repo):
    """JabRef's `0024-use-#-as-indicator-for-BibTeX-string-constants.md`: its provenance was read back
    as `docs/decisions/0024-use-`, so once the ADR changed, a second run imported it again."""
    folder = repo / "docs" / "decisions"
    folder.mkdir(parents=True)
    adr = folder / "0024-use-#-as-indicator@v2.md"
    adr.write_text("# Use # as indicator for string constants\n\n## Status\n\nAccepted\n\n## Decision\n\n"
                   "Strings are marked with a leading hash sign.\n", encoding="utf-8")
    commit(repo, "adr")
    assert invoke("import", "adr").code == 0
    adr.write_text("# Use # as indicator for string constants\n\n## Status\n\nAccepted\n\n## Decision\n\n"
                   "Constants of BibTeX files are written between two hash signs, and the editor shows "
                   "them in a colour of their own so nobody confuses them with text.\n", encoding="utf-8")
    commit(repo, "reworded")
    again = invoke("import", "adr")
    assert again.code == 0 and "nothing new: 1 already in the record" in again.out, again.out
    assert len(_facts(repo)) == 1


def test_an_adr_marked_superseded_after_its_import_is_superseded_when_its_replacement_is_imported(repo):
    """log4brains and MADR mark only the old ADR ("Status: superseded by [new](new.md)"). Imported
    before the new ADR existed, the old one stayed a current decision beside its replacement: two
    current answers to one question, and doctor saw nothing wrong."""
    folder = repo / "docs" / "adr"
    folder.mkdir(parents=True)
    old = folder / "20200926-use-the-adr-number-as-its-unique-id.md"
    old.write_text("# Use the ADR number as its unique ID\n\n- Status: accepted\n- Date: 2020-09-26\n\n"
                   "## Decision Outcome\n\nChosen option: the ADR number.\n", encoding="utf-8")
    commit(repo, "adr")
    assert invoke("import", "adr").code == 0
    commit(repo, "imported")
    old.write_text(old.read_text(encoding="utf-8").replace(
        "- Status: accepted", "- Status: superseded by [20201016-use-the-adr-slug-as-its-unique-id]"
        "(20201016-use-the-adr-slug-as-its-unique-id.md)"), encoding="utf-8")
    (folder / "20201016-use-the-adr-slug-as-its-unique-id.md").write_text(
        "# Use the ADR slug as its unique ID\n\n- Status: accepted\n- Date: 2020-10-16\n\n## Decision\n\n"
        "From now on, an ADR is identified by its slug, not by a number.\n", encoding="utf-8")
    commit(repo, "superseded")
    r = invoke("import", "adr")
    assert r.code == 0, r.err
    number = _by_source(repo, "docs/adr/20200926-use-the-adr-number-as-its-unique-id.md")
    slug = _by_source(repo, "docs/adr/20201016-use-the-adr-slug-as-its-unique-id.md")
    assert number.status == "superseded" and slug.links == {"supersedes": [number.id]}
    assert f"updated {number.id}" in r.out or f"updated {slug.id}" in r.out
    _doctor_clean()
    commit(repo, "imported again")
    again = invoke("import", "adr")
    assert "nothing new: 2 already in the record" in again.out and git(repo, "status", "--porcelain") == ""


def test_an_adr_body_keeps_the_decision_under_subheadings_code_and_a_signpost(repo):
    """Shapes from alphagov/govuk-aws and ministryofjustice/cloud-platform: a Decision that opens with
    a diagram and goes on under `####` headings gave a body of one broken image link; an indented
    code block lost its first line's indent; an ADR whose text is all under its title (a signpost to
    a private document) gave a body with nothing of it."""
    folder = repo / "docs" / "adr"
    folder.mkdir(parents=True)
    (folder / "0004-dns-definitions.md").write_text(
        "# 4. DNS definitions\n\nDate: 2017-07-14\n\n## Status\n\nAccepted\n\n## Decision\n\n"
        "Internal zones use this format:\n\n    $servicename.$stackname.internal\n\n"
        "    puppet.perftesting.internal\n    monitoring.mystack.internal\n", encoding="utf-8")
    (folder / "0015-dns-infrastructure.md").write_text(
        "# 15. DNS infrastructure\n\nDate: 2018-03-06\n\n## Status\n\nAccepted\n\n## Context\n\n"
        "All instances resolve internal services.\n\n## Decision\n\n"
        "![DNS](./0015-govuk-aws-dns.jpg?raw=true \"DNS Infrastructure\")\n\n#### Stack domains\n\n"
        "Each stack has an internal and an external DNS domain.\n\n## Consequences\n\n"
        "Root domain entries are managed by hand.\n", encoding="utf-8")
    (folder / "0028-repo-vulnerability-scanning.md").write_text(
        "# 28 Repo vulnerability scanning\n\nDate: 2021-11-05\n\n**Link to this ADR: https://example.org/doc**\n\n"
        "(Security-related ADRs are stored privately; this sign-post keeps it findable.)\n", encoding="utf-8")
    commit(repo, "adrs")
    assert invoke("import", "adr").code == 0
    codes = _by_source(repo, "docs/adr/0004-dns-definitions.md").body
    assert codes.startswith("Internal zones use this format:\n\n    $servicename.$stackname.internal\n\n"
                            "    puppet.perftesting.internal\n    monitoring.mystack.internal\n"), codes
    dns = _by_source(repo, "docs/adr/0015-dns-infrastructure.md").body
    assert dns.startswith("Stack domains:\n\nEach stack has an internal and an external DNS domain.\n\n"
                          "Context: All instances"), dns
    assert ".jpg" not in dns and "Consequences: Root domain entries are managed by hand." in dns
    signpost = _by_source(repo, "docs/adr/0028-repo-vulnerability-scanning.md").body
    assert signpost.startswith("**Link to this ADR: https://example.org/doc**\n\n(Security-related ADRs"), signpost
    assert "Date:" not in signpost
    _doctor_clean()


def test_frontmatter_that_is_not_read_and_a_date_named_adr_are_said_as_such(repo):
    """A YAML alias bomb in a MADR header was reported as "no status found", hiding why; log4brains'
    `20201016-...md` was "ADR 20201016", and two ADRs of one day shared that number."""
    folder = repo / "docs" / "decisions"
    folder.mkdir(parents=True)
    bomb = "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 8))
    (folder / "0001-bomb.md").write_text("---\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + bomb +
                                         "status: accepted\n---\n# Use YAML headers\n\n## Decision Outcome\n\n"
                                         "Chosen option: YAML front matter.\n", encoding="utf-8")
    (folder / "20201016-use-the-adr-slug.md").write_text(
        "# Use the ADR slug as its unique ID\n\n- Status: accepted\n\n## Decision\n\nThe slug names the ADR.\n",
        encoding="utf-8")
    (folder / "20201016-use-lunr.md").write_text(
        "# Use Lunr for search\n\n- Status: superseded by ADR-20201016\n\n## Decision\n\nLunr it is.\n",
        encoding="utf-8")
    commit(repo, "adrs")
    r = invoke("import", "adr", "--json")
    assert r.code == 0, r.err
    notes = json.loads(r.out)["notes"]
    assert any(n.startswith("docs/decisions/0001-bomb.md: its frontmatter is not read (line 5: `a3` is expanded "
                            "past 10,000 values") for n in notes), notes
    slug = _by_source(repo, "docs/decisions/20201016-use-the-adr-slug.md")
    assert "Imported from the ADR (docs/decisions/20201016-use-the-adr-slug.md" in slug.body
    assert _by_source(repo, "docs/decisions/20201016-use-lunr.md").links == {}  # no number to link by


def test_an_adr_superseded_by_nothing_it_names_is_retired_and_doctor_accepts_the_import(repo):
    """`## Status: Superseded` with no replacement named, or "Superseded by ADR-0099" when no file has
    that number, was written `superseded` with nothing in its place: doctor's half-superseded error
    on a fresh import, twice."""
    folder = repo / "docs" / "adr"
    folder.mkdir(parents=True)
    (folder / "0001-use-postgres.md").write_text("# 1. Use Postgres\n\n## Status\n\nAccepted\n\n## Decision\n\n"
                                                 "We use Postgres for every service.\n", encoding="utf-8")
    (folder / "0002-use-mysql.md").write_text("# 2. Use MySQL\n\n## Status\n\nSuperseded\n\n## Decision\n\n"
                                              "We used MySQL for the first services.\n", encoding="utf-8")
    (folder / "0003-use-sqlite.md").write_text("# 3. Use SQLite\n\n## Status\n\nSuperseded by ADR-0099\n\n"
                                               "## Decision\n\nWe used SQLite for prototypes.\n", encoding="utf-8")
    commit(repo, "adrs")
    r = invoke("import", "adr", "--json")
    assert r.code == 0, r.err
    mysql = _by_source(repo, "docs/adr/0002-use-mysql.md")
    assert mysql.status == "retired" and _by_source(repo, "docs/adr/0003-use-sqlite.md").status == "retired"
    said = next(n for n in json.loads(r.out)["notes"] if n.startswith("docs/adr/0002-use-mysql.md: superseded"))
    _doctor_clean()
    command = said.split("`")[1].replace("NEW", _by_source(repo, "docs/adr/0001-use-postgres.md").id)
    assert invoke(*command.split()[1:]).code == 0  # the command the note quotes works as written
    assert _facts(repo)[mysql.id].status == "superseded"
    _doctor_clean()


def test_a_partial_supersession_keeps_the_older_adr_current_and_relates_the_two(repo):
    """govuk-aws's "Partly superseded" was an unknown status (a draft), and "Partially superseded by
    [ADR 2]" was read as "superseded by": an ADR still in force for the rest was never delivered."""
    folder = repo / "docs" / "adr"
    folder.mkdir(parents=True)
    (folder / "0001-networking.md").write_text(
        "# 1. Networking outline\n\n## Status\n\nPartially superseded by [2. IP ranges](0002-ip-ranges.md)\n\n"
        "## Decision\n\nEach environment has its own /16 range.\n", encoding="utf-8")
    (folder / "0002-ip-ranges.md").write_text(
        "# 2. IP ranges\n\n## Status\n\nAccepted\n\nThis ADR in part supersedes [0001](0001-networking.md).\n\n"
        "## Decision\n\nStaging moves to 10.12.0.0/16.\n", encoding="utf-8")
    (folder / "0003-dns.md").write_text("# 3. DNS\n\n## Status\n\nPartly superseded\n\n## Decision\n\n"
                                        "Internal zones end in .internal.\n", encoding="utf-8")
    commit(repo, "adrs")
    r = invoke("import", "adr", "--json")
    assert r.code == 0, r.err
    outline, ranges = _by_source(repo, "docs/adr/0001-networking.md"), _by_source(repo, "docs/adr/0002-ip-ranges.md")
    assert outline.status == ranges.status == _by_source(repo, "docs/adr/0003-dns.md").status == "current"
    assert outline.links == {"relates-to": [ranges.id]} and ranges.links == {"relates-to": [outline.id]}
    assert not any("not one the importer knows" in n for n in json.loads(r.out)["notes"])
    _doctor_clean()


def test_links_written_relative_to_the_imported_file_name_the_file_from_the_repository_root(repo):
    """"As in [ADR 10](0010-terraform.md)" in govuk-aws, "[tests/](mdc:tests)" in a Cursor rule: copied
    into a fact under docs/memory/, each link led nowhere."""
    folder = repo / "docs" / "architecture" / "decisions"
    folder.mkdir(parents=True)
    (folder / "0010-terraform.md").write_text("# 10. Terraform layout\n\n## Status\n\nAccepted\n\n## Decision\n\n"
                                              "Projects live under `terraform/projects`.\n", encoding="utf-8")
    (folder / "0017-terraform-data.md").write_text(
        "# 17. Terraform data\n\n## Status\n\nAccepted\n\n## Decision\n\nData lives beside the projects, as in "
        "[ADR 10](0010-terraform.md); see [the guide](https://example.org/guide#data) and [below](#notes).\n",
        encoding="utf-8")
    (repo / "svc" / ".cursor" / "rules").mkdir(parents=True)
    (repo / "svc" / ".cursor" / "rules" / "tests.mdc").write_text(
        "- Put new tests under [tests/](mdc:svc/tests) and read [the guide](../../../docs/testing.md) first\n",
        encoding="utf-8")
    commit(repo, "docs")
    assert invoke("import", "adr").code == 0
    assert invoke("import", "cursor-rules", "svc").code == 0
    data = _by_source(repo, "docs/architecture/decisions/0017-terraform-data.md").body
    assert data.startswith("Data lives beside the projects, as in ADR 10 (`docs/architecture/decisions/"
                           "0010-terraform.md`); see [the guide](https://example.org/guide#data) and [below](#notes)."), data
    rule = _by_source(repo, "svc/.cursor/rules/tests.mdc").body
    assert rule == "Put new tests under tests/ (`svc/tests`) and read the guide (`docs/testing.md`) first\n", rule


def test_adrs_in_markdown_and_mdx_are_read_and_other_formats_named(repo):
    """A Docusaurus site's `docs/adr/*.mdx` and a `.markdown` ADR were passed over without a word, as
    was an ADR kept in reStructuredText beside them."""
    folder = repo / "docs" / "adr"
    folder.mkdir(parents=True)
    (folder / "0001-use-postgres.md").write_text("# 1. Use Postgres\n\n## Status\n\nAccepted\n\n## Decision\n\n"
                                                 "We use Postgres.\n", encoding="utf-8")
    (folder / "0002-use-docusaurus.mdx").write_text(
        "---\nstatus: accepted\n---\nimport Tabs from '@theme/Tabs';\n\n# Use Docusaurus\n\n## Decision\n\n"
        "The docs site is built with Docusaurus.\n", encoding="utf-8")
    (folder / "0003-use-make.markdown").write_text("# 3. Use make\n\n## Status\n\nAccepted\n\n## Decision\n\n"
                                                   "Every task is a make target.\n", encoding="utf-8")
    (folder / "0004-use-sphinx.rst").write_text("Use Sphinx\n==========\n\nAccepted.\n", encoding="utf-8")
    commit(repo, "adrs")
    r = invoke("import", "adr", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert sorted(f["title"] for f in out["written"]) == ["Use Docusaurus", "Use Postgres", "Use make"]
    assert _by_source(repo, "docs/adr/0002-use-docusaurus.mdx").body.startswith("The docs site is built")
    assert "docs/adr: 1 file in other formats (.rst) not read: only Markdown is imported" in out["notes"]
    _doctor_clean()


def test_other_harnesses_guidance_files_import_when_named(repo):
    """docs/import.md says GEMINI.md and .windsurfrules import as `agents-md` given as PATH."""
    (repo / "GEMINI.md").write_text("# Style\n\n- Prefer small pure functions in every module\n", encoding="utf-8")
    (repo / ".windsurfrules").write_text("- Use snake case for all python identifiers\n", encoding="utf-8")
    commit(repo, "guidance")
    for name, title in [("GEMINI.md", "Prefer small pure functions in every module"),
                        (".windsurfrules", "Use snake case for all python identifiers")]:
        r = invoke("import", "agents-md", name, "--json")
        assert r.code == 0 and [f["title"] for f in json.loads(r.out)["written"]] == [title], r.out + r.err


AGENTS = "# Agents\n\n## Rules\n\n- Always open a pull request; never push to main.\n- Run the tests before committing.\n"


def test_an_import_before_init_sets_stele_up_as_init_does(plain_repo):
    """A new user's first command can be `stele import`: it wrote the facts but no `.stele/config.yaml`
    and no `.stele/.gitignore`, and recall then said Stele was not set up. A dry run, a failed import
    and one with nothing new set nothing up; an import that writes does, exactly as `stele init`."""
    from stele.config import TEMPLATE
    from stele.record.scaffold import MEMORY_README, STELE_GITIGNORE

    repo = plain_repo
    assert invoke("import", "agents-md").code == 2 and not (repo / ".stele").exists()  # no AGENTS.md yet
    (repo / "AGENTS.md").write_text(AGENTS)
    commit(repo, "agents")
    dry = invoke("import", "agents-md", "--dry-run")
    assert dry.code == 0 and "would set Stele up here" in dry.out and not (repo / ".stele").exists()
    assert not (repo / "docs").exists()
    r = invoke("import", "agents-md", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["set_up"] == [".stele/config.yaml", ".stele/.gitignore", "docs/memory/README.md"]
    assert (repo / ".stele/config.yaml").read_text() == TEMPLATE
    assert (repo / ".stele/.gitignore").read_text() == STELE_GITIGNORE
    assert (repo / "docs/memory/README.md").read_text() == MEMORY_README
    assert len(_facts(repo)) == 2
    assert "nothing changed" in invoke("init").out  # what init would have written is all there
    recalled = invoke("recall", "what must happen before committing a change here?")
    assert recalled.code == 0 and "not set up" not in recalled.err, recalled.err
    untracked = git(repo, "status", "--porcelain", "--untracked-files=all").split("\n")
    assert sorted(line[3:] for line in untracked if line.startswith("?? .stele/")) == [".stele/.gitignore",
                                                                                       ".stele/config.yaml"]


def test_an_import_says_it_set_stele_up(plain_repo):
    (plain_repo / "AGENTS.md").write_text(AGENTS)
    r = invoke("import", "agents-md")
    assert r.code == 0 and "set Stele up here as `stele init` does: .stele/config.yaml" in r.out, r.out
    assert "commit docs/memory/ and .stele/" in r.out
    assert "set Stele up" not in invoke("import", "agents-md").out  # the second time it is set up
