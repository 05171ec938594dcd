"""Secrets a snapshot could copy out of the code or the record, through the real CLI: none may reach its
printed text, its JSON or its stored file. Tokens are made at run time (no literal here has a token's
full shape)."""
import base64
import json
import random
import string
from pathlib import Path

from tests.factfiles import write, write_fact
from tests.helpers import invoke

RNG = random.Random(7)
HEADER = "-----BEGIN " + "RSA PRIVATE KEY-----"
FOOTER = "-----END " + "RSA PRIVATE KEY-----"


def _token() -> str:
    return "gh" + "p_" + "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(36))


def _found(repo: Path, out: str, values: list[str]) -> list[str]:
    """The values that appear in `out` or in any stored snapshot."""
    stored = "".join(p.read_text() for p in (repo / ".stele" / "snapshots").glob("*.json"))
    assert stored, "nothing was stored"
    return [v for v in values if v in out or v in stored or json.dumps(v)[1:-1] in stored]


def test_a_private_key_cut_between_two_code_chunks_leaves_no_line_of_it(repo):
    """A key over a chunk's 80 lines (or 4 KiB) is cut in two; the second piece holds bare base64 lines
    and the END line, which no rule recognises on its own. The file is redacted before it is cut."""
    lines = [base64.b64encode(RNG.randbytes(48)).decode() for _ in range(90)]
    write(repo, "src/signing.py", '"""Deploy signing helpers."""\n\nSIGNING_KEY = """' + HEADER + "\n"
          + "\n".join(lines) + "\n" + FOOTER + '"""\n\n\ndef sign_release(blob):\n    return blob\n')
    write_fact(repo, "DEC-5161", "decision", title="Releases are signed with the deploy key",
               anchors=["src/signing.py"])
    done = invoke("context", "--record", "DEC-5161", "--save", "--json")
    assert done.code == 0, done.err
    code = json.loads(done.out)["parts"]["code"]
    assert len([c for c in code if c["path"] == "src/signing.py"]) >= 3  # the key's statement was cut
    assert _found(repo, done.out, lines) == []
    # line numbers still hold: the function is where the file has it
    assert any(c["symbol"] == "sign_release" and c["text"].startswith("src/signing.py:97-98 ") for c in code)


def test_the_projects_own_redaction_patterns_apply_to_code(repo):
    config = repo / ".stele" / "config.yaml"
    config.write_text(config.read_text().replace("  patterns: []", "  patterns: ['ACME-[0-9A-F]{16}']"))
    secret = "ACME-" + "".join(RNG.choice("0123456789ABCDEF") for _ in range(16))
    write(repo, "src/billing.py", f'def charge_invoice(amount):\n    return post("{secret}", amount)\n')
    write_fact(repo, "DEC-5162", "decision", title="Invoices are charged once", anchors=["src/billing.py"])
    done = invoke("context", "--record", "DEC-5162", "--save")
    assert done.code == 0, done.err
    assert "def charge_invoice" in done.out and "[REDACTED:configured pattern]" in done.out
    assert _found(repo, done.out, [secret]) == []


def test_what_a_run_was_asked_and_the_titles_beside_the_texts_are_redacted(repo):
    """The delivered texts were redacted; the JSON beside them (the prompt, the query, a record's
    title, a briefing line's title and summary) is stored and printed too."""
    in_prompt, in_title, in_doc = _token(), _token(), _token()
    write_fact(repo, "DEC-5163", "decision", title=f"Deploys use {in_title}")
    write_fact(repo, "DOC-5164", "document", title=f"Deploy runbook {in_doc}", status="current",
               summary=f"The deploy token is {in_doc}.", body="How deploys work.")
    done = invoke("context", "--record", "DEC-5163", "--prompt", f"deploy fails with {in_prompt}", "--save",
                  "--json")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert data["parts"]["briefing"] and data["parts"]["named"]
    assert data["inputs"]["prompt"] == "deploy fails with [REDACTED:GitHub token]"
    assert _found(repo, done.out, [in_prompt, in_title, in_doc]) == []
