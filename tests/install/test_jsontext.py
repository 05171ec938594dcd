"""Stele's entries are spliced into a settings file's text: every byte of the user's stays (indentation,
key layout, blank lines, comments where the harness reads them, a missing final newline), a reinstall
is a no-op, and taking the entries out gives the file back byte for byte, through the edit alone (the
uninstall path for a file changed since the install, where the ledger's copy is not used)."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stele import textform
from stele.install import claude, codex, copilot, cursor, gemini, mcp_claude
from stele.install.files import EditError
from stele.install.jsonhooks import JsonHooks, command
from stele.install.jsontext import load_object
from tests.helpers import invoke

EDITS = {"claude": claude.HOOKS, "codex": codex.HOOKS, "gemini": gemini.HOOKS, "cursor": cursor.HOOKS,
         "copilot": copilot.HOOKS, "claude-mcp": mcp_claude.McpJson()}
MINE = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}

HAND = {
    "2 spaces": '{\n  "model": "opus",\n\n  "env": {"A": "1"},\n  "permissions": {\n    "allow": ["Bash(ls)"]\n  }\n}\n',
    "4 spaces, hooks of theirs": ('{\n    "hooks": {\n        "Stop": [\n            {\n                "hooks": '
                                  '[{"type": "command", "command": "./n.sh"}]\n            }\n        ]\n    },\n'
                                  '    "model": "opus"\n}\n'),
    "tabs": '{\n\t"theme": "dark",\n\t"mcpServers": {\n\t\t"gh": {"command": "gh-mcp"}\n\t}\n}\n',
    "one line": '{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"./n.sh"}]}]}}',
    "spaced one line": '{ "model" : "opus" , "x" : [ 1 , 2 ] }\n',
    "no final newline": '{\n  "model": "opus"\n}',
    "unicode": '{\n  "naïve": "日本語 ✓ \\u00e9",\n  "emoji": "🦀"\n}\n',
    "empty object": "{}\n",
    "members on shared lines": '{\n  "a": 1, "b": 2,\n  "c": {"d": [1,\n        2]}\n}\n',
}


def is_kept_in(old: str, new: str) -> bool:
    """Every character of `old` is in `new`, in order: the edit only added."""
    it = iter(new)
    return all(ch in it for ch in old)


@pytest.mark.parametrize("name", sorted(EDITS))
@pytest.mark.parametrize("layout", sorted(HAND))
def test_hand_formatted_files_keep_every_byte_and_reinstall_is_a_no_op(name, layout):
    edit, old = EDITS[name], HAND[layout]
    new = edit.apply(old)
    assert new != old and is_kept_in(old, new)
    assert edit.apply(new) == new  # byte-identical
    assert edit.remove(new, created=False, before=old) == old
    theirs = {k: v for k, v in json.loads(old).items() if k not in ("hooks", "mcpServers")}
    assert {k: v for k, v in json.loads(new).items() if k in theirs} == theirs


def test_what_is_added_follows_the_file_s_own_layout():
    new = claude.HOOKS.apply(HAND["4 spaces, hooks of theirs"])
    assert '\n            {\n                "hooks": [\n                    {\n' in new  # their 4 spaces, their depth
    assert new.count("./n.sh") == 1 and new.index("./n.sh") < new.index("stele hook stop")
    tabs = claude.HOOKS.apply(HAND["tabs"])
    assert '\n\t"hooks": {\n\t\t"SessionStart": [\n\t\t\t{\n' in tabs
    one = claude.HOOKS.apply(HAND["one line"])
    assert "\n" not in one and '"matcher":"startup|resume|clear|compact"' in one  # their separators too
    assert claude.HOOKS.apply("{}\n").startswith('{\n  "hooks": {\n    "SessionStart": [\n')


def test_outdated_and_shared_entries_are_replaced_in_place_and_taken_out_without_the_rest():
    edit = JsonHooks({"Stop": {"hooks": [{"type": "command", "command": command("stop", "claude")}]}})
    old = ('{\n  "hooks": {\n    "Stop": [\n'
           '      {"hooks": [{"type": "command", "command": "stele hook stop"}, {"type": "command", "command": "./a"}]},\n'
           '      {\n        "hooks": [{"type": "command", "command": "stele hook stop --harness claude"}]\n      },\n'
           '      {"matcher": "x", "hooks": [{"type": "command", "command": "./b"}]}\n'
           '    ]\n  },\n  "model": "opus"\n}\n')
    new = edit.apply(old)
    assert new.startswith('{\n  "hooks": {\n    "Stop": [\n      {"hooks": [{"type": "command", "command": "./a"}]},\n'
                          '      {"matcher": "x", "hooks": [{"type": "command", "command": "./b"}]},\n      {\n')
    assert new.endswith('    ]\n  },\n  "model": "opus"\n}\n') and edit.apply(new) == new
    assert edit.remove(new, created=False) == (
        '{\n  "hooks": {\n    "Stop": [\n      {"hooks": [{"type": "command", "command": "./a"}]},\n'
        '      {"matcher": "x", "hooks": [{"type": "command", "command": "./b"}]}\n    ]\n  },\n  "model": "opus"\n}\n')


def test_entries_added_after_stele_s_keep_their_place_when_stele_s_go():
    new = claude.HOOKS.apply(HAND["2 spaces"])
    mine = json.dumps(MINE)
    later = new.replace('    "Stop": [\n', f'    "Stop": [\n      {mine},\n', 1)  # theirs before Stele's
    later = later.replace('"SessionEnd": [\n', '"Notification": [\n      {"hooks": []}\n    ],\n    "SessionEnd": [\n')
    out = claude.HOOKS.remove(later, created=False)
    assert json.loads(out) == {**json.loads(HAND["2 spaces"]), "hooks": {"Stop": [MINE], "Notification": [{"hooks": []}]}}
    assert out.startswith(HAND["2 spaces"][:-3]) and f'    "Stop": [\n      {mine}\n    ],\n' in out


GEMINI = """// my Gemini settings
{
  // the theme I like
  "theme": "dark", /* set by /theme */
  "hooks": {
    "AfterAgent": [ // a note after the bracket
      {"hooks": [{"type": "command", "command": "./notify.sh"}]}
    ]
  },
  "model": {"name": "gemini-2.5-pro"} // trailing note
}
"""


def test_gemini_comments_are_read_kept_and_given_back():
    new = gemini.HOOKS.apply(GEMINI)
    assert is_kept_in(GEMINI, new) and gemini.HOOKS.apply(new) == new
    assert "// a note after the bracket\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"./notify.sh\"}]},\n" in new
    assert gemini.HOOKS.remove(new, created=False) == GEMINI
    assert load_object(new, comments=True)["hooks"]["AfterAgent"][1]["hooks"][0]["name"] == "stele-stop"
    only = "// nothing here yet\n"
    assert gemini.HOOKS.apply(only).startswith(only + "{\n  \"hooks\"")


@pytest.mark.parametrize("text, says", [
    ('{\n  "a": 1,\n}\n', "trailing comma (line 2)"),  # Gemini's JSON.parse refuses it after strip-json-comments
    ('{\n  "a": [1, 2,]\n}\n', "trailing comma (line 2)"),
    ('{"a": 1} /* never closed', "never closed (line 1)"),
])
def test_gemini_refuses_what_gemini_refuses(text, says):
    with pytest.raises(EditError) as e:
        gemini.HOOKS.apply(text)
    assert says in str(e.value)


@pytest.mark.parametrize("name", ["claude", "codex", "cursor", "copilot", "claude-mcp"])
def test_strict_harnesses_refuse_comments_with_one_line(name):
    with pytest.raises(EditError) as e:
        EDITS[name].apply('{\n  "a": 1 // why\n}\n')
    assert str(e.value).startswith("has a comment (line 2), which Stele does not accept") and "\n" not in str(e.value)
    assert "a//b" in EDITS[name].apply('{"url": "https://example.com/a//b", "glob": "/*.md"}')  # in strings: text


@pytest.mark.parametrize("form", [textform.Form(crlf=True), textform.Form(b"\xef\xbb\xbf"), textform.PLAIN],
                         ids=["crlf", "bom", "plain"])
def test_uninstall_after_a_change_elsewhere_gives_back_every_other_byte(repo, form):
    """The ledger's copy cannot be used once the file changed: the edit alone must give the bytes back."""
    path = repo / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(textform.encode(GEMINI, form))
    assert invoke("install", "gemini").code == 0
    installed = path.read_bytes()
    assert textform.decode(installed)[1] == form
    path.write_bytes(installed.replace(b'"dark"', b'"light"'))  # the user's own change
    assert invoke("install", "gemini").out.startswith("unchanged")
    r = invoke("uninstall", "gemini")
    assert r.code == 0 and "Stele's entries taken out" in r.out
    assert path.read_bytes() == textform.encode(GEMINI.replace('"dark"', '"light"'), form)


