"""The secret corpus: every shape is redacted, every look-alike survives untouched, each secret counts once."""
import pytest

from stele.redact import Redactor, Tally, describe, is_reference, looks_random, name_kind, redact
from tests.secret_corpus import look_alikes, shapes

SHAPES = shapes()
LOOK_ALIKES = look_alikes()


def test_the_corpus_is_big_enough():
    assert len(SHAPES) >= 60 and len({s.family for s in SHAPES}) >= 30 and len(LOOK_ALIKES) >= 30


@pytest.mark.parametrize("shape", SHAPES, ids=[f"{s.family}: {s.name}" for s in SHAPES])
def test_every_shape_is_redacted_once_and_the_text_around_it_kept(shape):
    result = redact(f"before {shape.text} after")
    for value in shape.secrets:
        assert value not in result.text, result.text
    assert result.text.startswith("before ") and "[REDACTED:" in result.text
    assert sum(result.found.values()) == 1, result.found
    assert redact(result.text).text == result.text  # idempotent


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_survive(text):
    result = redact(text)
    assert result.text == text and not result.found


def test_summary_names_kinds_never_secrets_and_counts_a_repeated_secret_once():
    kid = next(s for s in SHAPES if s.name == "access key id").secrets[0]
    pem = next(s for s in SHAPES if s.name == "pem RSA").text
    result = redact(f"{kid} and again {kid} and {pem}")
    assert result.summary() == "1 AWS access key id, 1 private key"
    assert kid not in result.summary()
    tally = Tally()
    tally.add(redact(f"title {kid}"))
    tally.add(redact(f"body {kid}"))
    assert describe(tally.found) == "1 AWS access key id"


def test_a_token_inside_an_assignment_is_one_secret_of_the_token_kind():
    token = next(s for s in SHAPES if s.name == "ghp").secrets[0]
    result = redact(f'GITHUB_PASSWORD = "{token}"')
    assert result.found == {"GitHub token": 1}


def test_configured_patterns_apply_and_bad_ones_name_the_setting():
    r = Redactor([r"ACME-[0-9]{6}"]).redact("ticket ACME-123456 leaked")
    assert r.text == "ticket [REDACTED:configured pattern] leaked"
    with pytest.raises(Exception, match=r"redaction\.patterns"):
        Redactor(["(unclosed"])


@pytest.mark.parametrize("name,kind", [
    ("DB_PASSWORD", "password"), ("dbPassword", "password"), ("PGPASSWORD", "password"),
    ("aws_secret_access_key", "AWS credential"), ("X-Api-Key", "secret"), ("_authToken", "secret"),
    ("TWILIO_AUTH_TOKEN", "secret"), ("datadog_app_key", "Datadog credential"),
    ("API_KEY_ID", None), ("token_url", None), ("secret_name", None), ("sort_key", "secret"),
    ("password_min_length", None), ("DISCORD_CHANNEL_ID", None),
])
def test_the_last_word_of_a_name_decides(name, kind):
    judged = name_kind(name)
    assert (judged[0] if judged else None) == kind


@pytest.mark.parametrize("value", ["${VAR}", "$DB_PASS", "{{ secrets.X }}", "<your-token>", "changeme",
                                   "YOUR_TOKEN_HERE", "********", "os.environ['X']", "%APPDATA%",
                                   "[REDACTED:password]"])
def test_references_and_placeholders(value):
    assert is_reference(value)


@pytest.mark.parametrize("value,random", [("9d8f7a6c5e4b3a2f1e0d", True), ("created_at", False),
                                          ("getUserAuthToken", False), ("v2.14.1-rc.3", False),
                                          ("src/auth.py:12-40", False), ("kQ9xZ2mW7pL4", True)])
def test_looks_random(value, random):
    assert looks_random(value) is random


def test_a_bad_configured_pattern_is_refused_when_the_config_loads(tmp_path):
    from stele.config import load
    from stele.errors import SteleError

    cfg = tmp_path / "config.yaml"
    cfg.write_text("redaction:\n  patterns: ['(unclosed']\n")
    with pytest.raises(SteleError, match=r"config.yaml: `redaction.patterns\[0\]` '\(unclosed': is not a valid"):
        load(cfg)


