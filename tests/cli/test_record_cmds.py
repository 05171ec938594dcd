"""Each record command through the real entry point, in a real temporary git repository."""
import json
from pathlib import Path

import pytest

from tests.helpers import git, invoke


def remember(*args: str) -> dict:
    r = invoke("remember", *args, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_init_is_idempotent_and_says_so(plain_repo):
    first = invoke("init")
    assert first.code == 0 and "created .stele/config.yaml" in first.out
    assert (plain_repo / "docs/memory/README.md").is_file()
    ignore = (plain_repo / ".stele/.gitignore").read_text()
    assert "!config.yaml" in ignore
    before = {p: p.read_bytes() for p in plain_repo.rglob("*") if p.is_file() and ".git/" not in str(p)}
    second = invoke("init")
    assert second.code == 0 and "nothing changed" in second.out
    after = {p: p.read_bytes() for p in plain_repo.rglob("*") if p.is_file() and ".git/" not in str(p)}
    assert before == after
    git(plain_repo, "add", "-A")
    tracked = git(plain_repo, "ls-files").split()
    assert tracked == [".stele/.gitignore", ".stele/config.yaml", "docs/memory/README.md"]


def test_init_outside_git_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("init")
    assert r.code == 1 and "not inside a git repository" in r.err and "Traceback" not in r.err


def test_remember_link_list_show_edit_supersede(repo):
    dec = remember("Rate limiting runs before auth.\nFloods never reach bcrypt.", "--kind", "decision",
                   "--anchor", "src/auth.py::RateLimiter.check", "--tag", "auth")
    risk = remember("Reordering middleware lets floods reach bcrypt.", "--kind", "risk",
                    "--title", "Middleware order is load-bearing", "--link", f"caused-by:{dec['id']}")
    lesson = remember("TS2769: No overload matches this call", "--kind", "lesson",
                      "--link", f"relates-to:{risk['id']}", "--link", f"relates-to:{dec['id']}")
    text = (repo / dec["path"]).read_text()
    assert text.startswith(f"---\nid: {dec['id']}\nkind: decision\ntitle: Rate limiting runs before auth.\n")
    assert "anchors:\n  - src/auth.py::RateLimiter.check\n" in text

    listed = json.loads(invoke("list", "--json").out)["facts"]
    assert {f["id"] for f in listed} == {dec["id"], risk["id"], lesson["id"]}
    only = json.loads(invoke("list", "--kind", "risk", "--json").out)["facts"]
    assert [f["id"] for f in only] == [risk["id"]]
    by_anchor = json.loads(invoke("list", "--anchor", "src/auth.py", "--json").out)["facts"]
    assert [f["id"] for f in by_anchor] == [dec["id"]]
    table = invoke("list")
    assert table.code == 0 and "Middleware order is load-bearing" in table.out

    shown = json.loads(invoke("show", dec["id"], "--json").out)
    assert {(i["rel"], i["from"]) for i in shown["incoming"]} == {("caused-by", risk["id"]),
                                                                  ("relates-to", lesson["id"])}
    human = invoke("show", risk["id"])
    assert "Middleware order is load-bearing" in human.out and f"-> caused-by {dec['id']}" in human.out

    r = invoke("edit", dec["id"], "--priority", "high", "--add-tag", "security", "--remove-tag", "auth",
               "--add-anchor", "src/app.py", "--expires", "2027-01-01")
    assert r.code == 0, r.err
    edited = (repo / dec["path"]).read_text()
    assert "priority: high\n" in edited and "tags: [security]\n" in edited and "expires: 2027-01-01\n" in edited
    assert invoke("edit", dec["id"], "--expires", "").code == 0
    assert "expires" not in (repo / dec["path"]).read_text()

    new = remember("Rate limiting moves into the gateway.", "--kind", "decision")
    r = invoke("supersede", dec["id"], "--by", new["id"])
    assert r.code == 0, r.err
    assert "status: superseded\n" in (repo / dec["path"]).read_text()
    assert f"supersedes: [{dec['id']}]" in (repo / new["path"]).read_text()
    assert invoke("supersede", new["id"], "--by", dec["id"]).code == 1  # would be a cycle

    git(repo, "add", "-A")
    diff = git(repo, "diff", "--cached", "--", "docs/memory")
    assert "\x1b" not in diff and "!!python" not in diff


def test_remember_reads_stdin_and_body_file(repo, tmp_path):
    r = invoke("remember", "-", "--kind", "note", "--json", input="From stdin\n\nmore\n")
    fact = json.loads(r.out)
    assert (repo / fact["path"]).read_text().endswith("From stdin\n\nmore\n")
    body = tmp_path / "b.md"
    body.write_text("From a file")
    fact = json.loads(invoke("remember", "--body-file", str(body), "--json").out)
    assert "title: From a file" in (repo / fact["path"]).read_text()


def test_remember_redacts_and_says_what_without_echoing(repo):
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----"
    r = invoke("remember", f"Deploy key AKIAQ3EGRSWXYZ2KD7NB and\n{pem}", "--kind", "lesson",
               "--title", "Leaked keys", "--json")
    assert r.code == 0
    path = repo / json.loads(r.out)["path"]
    text = path.read_text()
    assert "AKIAQ3EGRSWXYZ2KD7NB" not in text and "MIIEowIBAAKCAQEA" not in text
    assert "1 AWS access key id" in r.err and "1 private key" in r.err
    assert "AKIAQ3EGRSWXYZ2KD7NB" not in r.err + r.out


def test_unknown_link_target_writes_nothing(repo):
    r = invoke("remember", "x", "--kind", "decision", "--link", "caused-by:RISK-ZZZZ")
    assert r.code == 1 and "RISK-ZZZZ" in r.err and "nothing was written" in r.err
    assert not list((repo / "docs/memory").rglob("DEC-*.md"))
    r = invoke("remember", "x", "--link", "because:RISK-ZZZZ")
    assert r.code == 2 and "unknown relation" in r.err


def test_bad_flags_are_usage_errors(repo):
    assert invoke("remember", "x", "--kind", "decree").code == 2
    assert invoke("remember", "x", "--expires", "tomorrow").code == 2
    assert invoke("remember", "x", "--anchor", "/abs/path.py").code == 2
    assert invoke("list", "--format", "yaml").code == 2
    assert invoke("nonsense").code == 2


def test_link_unlink_retire_verify(repo):
    a = remember("Use Redis db 2 for sessions", "--kind", "decision")
    b = remember("Redis failover drops sessions", "--kind", "risk")
    assert invoke("link", a["id"], "caused-by", b["id"]).code == 0
    assert f"caused-by: [{b['id']}]" in (repo / a["path"]).read_text()
    assert invoke("link", a["id"], "caused-by", b["id"]).code == 1  # already there
    assert invoke("unlink", a["id"], "caused-by", b["id"]).code == 0
    assert "links" not in (repo / a["path"]).read_text()
    r = invoke("retire", b["id"], "--why", "Redis Sentinel now fails over without loss")
    assert r.code == 0
    text = (repo / b["path"]).read_text()
    assert "status: retired" in text and "Retired 2026-11-29: Redis Sentinel" in text
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "facts")
    sha = git(repo, "rev-parse", "--short=7", "HEAD").strip()
    assert invoke("verify", a["id"]).code == 0
    text = (repo / a["path"]).read_text()
    assert ("verified: 2026-11-29" in text and f"verified_at: '{sha}'" in text) or f"verified_at: {sha}" in text


