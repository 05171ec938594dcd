"""Every payload of the untrusted-input catalog, committed as a fact, is flagged by `stele doctor` at
its line; and shown through every reader (terminal commands, hooks, MCP) it arrives inert."""
import json
import re

import pytest

from stele.doctor.run import run as doctor_run
from stele.project import Project
from tests.helpers import hook, invoke, write_fact
from tests.untrusted_payloads import CLEAN, DANGEROUS, PAYLOADS, TAGGED

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\u3164\u00ad"
                 "\u2028\u2029\U000e0000-\U000e0fff]")


@pytest.mark.parametrize("name,text,checks", PAYLOADS, ids=[p[0] for p in PAYLOADS])
def test_doctor_flags_every_payload_at_its_line(repo, name, text, checks):
    path = write_fact(repo, "DEC-AAAA", "decision", "Retry policy", body=f"Retries are capped.\n\n{text}")
    found = [f for f in doctor_run(Project(repo)).findings if f.check in checks]
    assert {f.check for f in found} == checks, [str(f) for f in doctor_run(Project(repo)).findings]
    lines = path.read_text(encoding="utf-8").split("\n")
    assert all(f.path == str(path.relative_to(repo)) and f.fact == "DEC-AAAA" for f in found)
    first = next(i for i, line in enumerate(lines, 1) if text.split("\n")[0][:20] in line)
    assert min(f.line for f in found) >= first


def test_ordinary_text_raises_nothing(repo):
    write_fact(repo, "DEC-AAAA", "decision", "Ordinary", body="\n\n".join(CLEAN))
    assert doctor_run(Project(repo)).findings == []


def test_no_reader_shows_a_raw_escape_or_hidden_character(repo):
    body = "\n\n".join(t for _, t, _ in PAYLOADS if len(t) < 1000)
    write_fact(repo, "INS-AAAA", "instruction", "Deploys need a review" + TAGGED, body=body,
               delivery="always")
    write_fact(repo, "DEC-BBBB", "decision", "Retry policy \x1b]0;owned\x07 is three", body=body,
               tags=["retries"])
    outputs = {
        "show": invoke("show", "INS-AAAA").out, "show --json": invoke("show", "DEC-BBBB", "--json").out,
        "list": invoke("list").out, "why": invoke("why", "retry policy for deploys").out,
        "recall": invoke("recall", "what is the retry policy for deploys?").out,
        "search": invoke("search", "retry policy").out,
        "context": invoke("context", "--record", "DEC-BBBB").out,
        "hook session-start": hook("session-start", {"session_id": "s1", "cwd": str(repo),
                                                     "hook_event_name": "SessionStart", "source": "startup"},
                                   "--harness", "claude").out,
        "hook prompt": hook("prompt", {"session_id": "s2", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
                                       "prompt": "what is the retry policy for deploys?"}, "--harness", "claude").out,
    }
    assert "Deploys need a review" in outputs["hook session-start"]  # the instruction is injected ...
    for name, out in outputs.items():
        text = json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", out) \
            if name.startswith("hook") and out.startswith("{") else out
        assert not RAW.search(text), (name, RAW.search(text))  # ... with nothing hidden in it
    assert "<45 hidden characters>" in outputs["show"] and "^[]0;owned^G" in outputs["list"]


@pytest.mark.parametrize("name,text,checks", DANGEROUS, ids=[p[0] for p in DANGEROUS])
def test_doctor_flags_dangerous_content_in_an_instruction(repo, name, text, checks):
    path = write_fact(repo, "INS-AAAA", "instruction", "Payment tests", body=f"Retries are capped.\n\n{text}",
                      delivery="always")
    found = [f for f in doctor_run(Project(repo)).findings if f.check in checks]
    assert {f.check for f in found} == checks, [str(f) for f in doctor_run(Project(repo)).findings]
    assert all(f.path == str(path.relative_to(repo)) and f.fact == "INS-AAAA" and f.line > 1 for f in found)


def _forms(text: str) -> dict[str, str]:
    """The payload as each writer escapes it inside a frontmatter value: JSON (`\\u001b`), YAML's
    double-quoted style (`\\e`, `\\u202E`), and HTML entities in a body."""
    import html

    import yaml

    entities = "".join(c if c.isascii() and c.isprintable() else f"&#x{ord(c):X};" for c in text)
    return {
        "json": "summary: " + json.dumps(text) + "\n",
        "yaml": yaml.safe_dump({"summary": text}, allow_unicode=False, width=10**6),
        "html entities": "", "_body": entities if entities != html.escape(text, quote=False) else "",
    }


ESCAPABLE = [p for p in PAYLOADS + DANGEROUS if "\n" not in p[1] and len(p[1]) < 300 and p[2] != {"long-line"}]


@pytest.mark.parametrize("name,text,checks", ESCAPABLE, ids=[p[0] for p in ESCAPABLE])
def test_doctor_reads_values_through_their_escaping(repo, name, text, checks):
    """`title: "Build \\u001b[2J..."` is valid YAML whose parsed value clears the screen: the raw file
    holds no ESC, so the check must read the parsed values."""
    import html

    forms = _forms(text)
    for form, value in forms.items():
        if form == "_body" or (form == "html entities" and not forms["_body"]):
            continue
        body = forms["_body"] if form == "html entities" else "Retries are capped."
        if form == "html entities" and html.unescape(forms["_body"]) != text:
            continue  # an HTML parser drops a control character's reference (ESC, BEL, backspace)
        folder = repo / "docs" / "memory" / "notes"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "NOTE-AAAA-escaped.md").write_text(
            f"---\nid: NOTE-AAAA\nkind: note\ntitle: Escaped payload\n{value if form != 'html entities' else ''}"
            f"---\n{body}\n", encoding="utf-8")
        findings = [f for f in doctor_run(Project(repo)).findings if f.path.endswith("NOTE-AAAA-escaped.md")]
        if form == "json" and any(ord(c) > 0xFFFF for c in text):
            # JSON writes an astral character as a surrogate pair, which YAML reads as two lone
            # surrogates: the file is refused (a schema error), never loaded as clean text
            assert findings, form
            continue
        want = checks - {"instruction-like"} if form == "html entities" else checks
        assert want <= {f.check for f in findings}, (form, [str(f) for f in findings])


def test_a_flagged_standing_instruction_never_reaches_a_hook_unmarked(repo):
    for n, (_, text, _) in enumerate(DANGEROUS[:17]):
        write_fact(repo, f"INS-A{n:03d}", "instruction", f"Rule {n}", body=text, delivery="always")
    write_fact(repo, "INS-BBBB", "instruction", "Plain rule", body="Run the unit tests before pushing.",
               delivery="always")
    out = hook("session-start", {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart",
                                 "source": "startup"}, "--harness", "claude").out
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    blocks = [b for b in text.split("\n") if "Rule " in b and "INS-A" in b]
    assert blocks and all("[FLAGGED by stele doctor" in b for b in blocks), text[:2000]
    plain = next(b for b in text.split("\n") if "Plain rule" in b)
    assert "FLAGGED" not in plain