def test_a_batch_sets_aside_only_rules_that_cannot_match_any_of_its_texts():
    """`spans_many` narrows the rules to the literals its batch holds: over the whole corpus, in batches
    of every size and mix (each batch narrows differently), every text's spans are `spans` of it
    alone, with and without configured patterns."""
    import random

    from stele import redact as mod

    assert not any(c.isspace() for shape in mod.SHAPES for k in shape.keywords for c in k)  # the premise
    assert not any(c.isspace() for w in mod._HINT_WORDS for c in w)
    rnd = random.Random(15)
    prose = ["Retry the payment session after the token refresh.", "Keys rotate monthly; see the vault.",
             "The API_KEY name is documented, its value is not.", "password reset emails go out at 9"]
    texts = [s.text for s in SHAPES] + LOOK_ALIKES + prose
    texts += ["\n".join(rnd.sample(texts, rnd.randint(2, 6))) for _ in range(200)]
    texts += [t.upper() for t in texts[:40]] + ["", " ", "\u212a\u017f"]
    for redactor in (Redactor(), Redactor([r"ticket-\d{4}"])):
        one_by_one = [redactor.spans(t) for t in texts]
        assert redactor.spans_many(texts) == one_by_one
        for size in (1, 2, 7, 50):
            start = rnd.randrange(len(texts))
            batch = texts[start:start + size]
            assert redactor.spans_many(batch) == one_by_one[start:start + size]
        assert [r.text for r in redactor.redact_many(texts)] == [redactor.redact(t).text for t in texts]
    assert sum(1 for found in one_by_one if found) >= len(SHAPES)


def test_the_hint_prefilter_drops_no_assignment(monkeypatch):
    """`assignments` skips a hint word that no operator follows (after the rest of the name, a quote,
    blanks); over names of every shape, every operator and quoting, the spans are those found with the
    prefilter off."""
    import itertools

    from stele import redact as mod

    names = ["DB_PASSWORD", "db-password", "app.secret.token", "$api_token", "@auth_token", "githubToken",
             "x_pass", "stripe_live_key", "my.pw", "session-cookie", "jwt", "stripe-live", "twilio.main"]
    ops = [":=", "=>", "?=", "||=", "<-", "=", ":", " = ", " : ", ": str = ", "\n: str = ", "\t=\t", " == "]
    quotes = [("", ""), ('"', '"'), ("'", "'"), ("`", "`"), ("[", "]"), ("['", "']")]
    values = ['"s3cr3tValue99xq"', "hunter2x", "'abc123XYZ789qwe456'", "${TOKEN}", "ab12cd34ef56gh78ij90"]
    texts = [f"{lq}{name}{rq}{op}{value} and more" for name, op, (lq, rq), value
             in itertools.product(names, ops, quotes, values)]
    fast = [mod.assignments(t) for t in texts]
    monkeypatch.setattr(mod, "_VIABLE", __import__("re").compile(""))
    assert [mod.assignments(t) for t in texts] == fast
    assert sum(1 for found in fast if found) > 500


@pytest.mark.parametrize("text", [
    'key = "${ path_relative_to_include() }/terraform.tfstate"',  # Terragrunt's remote state key
    'key    = "${path_relative_to_include()}/terraform.tfstate"',
    'secret_key = "%{ if var.prod }prod%{ else }dev%{ endif }/state.json"',
    'password: "{{ .Values.db.password }}/x"',
    'password = "/run/secrets/db_password"',
    'token = "config/tokens.yaml"',
    'api_key = "${var.key_prefix}-${var.env}"',
])
def test_interpolations_and_paths_are_not_secrets(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text,kind", [
    ('api_key = "${var.prefix}a1B2c3D4e5F6g7H8i9J0k1L2"', "secret"),  # a literal beside an expression
    ('secret_key = "keys/prod/a1B2c3D4e5F6g7H8i9J0k1L2m3.pem"', "secret"),  # a random path segment
    ('password = "hunter2hunter2XYZ"', "password"),
])
def test_a_literal_beside_an_interpolation_or_in_a_path_is_still_one(text, kind):
    assert f"[REDACTED:{kind}]" in redact(text).text


# ---- gitleaks' own ways to avoid false positives, as general rules (docs/security.md) -------------

def _draw(alphabet: str, n: int, seed: int) -> str:
    import random

    rnd = random.Random(seed)
    return "".join(rnd.choice(alphabet) for _ in range(n))


_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_HEX = "0123456789abcdef"


def _kept(text: str) -> bool:
    return redact(text).text == text


def test_a_vendor_with_one_credential_format_claims_the_values_under_its_name():
    bot = _draw("0123456789", 9, 1) + ":A" + _draw(_ALNUM + "_-", 34, 2)
    near = _draw("0123456789", 4, 3) + ":A" + _draw(_ALNUM, 30, 4)  # 4 digits: no Telegram token
    assert not _kept(f'telegram_bot_token = "{bot}"') and not _kept(f"TELEGRAM_TOKEN={bot}\\nDEBUG=1")
    assert _kept(f'telegram_api_token = "{near}"')
    assert not _kept(f'bot_token = "{near}"')  # no vendor named: a random value under a secret's name
    meraki = _draw(_HEX, 40, 5)
    assert not _kept(f"MERAKI_API_KEY={meraki}") and _kept(f"meraki_api_key: {meraki[:-1]}F")
    assert _kept("SUMO_ACCESS_KEY: " + _draw(_ALNUM, 9, 6)) and not _kept("SUMO_ACCESS_ID=su" + _draw(_ALNUM, 12, 7))
    # vendors that issue several kinds stay generic: a GitHub client secret is 40 hex digits
    assert not _kept(f"GITHUB_CLIENT_SECRET={_draw(_HEX, 40, 8)}")