def test_malformed_record_fails_read_commands_with_every_problem(repo):
    mem = repo / "docs/memory"
    (mem / "bad").mkdir()
    (mem / "bad/yaml.md").write_text("---\nid: DEC-AAAA\nkind: decision\ntitle: [oops\n---\nx\n")
    (mem / "bad/kind.md").write_text("---\nid: DEC-BBBB\nkind: decree\ntitle: t\n---\nx\n")
    (mem / "bad/prefix.md").write_text("---\nid: RISK-CCCC\nkind: decision\ntitle: t\n---\nx\n")
    (mem / "bad/link.md").write_text("---\nid: DEC-DDDD\nkind: decision\ntitle: t\nlinks:\n  caused-by: [RISK-ZZZZ]\n---\nx\n")
    (mem / "bad/date.md").write_text("---\nid: DEC-EEEE\nkind: decision\ntitle: t\ncreated: 2026-02-30\n---\nx\n")
    good = remember("Invoices are immutable.", "--kind", "decision")["id"]
    for args in (("list",), ("show", "DEC-DDDD"), ("list", "--json"), ("show", good)):
        r = invoke(*args)
        assert r.code == 0, (args, r.err)  # readers set a bad file aside and go on
        lines = r.err.strip().splitlines()
        assert len(lines) == 5 and all(line.startswith("stele: warning: docs/memory/bad/") for line in lines)
        assert "docs/memory/bad/yaml.md:4: invalid YAML" in r.err
        assert "docs/memory/bad/kind.md:3: `kind` 'decree' is not a kind" in r.err
        assert "docs/memory/bad/prefix.md:2: id RISK-CCCC does not match kind decision" in r.err
        assert "docs/memory/bad/link.md:6: dangling link caused-by -> RISK-ZZZZ" in r.err
        assert "docs/memory/bad/date.md:5: `created` '2026-02-30' is not a date" in r.err
    listed = {f["id"] for f in json.loads(invoke("list", "--json").out)["facts"]}
    assert listed == {good, "DEC-DDDD"}  # the dangling link is dropped, its fact kept
    r = invoke("show", "DEC-EEEE")
    assert r.code == 1 and "set aside until its file is fixed" in r.err and "bad/date.md:5" in r.err
    r = invoke("doctor")
    assert r.code == 1 and "docs/memory/bad/link.md:6: error: dangling link" in r.out