def test_check_reads_gemini_comments_and_names_a_comment_in_a_strict_file(repo):
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").write_text(GEMINI)
    assert invoke("install", "gemini", "claude").code == 0
    r = invoke("install", "--check")
    assert "gemini: ok:" in r.out and "not valid JSON" not in r.out
    settings = repo / ".claude" / "settings.json"
    settings.write_text("// mine\n" + settings.read_text())
    r = invoke("install", "--check")
    assert r.code == 1 and "claude: error:" in r.out and "has a comment (line 1)" in r.out


# Generated files: any settings, laid out any of the ways json.dumps can, and (for Gemini) comments on
# lines of their own and at line ends; the edit adds only, a second run changes nothing, and taking
# the entries out gives back the text.
VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                  max_size=3), max_leaves=8)
GROUP = st.fixed_dictionaries({"hooks": st.lists(st.fixed_dictionaries(
    {"type": st.just("command"), "command": st.sampled_from(["./a.sh", "make lint", "echo //"])}), min_size=1,
    max_size=2)}, optional={"matcher": st.sampled_from(["Bash", "Edit|Write", ""])})
HOOKS = st.dictionaries(st.sampled_from(["Stop", "PreToolUse", "AfterAgent", "Notification"]),
                        st.lists(GROUP, max_size=2), max_size=3)