def test_token_shapes_need_their_vendors_exact_format_and_a_drawn_part():
    body = "eyJpYXQiOjE3MDAwMDAwMDAsInVybCI6Imh0dHBzOi8vc2VudHJ5LmlvIiwicmVnaW9uX3VybCI6Imh0dHBzOi8vdXMifQ"
    assert not _kept(f"sntrys_{body}_{_draw(_ALNUM, 43, 9)}") and _kept(f"sntrys_{body}_{_draw(_ALNUM, 42, 9)}")
    assert not _kept(f"xoxb-{_draw('0123456789', 11, 10)}-{_draw(_ALNUM, 24, 11)}")
    assert not _kept("SLACK_BOT_TOKEN=xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx")  # Slack's format
    assert _kept("xoxb-abcdef-abcdef") and _kept("xoxb-xoxb-my-bot-token") and _kept("xoxp-1-ACCESSTOKENHERE")
    assert _kept('type="ns12345:AccountReferenceIdentifierTypeValue"')  # an XML type name, not a bot token
    assert not _kept("GR1348941" + _draw(_ALNUM, 20, 12)) and _kept("GR1348941" + "12" * 10)


def test_public_csrf_and_published_values_are_not_credentials():
    value = _draw(_ALNUM, 40, 13)
    assert _kept(f'publicToken = "{value}"') and _kept(f"csrf-token={value}") and _kept(f"xsrf_token: {value}")
    assert not _kept(f'accessToken = "{value}"')
    from tests import gitleaks_corpus

    published = [f["sample"] for f in gitleaks_corpus.load()["false_positives"] if f["rule"] == "gcp-api-key"
                 and f["sample"].startswith("AIza") and "\n" not in f["sample"] and " " not in f["sample"]]
    assert len(published) >= 10 and all(_kept(p) for p in published)
    assert not _kept("AIza" + _draw(_ALNUM + "_-", 35, 14))  # any other Google API key


def test_values_gitleaks_allowlists_as_published_examples_are_kept_whatever_finds_them():
    """The nuget.config reference's example passwords (found by the XML row) and Yarn's public Algolia
    key (found under `apiKey:`): listed by value, so each is only the list being read."""
    from tests import gitleaks_corpus

    fps = gitleaks_corpus.load()["false_positives"]
    nuget = [f["sample"] for f in fps if f["rule"] == "nuget-config-password" and "!" in f["sample"]
             and gitleaks_corpus.classify(f) == "plain"]
    yarn = [f["sample"] for f in fps if f["rule"] == "generic-api-key" and f["sample"].startswith(",apiKey:")]
    assert len(nuget) == 2 and len(yarn) == 1 and all(_kept(s) for s in nuget + yarn)
    assert not _kept('<add key="ClearTextPassword" value="hal+9ooo_da!sZ" />')  # any other password
    assert not _kept(f',apiKey:"{_draw(_HEX, 32, 16)}",')  # any other key
    assert not _kept(f'"apiKey": "{_draw(_HEX, 32, 17)}"')


def test_an_xml_schema_type_name_is_not_a_token():
    assert _kept('telegram_api_token = "token:"clm47162:AgencyIdentificationCodeContentType""')
    assert _kept('auth_token: "clm5ISO4217A:CurrencyCodeContentType"')
    assert not _kept(f'auth_token: "{_draw(_ALNUM, 10, 18)}:AdminType"')  # a drawn prefix
    assert not _kept(f'auth_token: "clm47162:{_draw(_ALNUM, 24, 19)}"')  # a drawn name