def test_new_from_template_for_every_kind(repo):
    from stele.kinds import KINDS

    for kind in KINDS:
        r = invoke("new", kind, "--title", f"A {kind}: example", "--no-edit")
        assert r.code == 0, r.err
        path = repo / r.out.strip()
        assert path.is_file()
    r = invoke("list", "--json")
    assert r.code == 0, r.err
    assert len(json.loads(r.out)["facts"]) == len(KINDS)
    sections = {"decision": "## Consequences", "risk": "## What to check", "lesson": "## Cause"}
    for kind, heading in sections.items():
        (path,) = (repo / "docs/memory").rglob(f"{KINDS[kind].prefix}-*.md")
        assert heading in path.read_text()


def test_new_opens_the_editor_and_validates(repo, monkeypatch, tmp_path):
    script = tmp_path / "ed.sh"
    script.write_text("#!/bin/sh\nsed -i 's/^kind: decision/kind: decree/' \"$1\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    r = invoke("new", "decision", "--title", "Broken on purpose")
    assert r.code == 1 and "`kind` 'decree' is not a kind" in r.err


def test_edit_without_options_uses_the_editor_and_refuses_invalid_results(repo, monkeypatch, tmp_path):
    fact = remember("Body", "--kind", "decision", "--title", "Original")
    script = tmp_path / "ed.sh"
    script.write_text("#!/bin/sh\nsed -i 's/^title: Original/title: Edited/' \"$1\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    assert invoke("edit", fact["id"]).code == 0
    path = repo / fact["path"].replace("-original.md", "-edited.md")  # the file follows the new title
    assert "title: Edited" in path.read_text() and not (repo / fact["path"]).exists()
    script.write_text("#!/bin/sh\nsed -i 's/^kind: decision/kind: decree/' \"$1\"\n")
    before = path.read_text()
    r = invoke("edit", fact["id"])
    assert r.code == 1 and "nothing was written" in r.err
    assert path.read_text() == before


TOKEN = "gh" + "p_" + "Zq8Xw3Vb6Nm1Kp4Lr7Ts0Ya2Dc5Fg8Hj1Lk9P"


def typing_editor(tmp_path, line):
    """An $EDITOR that appends `line` to the file and records which file it was given."""
    script = tmp_path / "ed.sh"
    script.write_text(f"#!/bin/sh\necho \"$1\" > {tmp_path}/opened\nprintf '%s\\n' '{line}' >> \"$1\"\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("command", ["new", "edit"])
def test_the_editor_paths_redact_what_was_typed_and_edit_a_copy_outside_the_record(repo, monkeypatch, tmp_path,
                                                                                   command):
    fact = remember("Body", "--kind", "decision", "--title", "Original")
    monkeypatch.setenv("EDITOR", typing_editor(tmp_path, f"the deploy token is {TOKEN}"))
    r = invoke(*(["new", "decision"] if command == "new" else ["edit", fact["id"]]))
    assert r.code == 0, r.err
    assert "redacted before writing: 1 GitHub token" in r.err and TOKEN not in r.out + r.err
    opened = Path((tmp_path / "opened").read_text().strip())
    assert not opened.exists() and repo not in opened.parents  # a temporary copy, removed
    texts = [f.read_text() for f in (repo / "docs/memory").rglob("*.md")]
    assert not any(TOKEN in t for t in texts) and any("[REDACTED:GitHub token]" in t for t in texts)


def test_a_pem_block_argument_is_text_not_an_option_and_is_never_echoed(repo):
    key = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfnygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF"
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{key}\n-----END RSA PRIVATE KEY-----"
    r = invoke("remember", pem, "--kind", "lesson", "--title", "Pasted key", "--json")
    assert r.code == 0, r.err
    assert key not in r.out + r.err and "1 private key" in r.err
    assert key not in (repo / json.loads(r.out)["path"]).read_text()
    r = invoke("remember", pem, "--no-such-flag")
    assert r.code == 2 and key not in r.out + r.err


def test_a_secret_tag_anchor_or_source_is_dropped_and_told(repo):
    r = invoke("remember", "Deploys use the bot account.", "--tag", TOKEN, "--tag", "deploy", "--anchor",
               f"src/{TOKEN}.py", "--json")
    assert r.code == 0, r.err
    text = (repo / json.loads(r.out)["path"]).read_text()
    assert TOKEN not in text and "tags: [deploy]" in text and "anchors" not in text
    assert "redacted before writing: 2 GitHub tokens" not in r.err and "GitHub token" in r.err


def test_knowledge_documents_are_only_edited_as_drafts(repo):
    r = invoke("remember", "How refunds work.", "--kind", "document", "--status", "current")
    assert r.code == 2 and "a new document starts as a draft" in r.err
    assert not list((repo / "docs/memory").rglob("DOC-*.md"))
    draft = remember("Draft text", "--kind", "document")
    assert "status: draft" in (repo / draft["path"]).read_text()
    for status, step in (("reviewed", "stele knowledge review"), ("current", "stele knowledge promote"),
                         ("superseded", "stele supersede"), ("retired", "stele retire")):
        r = invoke("edit", draft["id"], "--status", status)
        assert r.code == 2 and step in r.err, (status, r.err)
    assert invoke("knowledge", "review", draft["id"], "--note", "checked").code == 0
    assert invoke("edit", draft["id"], "--summary", "changed").code == 0
    text = (repo / draft["path"]).read_text()
    assert "status: draft" in text and "review:" not in text  # an edit clears the review
    assert invoke("knowledge", "review", draft["id"], "--note", "checked").code == 0
    assert invoke("knowledge", "promote", draft["id"]).code == 0
    r = invoke("edit", draft["id"], "--title", "New title")
    assert r.code == 1 and "not edited in place" in r.err


def test_an_editor_edit_of_a_reviewed_draft_clears_the_review_through_the_library(repo, monkeypatch, tmp_path):
    draft = remember("Draft text", "--kind", "document")
    assert invoke("knowledge", "review", draft["id"], "--note", "checked").code == 0
    script = tmp_path / "ed.sh"
    script.write_text("#!/bin/sh\nsed -i 's/^Draft text/Unreviewed text/' \"$1\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    assert invoke("edit", draft["id"]).code == 0
    text = (repo / draft["path"]).read_text()
    assert "Unreviewed text" in text and "status: draft" in text and "review:" not in text
    r = invoke("knowledge", "promote", draft["id"])
    assert r.code == 1 and "has not been reviewed" in r.err
    script.write_text("#!/bin/sh\nsed -i 's/^status: draft/status: current/' \"$1\"\n")
    r = invoke("edit", draft["id"])
    assert r.code == 1 and "`status:` current" in r.err and "stele knowledge promote" in r.err
    assert "edited copy is at" in r.err
    assert "status: draft" in (repo / draft["path"]).read_text()


def test_an_editor_edit_is_refused_when_the_fact_changed_meanwhile(repo, monkeypatch, tmp_path):
    fact = remember("Body", "--kind", "decision", "--title", "Original")
    script = tmp_path / "ed.sh"
    script.write_text("#!/bin/sh\nsed -i 's/^title: Original/title: Mine/' \"$1\"\n"
                      f"stele_edit() {{ :; }}\nsed -i 's/^Body/Theirs/' {repo / fact['path']}\n")
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    r = invoke("edit", fact["id"])
    assert r.code == 1 and "changed while you edited it" in r.err
    assert "Theirs" in (repo / fact["path"]).read_text() and "title: Original" in (repo / fact["path"]).read_text()


def test_version_and_help_do_not_load_heavy_modules():
    import subprocess
    import sys

    code = ("import sys; from stele.cli.entry import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in ('tantivy', 'model2vec', 'numpy', 'git') if m in sys.modules]\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "stele 0.1.0" in r.stdout


def test_remember_finds_a_repeat_that_holds_a_secret(repo):
    """The record holds the redacted text, and the new fact was compared before its redaction: the same
    sentence with the same token was written twice."""
    token = "ghp" + "_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    first = remember(f"CI deploys with the bot token {token} from the release runners only.", "--kind", "note")
    r = invoke("remember", f"CI deploys with the bot token {token} from the release runners only.", "--kind", "note")
    assert r.code == 1 and f"{first['id']} ({first['path']}) already says this" in r.err, r.out + r.err


def test_remember_says_when_a_fact_repeats_or_nearly_repeats_another(repo):
    first = remember("We need two approvals for a release.", "--kind", "constraint")
    r = invoke("remember", "We need two approvals for a release.", "--kind", "constraint")
    assert r.code == 1 and f"{first['id']} ({first['path']}) already says this" in r.err
    assert "--allow-duplicate" in r.err
    near = remember("We need 2 approvals for a release.", "--kind", "constraint")
    assert near["similar"] == [{"id": first["id"], "score": 0.857, "exact": False}]
    r = invoke("remember", "We need 2 approvals for a release!", "--kind", "constraint", "--allow-duplicate")
    assert r.code == 0 and "repeats" in r.err
    assert invoke("remember", "We need two approvals for a release.", "--kind", "note").code == 0  # other kind
    r = invoke("doctor")
    assert any("86% similar" in line and first["id"] in line and near["id"] in line for line in r.out.splitlines())


def test_remember_warns_about_an_anchor_that_names_nothing(repo):
    (repo / "src").mkdir()
    (repo / "src/auth.py").write_text("def login():\n    return True\n")
    r = invoke("remember", "Login is safe.", "--kind", "decision", "--anchor", "src/auth.py::login",
               "--anchor", "src/gone.py", "--anchor", "src/auth.py::logout", "--anchor", "lib/**/*.py")
    assert r.code == 0
    assert "anchor 'src/gone.py': no such file in the checkout" in r.err
    assert "anchor 'src/auth.py::logout': no such symbol in the file" in r.err
    assert "anchor 'lib/**/*.py': the glob matches no file" in r.err
    assert "src/auth.py::login'" not in r.err


def test_list_shows_expired_and_review_overdue_facts_as_such(repo):
    expired = remember("Cache for a day.", "--kind", "decision", "--expires", "2026-01-01")["id"]
    overdue = remember("Queue sized for 10k.", "--kind", "decision", "--review-after", "2026-02-01")["id"]
    live = remember("Invoices are immutable.", "--kind", "decision")["id"]
    rows = {f["id"]: f for f in json.loads(invoke("list", "--json").out)["facts"]}
    assert rows[expired]["inactive"] == "expired 2026-01-01"
    assert rows[overdue]["inactive"] == "review overdue since 2026-02-01" and rows[live]["inactive"] is None
    text = invoke("list").out
    assert "current, expired 2026-01-01" in text and "current, review overdue" in text


def test_supersede_is_one_command_and_the_knowledge_spelling_is_a_hidden_alias(repo):
    old = remember("Limiter after auth.", "--kind", "decision")["id"]
    new = remember("Limiter before auth, so floods never reach bcrypt.", "--kind", "decision")["id"]
    import re

    listed = re.compile(r"^[│|\s]*supersede\s", re.M)  # a command row of the help, not a word in a sentence
    assert listed.search(invoke("--help").out) and not listed.search(invoke("knowledge", "--help").out)
    r = invoke("supersede", old, "--by", new, "--json")
    assert r.code == 0 and json.loads(r.out) == {"superseded": old, "by": new, "status": "current"}


def test_remember_and_edit_set_checks_through_the_file_validator(repo):
    fact = remember("Dex is for web UIs only; never for Kubernetes authentication.", "--kind", "constraint",
                    "--anchor", "ops/**/*.sh", "--check-forbid", "kubectl .*dex", "--enforce", "deny")
    def checks(fid):
        r = invoke("show", fid, "--json")
        assert r.code == 0, r.err
        data = json.loads(r.out)
        return data.get("fact", data)["check"]

    assert checks(fact["id"]) == [{"forbid": "kubectl .*dex", "enforce": "deny"}]
    text = (repo / fact["path"]).read_text()
    assert "check:\n  forbid: kubectl .*dex\n  enforce: deny\n" in text
    fid = fact["id"]
    r = invoke("edit", fid, "--check-require", "^#!/bin/sh", "--enforce", "warn", "--json")
    assert r.code == 0, r.err
    assert checks(fid) == [{"forbid": "kubectl .*dex", "enforce": "warn"},
                                          {"require": "^#!/bin/sh", "enforce": "warn"}]
    assert invoke("edit", fid, "--clear-checks", "--json").code == 0
    assert "check:" not in (repo / fact["path"]).read_text()
    bad = invoke("remember", "x y z w", "--kind", "constraint", "--check-forbid", "kubectl(")
    assert bad.code == 2 and "--check-forbid 'kubectl(' is not a valid regular expression" in bad.err
    assert invoke("remember", "a lesson here", "--kind", "lesson", "--check-forbid", "x").code == 2
    assert "--enforce needs a check" in invoke("remember", "z y x w", "--kind", "constraint", "--enforce",
                                               "deny").err


def test_edit_enforce_keeps_a_structural_check_s_language_and_a_command_s_timeout(repo):
    from tests.factfiles import write_fact

    rel = write_fact(repo, "CON-AAAA", "constraint", title="HTTP through the client", anchors=["src/*.py"],
                     check=[{"ast": "requests.get($$$)", "language": "python"},
                            {"command": "make lint", "timeout": 30}])
    assert invoke("edit", "CON-AAAA", "--enforce", "deny", "--json").code == 0
    data = json.loads(invoke("show", "CON-AAAA", "--json").out)
    assert data.get("fact", data)["check"] == [
        {"ast": "requests.get($$$)", "enforce": "deny", "language": "python"},
        {"command": "make lint", "enforce": "deny", "timeout": 30}]
    text = (repo / rel).read_text()
    assert "language: python" in text and "timeout: 30" in text


def test_a_check_pattern_that_spells_a_credential_is_refused_not_redacted_into_another_pattern(repo):
    """`--check-forbid TOKEN` (a team forbidding a leaked token) was redacted on the way to the file, as
    a credential must be, but the check then forbade the literal placeholder `REDACTED:GitHub token`
    (YAML read `[REDACTED:...]` as a list) and the token could be committed again unflagged."""
    token = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    r = invoke("remember", "Never commit the leaked token again.", "--kind", "constraint", "--anchor", "src",
               "--check-forbid", token)
    assert r.code == 2 and "--check-forbid holds a GitHub token" in r.err and token not in r.err
    assert not list((repo / "docs/memory").rglob("CON-*.md"))
    fact = remember("Never commit the leaked token again.", "--kind", "constraint", "--anchor", "src",
                    "--check-forbid", "ghp_u8jzPde0")
    r = invoke("edit", fact["id"], "--check-require", token)
    assert r.code == 2 and "--check-require holds a GitHub token" in r.err
