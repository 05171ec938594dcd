"""Property-based fuzzing of hook payload parsing: whatever a harness (or anything else) writes on
stdin, `payload.parse` returns a Payload with fields of the promised types or raises PayloadError,
never another exception; and `stele hook EVENT` run on it in a real record exits 0 with nothing or a
JSON answer on stdout and at most one stderr line (hooks fail open in every harness).

The objects are drawn from the keys the five harnesses send (Claude Code, Codex and Gemini in
snake_case, Copilot in camelCase with tool arguments as JSON text, Cursor with `conversation_id` and
`workspace_roots`) with values of every JSON type, so the fuzzer reaches the branches a plain
random dictionary would not."""
import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stele.hooks.harness import HARNESSES
from stele.hooks.payload import Payload, PayloadError, parse
from tests.helpers import hook

FUZZ = settings(max_examples=200, deadline=None, derandomize=True)
END_TO_END = settings(max_examples=30, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])

KEYS = ["session_id", "sessionId", "conversation_id", "cwd", "workspace_roots", "prompt", "tool_name",
        "toolName", "tool_input", "toolArgs", "source", "trigger", "transcript_path", "transcriptPath",
        "hook_event_name", "stop_hook_active", "file_path", "filePath", "path", "edits", "permission_mode",
        "model", "turn_id"]
TEXT = st.text(max_size=40)
ODD_TEXT = st.sampled_from(["", " ", "\x00", "../../etc/passwd", "-rf", ".hidden", "a" * 300, "ghp_" + "a1B2" * 9,
                            "\x1b]0;t\x07", "<hook_context>x</hook_context> hi", "*** Update File: src/a.py\n",
                            "/", "C:\\x", "\u202e", "{}", "[1]", '{"path": "src/b.py"}'])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT | ODD_TEXT,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS) | TEXT,
                                                                                 inner, max_size=4),
                    max_leaves=10)
PAYLOADS = st.dictionaries(st.sampled_from(KEYS) | TEXT, JSON | st.builds(json.dumps, JSON), max_size=8)
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def _well_typed(p: Payload) -> None:
    assert p.harness in HARNESSES and isinstance(p.form, str) and p.form
    assert isinstance(p.prompt, str) and isinstance(p.tool_name, str) and isinstance(p.source, str)
    assert isinstance(p.tool_input, dict) and isinstance(p.stop_hook_active, bool)
    assert p.event_name is None or isinstance(p.event_name, str)
    assert p.session is None or SAFE_NAME.fullmatch(p.session), p.session
    assert p.cwd is None or p.cwd.is_dir()
    paths = p.edited_paths()
    assert isinstance(paths, list) and all(isinstance(x, str) and x for x in paths)


@FUZZ
@given(st.text(max_size=200) | st.builds(json.dumps, JSON))
def test_any_text_is_a_payload_or_one_payload_error(text):
    try:
        payload = parse(text)
    except PayloadError as e:
        assert str(e) and "\n" not in str(e)
        return
    _well_typed(payload)


@FUZZ
@given(PAYLOADS, st.sampled_from([None, *HARNESSES]))
def test_any_harness_shaped_object_parses_to_well_typed_fields(data, flag):
    _well_typed(parse(json.dumps(data), flag))


@END_TO_END
@given(PAYLOADS, st.sampled_from(["session-start", "prompt", "pre-edit", "post-edit", "stop", "subagent-start"]),
       st.sampled_from(HARNESSES), st.booleans())
def test_every_hook_fails_open_on_any_payload(record, data, event, harness, here):
    if here:  # half the payloads point into the record, so the handlers run on them
        data = {**data, "cwd": str(record)}
    r = hook(event, data, "--harness", harness)
    assert r.code == 0, r.err
    assert r.err.count("\n") <= 1 and "Traceback" not in r.err, r.err
    if r.out.strip():
        json.loads(r.out)
