"""Secrets never land: every token of the corpus through every write and send path, then every byte.

One real repository. Each path a user or an agent has for putting text into Stele gets every shape of
tests/secret_corpus.py: fact fields through the CLI, the library and the MCP tool, both editor paths,
session logs through the CLI and hooks, a hook's session id and edited paths, code copied into a
stored snapshot, error messages, a PEM block passed as an argument. Then every file under docs/memory/
and .stele/ (index, catalog, snapshots, state, WAL and its gzipped archives) and every git object is
searched for every raw value (and its JSON-escaped form): none may be found. The look-alikes go
through the same body path and at most one may come back changed.
"""
from __future__ import annotations

import gzip
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import git, hook, invoke
from tests.secret_corpus import look_alikes, shapes

SHAPES = shapes()
SECRETS = sorted({v for s in SHAPES for v in s.secrets})
ALL_TEXT = "\n\n".join(f"{n}. {s.text}" for n, s in enumerate(SHAPES))
PATHS: list[str] = []  # the write paths exercised, for the report line


def path(name: str) -> None:
    if name not in PATHS:
        PATHS.append(name)


def flat(s) -> str:
    """The shape on one line (titles, summaries and options are one line)."""
    return " ".join(s.text.split("\n"))


def identifier(s) -> str | None:
    """The raw token when it identifies itself (`ghp_...`, `AKIA...`): what a user could put in a tag,
    an anchor or a link. A bare password or a key's base64 line is a secret only in its context."""
    from stele.redact import redact

    value = s.secrets[0]
    return value if redact(value).secrets and len(value) < 300 else None


def leaks(repo: Path) -> dict[str, list[str]]:
    """raw value -> files (or git objects) it was found in."""
    forms = {v: {v.encode(), json.dumps(v)[1:-1].encode()} for v in SECRETS}
    found: dict[str, list[str]] = {}

    def scan(name: str, data: bytes) -> None:
        for value, variants in forms.items():
            if any(f in data for f in variants):
                found.setdefault(value, []).append(name)

    for folder in (repo / "docs" / "memory", repo / ".stele"):
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                data = file.read_bytes()
                if file.suffix == ".gz":
                    data = gzip.decompress(data)
                scan(str(file.relative_to(repo)), data)
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo,
                             capture_output=True, check=True).stdout
    scan("git objects", objects)
    return found


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    monkeypatch.chdir(root)
    monkeypatch.delenv("STELE_SESSION", raising=False)
    assert invoke("init").code == 0
    return root