FILES = st.fixed_dictionaries({}, optional={"model": VALUES, "env": VALUES, "hooks": HOOKS, "theme": VALUES,
                                            "mcpServers": st.dictionaries(st.sampled_from(["gh", "db"]),
                                                                          VALUES, max_size=2)})
LAYOUT = st.sampled_from([(None, (", ", ": ")), (None, (",", ":")), (2, (",", ": ")), (4, (",", ": ")),
                          ("\t", (",", ": ")), (1, (",", ":"))])


@st.composite
def settings_text(draw, comments: bool) -> str:
    indent, separators = draw(LAYOUT)
    text = json.dumps(draw(FILES), indent=indent, separators=separators, ensure_ascii=draw(st.booleans()))
    if comments and "\n" in text:
        lines = text.split("\n")
        for n in sorted(draw(st.sets(st.integers(1, len(lines) - 1), max_size=3)), reverse=True):
            lines.insert(n, "// a note, with a } and a \"")
        for n in draw(st.sets(st.integers(0, len(lines) - 1), max_size=3)):
            lines[n] += " /* and { here */"
        text = "\n".join(lines)
    return text + draw(st.sampled_from(["", "\n", "\n\n"]))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data())
def test_generated_layouts_are_only_added_to_and_come_back(data):
    name = data.draw(st.sampled_from(sorted(EDITS)))
    edit = EDITS[name]
    old = data.draw(settings_text(name == "gemini"))
    new = edit.apply(old)
    assert is_kept_in(old, new)
    assert edit.apply(new) == new
    assert edit.remove(new, created=False, before=old) == old
    assert load_object(new, name == "gemini") == {**load_object(old, name == "gemini"), **{
        k: v for k, v in load_object(new, name == "gemini").items() if k in ("hooks", "mcpServers")}}


def test_the_cli_reports_a_refused_file_in_one_line_and_writes_nothing(repo):
    path = repo / ".cursor" / "hooks.json"
    path.parent.mkdir()
    path.write_text('{\n  "version": 1, // mine\n  "hooks": {}\n}\n')
    r = invoke("install", "cursor")
    assert r.code != 0 and len(r.err.strip().splitlines()) == 1 and "hooks.json: has a comment (line 2)" in r.err
    assert not (repo / ".cursor" / "rules").exists() and not (repo / ".stele/state/install").exists()
    assert path.read_text() == '{\n  "version": 1, // mine\n  "hooks": {}\n}\n'


def test_what_was_there_before_stele_stays_when_its_entries_go_from_a_changed_file(repo):
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    original = '{\n  "hooks": {},\n  "model": "opus"\n}'
    path.write_text(original)
    assert invoke("install", "claude").code == 0
    path.write_text(path.read_text().replace('"opus"', '"sonnet"'))
    assert invoke("install", "claude").code == 0  # a reinstall over their change keeps it too
    assert invoke("uninstall", "claude").code == 0
    assert path.read_text() == original.replace('"opus"', '"sonnet"')