def _b64(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode().rstrip("=")


def test_base64_of_json_is_judged_by_what_it_decodes_to():
    """gitleaks' decoding pass: a truncated token's head or a JWT header holds nothing; JSON holding a
    random string or a password is still a secret, and so is every full token."""
    head = _b64('{"signInAddress":"https:')
    assert _kept(f"export OP_SERVICE_ACCOUNT_TOKEN=ops_{head}...")
    assert _kept("access_token = " + _b64('{"alg":"HS256","typ":"JWT"}'))
    full = '{"signInAddress":"https://my.1password.com","secretKey":"' + _draw(_ALNUM, 30, 20) + '"}'
    assert not _kept("OP_TOKEN=ops_" + _b64(full))
    assert not _kept("auth_token = " + _b64('{"password":"hunter2"}'))
    jwt = ".".join([_b64('{"alg":"HS256"}'), _b64('{"sub":"1"}'), _draw(_ALNUM + "_-", 43, 21)])
    assert not _kept(f"session_token = {jwt}")
    assert not _kept("ops_eyJ" + _draw(_ALNUM, 260, 22))  # the 1Password format


def test_redacting_a_token_does_not_load_hashlib():
    """Only a value of a kind with published examples is hashed: hashlib (OpenSSL) costs a hook ~4 ms."""
    import subprocess
    import sys

    token = "ghp_" + _draw(_ALNUM, 36, 15)
    code = ("import sys; from stele.redact import redact; "
            f"assert '[REDACTED' in redact('push with {token} now').text; print('hashlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_hint_words_are_found_where_their_alternation_finds_them():
    """`_hint_spans` stands in for `re.finditer(_hint_pattern(hints), lower)` (not compiled: ~1 ms of a
    hook's process): the same spans, in the same order, for every hint set, on texts built to make the
    alternatives compete (a hint inside another, `pw` before a word character or not, overlaps)."""
    import random
    import re

    from stele.redact import _HINT_WORDS, _hint_pattern, _hint_spans

    pieces = [*_HINT_WORDS, "pw", "pwd", "pw_", "pw-", "pwé", "passw", "tokenkey", "keypass", " ", "_", "-", "=",
              "é", "x", "1", "\n", "sessionid", "secretkey", "authtoken", "passpass"]
    rng = random.Random(34)
    subsets = [_HINT_WORDS, ("pw", "pwd"), ("pass",), tuple(w for w in _HINT_WORDS if w != "pw")]
    subsets += [tuple(rng.sample(_HINT_WORDS, rng.randint(1, 12))) for _ in range(20)]
    texts = ["", "pw", "a pw", "pwd", "my_pw=1", "pw_x", "pwé", "passpwd", "keykey", "api_key=1 token: 2"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 30))).lower() for _ in range(1500)]
    for hints in subsets:
        rx = re.compile(_hint_pattern(hints))
        for text in texts:
            assert _hint_spans(text, hints) == [m.span() for m in rx.finditer(text)], (hints, text)


def test_a_word_character_is_what_re_calls_one():
    """`_hint_spans` tells `pw\\b` by `str.isalnum() or "_"`: the same set as `re`'s `\\w`, code point
    by code point."""
    import re
    import sys

    word = re.compile(r"\w").fullmatch
    assert [c for c in map(chr, range(sys.maxunicode + 1)) if bool(word(c)) != (c.isalnum() or c == "_")] == []


def test_a_run_of_one_letter_is_no_twitter_bearer_token():
    """Base64 of zeros (`AAAA...`, in a pasted image or key blob) has the bearer token's prefix and
    length; a drawn token's tail does not repeat one letter."""
    tail = "x7Kq2M9pZr4TfW8bN1cV5dH3gJ6kL0sQ" * 3
    assert "[REDACTED:Twitter bearer token]" in redact("t " + "A" * 22 + tail[:90]).text
    assert redact("t " + "A" * 120).text == "t " + "A" * 120


def test_an_aws_secret_key_after_its_key_id_is_redacted_and_a_commit_hash_is_not():
    """A downloaded credentials file (`user,,AKIA...,SECRET`) or a pasted pair names the secret key by
    the id before it; a commit hash in the same place is hex, and stays."""
    import hashlib
    import random

    rnd = random.Random(40)
    kid = "AK" + "IA" + "".join(rnd.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    secret = "".join(rnd.choice(_ALNUM + "+/") for _ in range(40))
    for text in (f"User name,Password,Access key ID,Secret access key\ndeploy,,{kid},{secret}",
                 f"creds: {kid} / {secret}"):
        result = redact(text)
        assert secret not in result.text and result.found == {"AWS access key id": 1, "AWS secret access key": 1}
    sha = hashlib.sha1(b"deploy").hexdigest()
    assert redact(f"{kid} was revoked in {sha}").text == f"[REDACTED:AWS access key id] was revoked in {sha}"


def test_redact_lines_keeps_every_line_number_and_no_piece_of_a_secret():
    import base64
    import random

    rng = random.Random(3)
    key = ["-----BEGIN " + "EC PRIVATE KEY-----", *(base64.b64encode(rng.randbytes(48)).decode() for _ in range(6)),
           "-----END " + "EC PRIVATE KEY-----"]
    text = "a = 1\nKEY = '''" + "\n".join(key) + "'''\nb = 2\n"
    out = Redactor().redact_lines(text)
    assert out.count("\n") == text.count("\n")
    lines = out.split("\n")
    assert lines[1] == "KEY = '''[REDACTED:private key]" and lines[2:8] == [""] * 6 and lines[8] == "'''"
    assert lines[0] == "a = 1" and lines[9] == "b = 2"
    assert Redactor().redact_lines("nothing here\n") == "nothing here\n"