def editor(tmp_path: Path, text: str) -> str:
    """An $EDITOR that appends `text` to the body of the file it is given (a person typing it)."""
    payload = tmp_path / "typed.txt"
    payload.write_text(text, encoding="utf-8")
    script = tmp_path / "type-into"
    script.write_text(f"#!{sys.executable}\nimport sys\np = sys.argv[1]\nt = open(p).read()\n"
                      f"t = t.replace('title: New', 'title: Typed').rstrip() + '\\n\\n' + open({str(payload)!r}).read()"
                      "\nopen(p, 'w').write(t + '\\n')\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.mark.slow  # ~35 s: about 400 writes through the real CLI and library
def test_no_secret_lands_anywhere_and_look_alikes_survive(repo, tmp_path, monkeypatch):
    from stele.project import Project
    from stele.record import edit
    from stele.serve.mcp import remember_text

    p = Project(repo)
    outputs: list[str] = []

    def run(*args: str, input: str | None = None):
        r = invoke(*args, input=input)
        outputs.append(r.out + r.err)
        return r

    # fact bodies: argument, stdin, --body-file
    r = run("remember", ALL_TEXT, "--kind", "lesson", "--title", "Everything pasted at once", "--json")
    assert r.code == 0, r.err
    body_fact = json.loads(r.out)["id"]
    path("fact body (argument)")
    assert run("remember", "-", "--kind", "note", "--title", "From stdin", input=ALL_TEXT).code == 0
    path("fact body (stdin)")
    (tmp_path / "body.md").write_text(ALL_TEXT, encoding="utf-8")
    assert run("remember", "--body-file", str(tmp_path / "body.md"), "--title", "From a file").code == 0
    path("fact body (--body-file)")

    # every field, one shape at a time: title, summary, retire_when, tags, anchors, sources, links
    from stele.neutralize import shown

    identifiers = 0
    for n, s in enumerate(SHAPES):
        line, value = flat(s), identifier(s)
        ids = [value] if value else []
        identifiers += bool(value)
        w = edit.remember(p, f"Shape {n} fields.", kind="decision", title=line if len(line) <= 120 else None,
                          summary=line, retire_when=f"when {line} rotates", tags=[*ids, "ok"], source=ids)
        assert w.redacted and w.fact.tags == ["ok"], (s.name, w.redacted, w.fact.tags)
        if value:
            try:
                edit.remember(p, f"Shape {n} anchor.", anchors=[value])
            except Exception as e:  # an invalid anchor is refused; the message is shown redacted
                assert value not in shown(str(e))
            r = run("remember", f"Shape {n} link.", "--link", f"relates-to:{value}")
            assert r.code != 0 and value not in r.err
        r = run("remember", f"Shape {n} flag.", "--priority", line)
        assert r.code != 0 and not any(v in r.err for v in s.secrets), r.err
    assert identifiers >= 60
    tokens = [v for v in (identifier(s) for s in SHAPES) if v]
    for name in ("title", "summary", "retire_when", "tags", "anchors", "source", "links",
                 "error messages (--link, --priority, --anchor)"):
        path(f"fact {name}")

    # edits: options, $EDITOR, retire, knowledge review
    assert run("edit", body_fact, "--body", ALL_TEXT + "\nedited", "--add-tag", tokens[0]).code == 0
    path("edit --body/--add-tag")
    monkeypatch.setenv("EDITOR", editor(tmp_path, ALL_TEXT))
    r = run("edit", body_fact)
    assert r.code == 0, r.err
    path("edit in $EDITOR")
    r = run("new", "risk")
    assert r.code == 0 and "redacted before writing" in r.err, r.err
    path("new in $EDITOR")
    victim = edit.remember(p, "To retire.", kind="decision").fact.id
    assert run("retire", victim, "--why", ALL_TEXT).code == 0
    path("retire --why")
    doc = json.loads(run("knowledge", "draft", "How deploys authenticate", "--json").out or "{}").get("id")
    if doc:
        assert run("knowledge", "review", doc, "--note", ALL_TEXT[:4000]).code == 0
        path("knowledge review --note")

    # a PEM block as an argument: not an option, not echoed
    pem = next(s for s in SHAPES if s.name == "pem RSA")
    r = run("remember", pem.text, "--kind", "lesson", "--title", "pasted key")
    assert r.code == 0 and "1 private key" in r.err and pem.secrets[0] not in r.out + r.err
    path("argument starting with -----BEGIN")

    # MCP remember
    out = remember_text(p, ALL_TEXT, kind="lesson", title="Via MCP", tags=[tokens[1]])
    assert "redacted before writing" in out
    path("MCP remember")

    # sessions: goal, every entry type, stage names, then the archive
    sid = run("session", "start", "--goal", ALL_TEXT[:3000], "--session", "e2e-session").out.strip()
    assert sid == "e2e-session"
    for type_ in ("prompt", "note", "decision", "outcome", "steering"):
        assert run("session", "log", type_, ALL_TEXT, "--session", sid).code == 0
    assert run("session", "log", "stage", ALL_TEXT, "--stage", tokens[2], "--session", sid).code == 0
    path("session goal")
    path("session entries (prompt, note, decision, outcome, steering, stage)")
    monkeypatch.setenv("STELE_SESSION", sid)
    assert run("note", ALL_TEXT).code == 0
    monkeypatch.delenv("STELE_SESSION")
    path("stele note")

    # hooks: a secret as the harness's session id, and as an edited path
    aws = next(s for s in SHAPES if s.name == "access key id").secrets[0]
    for value in (aws, tokens[3]):
        hook("prompt", {"session_id": value, "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
                        "prompt": "How do deploys authenticate against the registry?"}, "--harness", "claude")
        hook("post-edit", {"session_id": value, "cwd": str(repo), "hook_event_name": "PostToolUse",
                           "tool_name": "Edit", "tool_input": {"file_path": f"{repo}/src/{tokens[4]}.py",
                                                               "old_string": "a", "new_string": "b"}},
             "--harness", "claude")
    path("hook session id (file names)")
    path("hook state (edited paths)")

    # code copied into a stored snapshot
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src" / "settings.py").write_text("def settings():\n    return '''\n" + ALL_TEXT.replace("'''", "")
                                              + "\n'''\n", encoding="utf-8")
    rule = edit.remember(p, "Settings hold the deploy credentials.", kind="constraint",
                         anchors=["src/settings.py::settings"]).fact.id
    r = run("context", "--record", rule, "--prompt", "deploy credentials settings", "--save")
    assert r.code == 0, r.err
    snaps = list((repo / ".stele" / "snapshots").glob("*.json"))
    assert snaps and "src/settings.py" in snaps[0].read_text()
    path("code and records copied into a snapshot")

    # derived state: the index and catalog, the WAL archive
    assert run("search", "deploy credentials").code == 0
    assert run("session", "compact", "--older-than", "0").code == 0
    assert list((repo / ".stele").rglob("*.jsonl.gz")), "the archive was not written"
    path("WAL archive, index, catalog (derived)")

    # what the agent and the terminal were shown
    shown = "".join(outputs) + invoke("show", body_fact).out + invoke("list").out
    shown += hook("session-start", {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart",
                                    "source": "startup"}, "--harness", "claude").out
    for value in SECRETS:
        assert value not in shown, value[:12]

    # commit the record and scan every byte
    os.remove(repo / "src" / "settings.py")  # the user's own source is theirs, not Stele's to commit
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "record")
    found = leaks(repo)
    assert found == {}, {k[:16]: v for k, v in found.items()}

    # look-alikes through the same path: at most one damaged
    alikes = look_alikes()
    r = run("remember", "\n\n".join(alikes), "--kind", "note", "--title", "Things that look like secrets", "--json")
    text = (repo / json.loads(r.out)["path"]).read_text(encoding="utf-8")
    damaged = [a for a in alikes if a not in text]
    assert len(damaged) <= 1, damaged
    print(f"\ncorpus: {len(SHAPES)} shapes, {len({s.family for s in SHAPES})} families, {len(SECRETS)} raw "
          f"values, {len(PATHS)} paths, {sum(len(v) for v in found.values())} leaks; {len(damaged)} of "
          f"{len(alikes)} look-alikes damaged")
    assert len(PATHS) >= 20

    # the scan can fail: a value planted in a file under .stele/ and in a git object is found in both
    (repo / ".stele" / "planted.txt").write_text(SECRETS[5], encoding="utf-8")
    subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=SECRETS[6].encode(), check=True,
                   capture_output=True)
    planted = leaks(repo)
    assert planted[SECRETS[5]] == [".stele/planted.txt"] and planted[SECRETS[6]] == ["git objects"]
