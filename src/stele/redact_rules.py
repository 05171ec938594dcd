"""The token shapes `redact` knows, as data: one row per shape a vendor issues.

Rows are kept apart from the engine so a reviewer can read the catalog as a list and compare it with
the public gitleaks rule set (config/gitleaks.toml), which it covers for every family named in
docs/security.md. Each row carries the literal keywords its pattern cannot match without (lower case);
the engine runs a row only when one of them occurs in the text, and compiles it on first use, so a
prompt with no token in it costs a few substring checks and compiles nothing. Keyword-in-context
rules (`DB_PASSWORD=...`, `twilio_auth = "..."`) are not rows: their value needs the value-shape check
that lives in `redact.py`.
"""
from __future__ import annotations

from .plain import dataclass

BOUNDARY = "A-Za-z0-9_-"
_B = r"(?<![A-Za-z0-9_-])"  # left boundary: not inside a longer token
_E = r"(?![A-Za-z0-9_-])"


@dataclass(frozen=True)
class Shape:
    kind: str                    # what the writer is told ("GitHub token"), never the value
    keywords: tuple[str, ...]    # lower-case literals; the pattern runs only if one is in the text
    pattern: str                 # the secret is group "s" when present, else the whole match
    check: str = ""              # name of a value check in redact.py ("random", "basic", "aws_id")
    left: str = ""               # a character class that must not precede the match
    entropy: float = 0.0         # least Shannon entropy (bits a character) of the secret: a typed
                                 # repetition (`GR1348941` + `123123...`) has the prefix, not the draw


def _p(kind: str, keywords: str, pattern: str, check: str = "", left: str = "", entropy: float = 0.0) -> Shape:
    # A leading lookbehind makes `re` try every position of the text (10x slower than a pattern
    # that starts with its literal prefix), so the left boundary is checked by the engine instead.
    if pattern.startswith(_B):
        pattern, left = pattern[len(_B):], BOUNDARY
    elif pattern.startswith("(?i)" + _B):
        pattern, left = "(?i)" + pattern[len(_B) + 4:], BOUNDARY
    return Shape(kind, tuple(keywords.split()), pattern, check, left, entropy)


# At most four words between a name and its value, each after a few separators (blanks, quotes, `:`,
# `=`, `,`, `|`, `/`, brackets): word and separator characters are disjoint, so the match cannot
# backtrack far. The value's own left boundary is the separator before it.
_FEW_WORDS = r"(?:[\s\"'`:=>,|/()\[\]*-]{1,8}[\w.]{1,30}){0,4}?[\s\"'`:=>,|/()\[\]*-]{1,8}"

PEM_BEGIN = r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"
# a key body: base64 lines, PEM headers (Proc-Type, DEK-Info) and JSON-escaped newlines (`\n`)
_PEM_BODY = r"(?:[ \t\r\n]*(?:[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9+/]{1,15}={1,2}|[A-Za-z-]+: [^\n]*|\\n|\\r))+"

SHAPES: tuple[Shape, ...] = (
    # A body (a run of base64) must follow: "-----BEGIN RSA PRIVATE KEY----- ... -----END" in prose
    # survives. A truncated block loses what follows the header up to the end of its base64.
    _p("private key", "private", PEM_BEGIN + r"(?=[\s\S]{0,400}?[A-Za-z0-9+/]{20})"
       r"(?:[\s\S]{0,65536}?" + _PEM_END + "|" + _PEM_BODY + ")"),
    _p("private key", "putty-user-key-file", r"PuTTY-User-Key-File-\d: [\s\S]{0,200}?Private-Lines: \d+"
       r"(?:\r?\n[A-Za-z0-9+/=]+)+"),
    _p("GitHub token", "ghp_ gho_ ghu_ ghs_ ghr_", _B + r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E),
    _p("GitHub token", "github_pat_", _B + r"github_pat_[A-Za-z0-9_]{22,255}" + _E),
    _p("GitLab token", "glpat- gldt- glrt- glsoat- glffct- glft- glimt- glagent- gloas- glcbt- glptt-",
       _B + r"gl(?:pat|dt|rt|soat|ffct|ft|imt|agent|oas|cbt|ptt)-[0-9A-Za-z_-]{20,300}(?:\.[0-9a-z]{9})?" + _E),
    _p("GitLab token", "gr1348941", _B + r"GR1348941[A-Za-z0-9_-]{20,}" + _E, entropy=3.0),
    _p("GitLab token", "_gitlab_session=", r"_gitlab_session=(?P<s>[0-9a-z]{32})"),
    _p("AWS access key id", "a3t akia asia abia acca",
       r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])", "aws_id", "A-Za-z0-9"),
    _p("AWS secret access key", "secret",
       r"(?i)secret_?(?:access_?)?key[\"']?\s*(?:[:=]|=>)\s*[\"']?(?P<s>[A-Za-z0-9/+=]{40})"
       r"(?![A-Za-z0-9/+=])", "aws_id"),
    # ...and in prose or a table, a few words after a word naming a secret ("with secret K", "secret key
    # is K", `aws configure set aws_secret_access_key K`, "Secret Access Key [None]: K") or after the
    # access key id it pairs with (`AKIA...,K` in a credentials CSV, `AKIA.../K`). Only the value's
    # shape is evidence here, so `aws_secret` asks for a draw, never a commit hash or an identifier.
    _p("AWS secret access key", "secret", r"(?i)secret[\w-]*" + _FEW_WORDS + r"(?P<s>[A-Za-z0-9/+]{40})"
       r"(?![A-Za-z0-9/+=_-])", "aws_secret"),
    _p("AWS secret access key", "a3t akia asia abia acca", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"
       + _FEW_WORDS + r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=_-])", "aws_secret", "A-Za-z0-9"),
    _p("AWS Bedrock API key", "absk bedrock-api-key-",
       _B + r"(?:ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%]*)"),
    # the full format (93 characters, then `AA`) is a key even when typed as a written-out alphabet
    _p("Anthropic API key", "sk-ant-", _B + r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{93}AA" + _E, "exact"),
    _p("Anthropic API key", "sk-ant-", _B + r"sk-ant-(?:api|admin|sid|oat|ort)\d\d-[A-Za-z0-9_-]{20,}" + _E),
    _p("OpenAI API key", "sk-", _B + r"sk-(?:proj-|svcacct-|admin-|None-)?(?!ant-)[A-Za-z0-9_-]{20,}" + _E,
       "random"),
    _p("OpenAI API key", "t3blbkfj", _B + r"[A-Za-z0-9_-]{10,}T3BlbkFJ[A-Za-z0-9_-]{10,}" + _E),
    _p("Groq API key", "gsk_", _B + r"gsk_[A-Za-z0-9]{40,60}" + _E),
    _p("Perplexity API key", "pplx-", _B + r"pplx-[A-Za-z0-9]{40,60}" + _E),
    _p("xAI API key", "xai-", _B + r"xai-[A-Za-z0-9]{60,100}" + _E),
    _p("Replicate API token", "r8_", _B + r"r8_[A-Za-z0-9]{37,40}" + _E),
    _p("Hugging Face token", "hf_ api_org_", _B + r"(?:hf|api_org)_[A-Za-z0-9]{30,40}" + _E, "random"),
    _p("Stripe key", "sk_ rk_", _B + r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,247}" + _E),
    _p("Stripe webhook secret", "whsec_", _B + r"whsec_[A-Za-z0-9+/=]{24,}" + _E),
    # Slack's own bot and user token formats are tokens however their tail is typed ("exact")...
    _p("Slack token", "xoxb- xoxp- xoxe-", _B + r"(?:xoxb-\d{10,13}-\d{10,13}(?:-[A-Za-z0-9]+)?"
       r"|xox[pe](?:-\d{10,13}){3}-[A-Za-z0-9-]{28,34})" + _E, "exact"),
    # ...other shapes need a drawn part: not `xoxb-abcdef-abcdef`, `xoxb-my-bot-token`, `xoxp-1-TOKEN_HERE`
    _p("Slack token", "xox", _B + r"xox[abposre]-(?:\d-)?[A-Za-z0-9-]{10,}" + _E, "random"),
    _p("Slack token", "xoxe.", _B + r"xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}" + _E),
    _p("Slack token", "xapp-", _B + r"xapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+" + _E),
    _p("Slack webhook", "hooks.slack.com",
       r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_-]{20,})"),
    _p("Discord bot token", ".", _B + r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,
       "random"),
    _p("Discord webhook", "discord", r"discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_-]{30,})"),
    # "random": `clm18821:AgencyIdentificationCodeContentType` (an XML type name) has the shape, not a draw
    _p("Telegram bot token", ":a", r"\d{5,16}:A[A-Za-z0-9_-]{34}" + _E, "random", "0-9:"),
    _p("Microsoft Teams webhook", "webhook.office.com",
       r"webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/_-]{40,})"),
    _p("Google API key", "aiza", _B + r"AIza[0-9A-Za-z_-]{35}" + _E),
    _p("Google OAuth secret", "gocspx-", _B + r"GOCSPX-[A-Za-z0-9_-]{24,32}" + _E),
    _p("Google OAuth token", "ya29.", _B + r"ya29\.[0-9A-Za-z_-]{30,}" + _E),
    _p("npm token", "npm_", _B + r"npm_[A-Za-z0-9]{36}" + _E),
    _p("PyPI token", "pypi-age", _B + r"pypi-AgE[A-Za-z0-9_-]{50,1000}" + _E),
    _p("RubyGems token", "rubygems_", _B + r"rubygems_[a-f0-9]{48}" + _E),
    _p("NuGet API key", "oy2", _B + r"oy2[a-z0-9]{43}" + _E, "random"),
    _p("Clojars token", "clojars_", r"(?i)" + _B + r"CLOJARS_[a-z0-9]{60}" + _E),
    _p("Docker Hub token", "dckr_pat_", _B + r"dckr_pat_[A-Za-z0-9_-]{27,}" + _E),
    _p("JSON web token", "eyj", _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*" + _E),
    _p("JSON web token", "zxlk", _B + r"ZXlK[A-Za-z0-9+/]{40,}={0,2}" + _E),
    _p("SendGrid API key", "sg.", _B + r"SG\.[A-Za-z0-9_=-]{16,32}\.[A-Za-z0-9_=-]{16,64}" + _E),
    _p("Sendinblue API key", "xkeysib-", _B + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _E),
    _p("Mailgun API key", "key-", _B + r"key-[a-f0-9]{32}" + _E),
    _p("Mailgun API key", "pubkey-", _B + r"pubkey-[a-f0-9]{32}" + _E),
    _p("Mailgun signing key", "mailgun", _B + r"[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}" + _E),
    _p("Mailchimp API key", "-us", _B + r"[0-9a-f]{32}-us\d{1,2}" + _E),
    _p("Twilio API key", "sk", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", "", "A-Za-z0-9"),
    _p("DigitalOcean token", "do_v1_ dop_v1_ doo_v1_ dor_v1_", r"(?i)" + _B + r"do[opr]_v1_[a-f0-9]{64}" + _E),
    _p("Heroku API key", "hrku-", _B + r"HRKU-[A-Za-z0-9_-]{60}" + _E),
    _p("Vault token", "hvs. hvb. hvr.", _B + r"hv[sbr]\.[A-Za-z0-9_-]{24,300}" + _E),
    _p("Vault token", "s.", r"s\.[A-Za-z0-9]{24}(?![\w.-])", "random", r"\w.-"),
    _p("age secret key", "age-secret-key-1", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _p("Shopify token", "shpat_ shpca_ shppa_ shpss_", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E),
    _p("Atlassian API token", "atatt3", _B + r"ATATT3[A-Za-z0-9_=-]{100,}" + _E),
    _p("Linear API key", "lin_api_", _B + r"lin_api_[A-Za-z0-9]{40}" + _E),
    _p("Notion token", "ntn_ secret_", _B + r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _E),
    _p("Postman API key", "pmak-", _B + r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _E),
    # an org token: `sntrys_`, base64 of its JSON claims, `_`, then a 43-character secret
    _p("Sentry token", "sntrys_ sntryu_",
       _B + r"(?:sntrys_eyJ[A-Za-z0-9+/=]{40,}_[A-Za-z0-9+/]{43}|sntryu_[a-f0-9]{64})" + _E),
    _p("Databricks token", "dapi", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    _p("Doppler token", "dp.", _B + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}" + _E),
    _p("Pulumi token", "pul-", _B + r"pul-[a-f0-9]{40}" + _E),
    _p("Grafana token", "glc_ glsa_ eyjrijoi",
       _B + r"(?:glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})"
       + _E),
    _p("Fly.io token", "fo1_ fm1 fm2_", _B + r"(?:fo1_[\w-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}"
       r"|fm2_[A-Za-z0-9+/]{100,}={0,3})"),
    _p("PlanetScale token", "pscale_", _B + r"pscale_(?:tkn|pw|oauth)_[\w=.-]{32,64}" + _E),
    _p("Terraform Cloud token", ".atlasv1.", _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}" + _E),
    _p("New Relic key", "nrak- nrjs- nrii-", _B + r"(?:NRAK-[A-Z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9-]{32})"
       + _E),
    _p("Dynatrace token", "dt0c01.", _B + r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}" + _E),
    _p("Square token", "sq0atp- sq0csp- eaaa", _B + r"(?:sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_-]{60})"
       + _E),
    _p("Azure AD client secret", "q~", r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"
       r"(?![A-Za-z0-9_~.-])"),
    _p("Azure storage key", "accountkey=", r"(?i)AccountKey=(?P<s>[A-Za-z0-9+/]{40,100}={0,2})"),
    _p("Azure SAS signature", "sig=", r"[?&]sig=(?P<s>[A-Za-z0-9%+/=]{30,})", "random"),
    _p("Facebook token", "eaac eaam", _B + r"EAA[MC][A-Za-z0-9]{100,}" + _E),
    _p("Twitter bearer token", "aaaaaaaaaaaaaaaaaaaaaa", r"A{22}[A-Za-z0-9%]{80,100}" + _E, entropy=3.0),  # not base64 zeros
    _p("Alibaba access key id", "ltai", _B + r"LTAI[A-Za-z0-9]{20}" + _E),
    _p("Tailscale key", "tskey-", _B + r"tskey-(?:[a-z]+-)?[A-Za-z0-9]{10,}-[A-Za-z0-9]{20,}" + _E),
    _p("Supabase token", "sbp_", _B + r"sbp_[a-f0-9]{40}" + _E),
    _p("Buildkite token", "bkua_", _B + r"bkua_[a-f0-9]{40}" + _E),
    _p("Figma token", "figd_", _B + r"figd_[A-Za-z0-9_-]{40}" + _E),
    _p("Sourcegraph token", "sgp_", _B + r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}" + _E),
    _p("Typeform token", "tfp_", _B + r"tfp_[A-Za-z0-9_.=-]{59}" + _E),
    _p("Prefect token", "pnu_", _B + r"pnu_[A-Za-z0-9]{36}" + _E),
    _p("ReadMe token", "rdme_", _B + r"rdme_[a-z0-9]{70}" + _E),
    _p("Scalingo token", "tk-us-", _B + r"tk-us-[\w-]{48}" + _E),
    _p("Infracost token", "ico-", r"ico-[A-Za-z0-9]{32}" + _E, left="." + BOUNDARY),  # not `video.ico-<hash>.png`
    _p("Octopus Deploy key", "api-", _B + r"API-[A-Z0-9]{26}" + _E),
    _p("OpenShift token", "sha256~", _B + r"sha256~[\w-]{43}" + _E),
    _p("Mapbox token", "sk.eyj", _B + r"sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}" + _E),
    _p("Dropbox token", "sl.", _B + r"sl\.[A-Za-z0-9_=-]{130,}" + _E),
    _p("Duffel token", "duffel_", _B + r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}" + _E),
    _p("EasyPost key", "ezak eztk", _B + r"EZ[AT]K[A-Za-z0-9]{54}" + _E),
    _p("Flutterwave key", "flwseck flwpubk", _B + r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,32}(?:-X)?" + _E),
    _p("Harness token", "pat. sat.", _B + r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}" + _E),
    _p("Shippo token", "shippo_", _B + r"shippo_(?:live|test)_[a-fA-F0-9]{40}" + _E),
    _p("SettleMint token", "sm_", _B + r"sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}" + _E),
    _p("Artifactory key", "akcp cmvmd", _B + r"(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})" + _E),
    _p("Frame.io token", "fio-u-", _B + r"fio-u-[A-Za-z0-9_=-]{64}" + _E),
    _p("1Password token", "ops_ey a3-", _B + r"(?:ops_eyJ[A-Za-z0-9+/]{250,}={0,3}|A3-[A-Z0-9]{6}-"
       r"(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})" + _E),
    _p("Cloudflare origin CA key", "v1.0-", _B + r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}" + _E),
    _p("Adafruit key", "aio_", _B + r"aio_[A-Za-z0-9]{28}" + _E),
    _p("Airtable token", "pat", _B + r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _E),
    _p("Adobe client secret", "p8e-", _B + r"p8e-[A-Za-z0-9]{32}" + _E),
    _p("ClickHouse key", "4b1d", _B + r"4b1d[A-Za-z0-9]{38}" + _E),
    _p("Defined Networking key", "dnkey-", _B + r"dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}" + _E),
    _p("Intra42 secret", "s-s4t2", _B + r"s-s4t2(?:ud|af)-[a-fA-F0-9]{64}" + _E),
    _p("MaxMind license key", "_mmk", _B + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + _E),
    _p("Authress key", ".acc", _B + r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-]"
       r"[A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}" + _E),
    _p("Yandex key", "aqvn t1.", _B + r"(?:AQVN[A-Za-z0-9_-]{35,38}|t1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2})"
       + _E),
    _p("Plaid token", "access-sandbox- access-development- access-production-",
       _B + r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
       + _E),
    _p("Facebook token", "|", _B + r"\d{15,16}\|[0-9A-Za-z_-]{27}" + _E),
    # Credentials outside assignments
    _p("password in URL", "://", r"://[^\s:/@'\"<>]*:(?P<s>[^\s@/'\"<>]{3,})@", "ref"),
    _p("authorization header", "authorization",
       r"(?i)authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest|negotiate|"
       r"api-?key|api-?token|sso-key|splunk)\s+)?(?P<s>[A-Za-z0-9._~+/=-]{8,}(?::[A-Za-z0-9._~+/=-]+)?)", "ref"),
    _p("bearer token", "bearer", r"(?i)" + _B + r"bearer\s+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)", "random"),
    _p("basic auth credentials", "basic", r"(?i)" + _B + r"basic\s+(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
       "basic"),
    # `-u user:password`, `-u "key:"`, `--user "id":"secret"`, also after a `\` line continuation
    _p("password on a command line", "curl", r"curl\b[\s\S]{0,400}?\s(?:-u|--user)(?:=|\s+)"
       r"(?P<s>(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"':]+)(?::(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']*))?)", "curl_user"),
    _p("password on a command line", "--pass --token --secret --api-key --apikey --auth",
       r"(?i)--(?:[a-z]+-)*(?:password|passwd|pass|token|secret|api-?key|auth-token)(?:=|\s+)"
       r"[\"']?(?P<s>[^\s\"']{4,})", "ref", r"\w-"),
    _p("password on a command line", "sshpass", r"sshpass\s+-p\s*[\"']?(?P<s>[^\s\"']{3,})", "ref"),
    _p("password on a command line", "mysql", r"mysql(?:dump|admin)?\b[^\n]{0,200}?\s-p(?P<s>[^\s\"'-][^\s\"']{2,})",
       "ref"),
    _p("password in XML", "password secret token apikey",
       r"(?i)<(?P<tag>[\w:-]*(?:password|passwd|secret|token|apikey|api_key)s?)>(?P<s>[^<\n]{4,})</(?P=tag)>",
       "ref"),
    _p("password in XML", "<add key=", r"(?i)<add\s+key=\"(?:ClearText)?Password\"\s+value=\"(?P<s>[^\"]{4,})\""),
)

# Values published on purpose, which redacting protects nothing (as the documented AWS example keys),
# each listed by gitleaks' own allowlists (config/gitleaks.toml at b58d3f1): the Google API keys in
# Firebase's public Android SDK repository (`gcp-api-key`), the two example passwords of Microsoft's
# nuget.config reference (`nuget-config-password`), and the public Algolia search key in Yarn's
# source (a `generic-api-key` stopword, yarnpkg/berry#6201). Kept by length as the first 32 hex
# digits of each value's sha256, so the source holds no key-shaped literal; the engine hashes a
# found value only when its length is listed here (hashlib costs the hook ~4 ms to import: only then).
PUBLISHED: dict[int, frozenset[str]] = {
    39: frozenset({  # Google API keys (Firebase Android SDK)
        "d2460eb704ec163515ef7e0ecd373549",
        "2037abcaffb2b77785da716cf7ccff4f",
        "3f370c9dd8225c63b5c77de1f785edc9",
        "e4a5542bb7fd7b67e943c71ad29c34b5",
        "a19f89ab3555eac10c40741f6df79ecf",
        "0b476bdf9acf2123d547b5ae76f1e598",
        "eb540d2b6ee2a0a47c5779bc8a014178",
        "37f8f09bdf12c2f2eae4ead7273a62dd",
        "8731261cb72d86267a32a532ebd3df42",
        "49f777db995e8260da7ca9ffdf0c08d6",
        "27a9a42931dff7eb2f8434e20a9bce97",
        "dc0fcf046c61640cbd1e8b999ada3262",
        "4c98242dcadc8b29005c6b4aad526552",
        "ea9bb1082cf95663f5faca23b8b15ef2",
        "3a8b61d0f636b007840c0d40ba12bcf4",
        "a6c814bc555ae62c7bd8b58ec07bf559",
    }),
    11: frozenset({"dba72c00f41f4e4c435e2491a5e1ce01"}),  # nuget.config reference, ClearTextPassword
    14: frozenset({"a0702bc91d699f600970f4dc4992b13e"}),  # nuget.config reference, ClearTextPassword
    32: frozenset({"2f21fd9c81678e396751af8b2472e2bd"}),  # Yarn's public Algolia search key
}
# Vendors that issue exactly one credential, of one format: a value assigned under their name that
# does not have it is not theirs (gitleaks' keyword proximity: the vendor's name claims the
# assignment for the vendor's rule). Not GitHub, Slack, Google, AWS...: each issues several kinds
# (`GITHUB_CLIENT_SECRET` is 40 hex digits, `SLACK_SIGNING_SECRET` 32), and those stay generic.
ONE_FORMAT = {
    "Telegram": r"\d{5,16}:A[A-Za-z0-9_-]{34}",  # a bot token (the MTProto pair is `api_id`/`api_hash`)
    "Cisco Meraki": r"[0-9a-f]{40}",               # the Dashboard API key
    "Sumo Logic": r"su[A-Za-z0-9]{12}|[A-Za-z0-9]{64}",  # an access id and its access key
}

# Words that make an assigned name secret-bearing, by how sure they are. A password-ish name
# redacts any value that is not a reference; the other names redact only random-looking values.
PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "pw", "passcode",
                            "dbpass", "pword", "pgpassword", "mysqlpwd"})
SECRET_WORDS = frozenset({"secret", "token", "apikey", "secretkey", "privatekey", "credential",
                          "credentials", "creds", "authtoken", "accesstoken", "auth", "dsn", "salt",
                          "signature", "sig", "cookie", "session", "sessionid", "jwt", "bearer", "pat",
                          "accesskey", "clientsecret", "secretaccesskey", "apitoken", "license"})
KEY_QUALIFIERS = frozenset({"api", "secret", "private", "access", "app", "auth", "master", "signing",
                            "encryption", "account", "client", "license", "service", "admin", "write",
                            "read", "rest", "server", "consumer", "partner", "deploy", "webhook", "sdk",
                            "application", "subscription", "storage", "shared", "hmac", "jwt", "session",
                            "crypt", "cipher", "aes", "mac", "user", "personal", "root", "integration",
                            "live", "prod", "production", "test", "sandbox", "publishable", "management"})
# Vendors whose name anywhere in an assigned name makes a random-looking value a credential
# (gitleaks' keyword-in-context rules: `discord_bot = "..."`, `datadog_app = "..."`).
VENDORS = {
    "adafruit": "Adafruit", "adobe": "Adobe", "airtable": "Airtable", "algolia": "Algolia",
    "alibaba": "Alibaba", "anthropic": "Anthropic", "artifactory": "Artifactory", "asana": "Asana",
    "atlassian": "Atlassian", "jira": "Atlassian", "beamer": "Beamer", "bitbucket": "Bitbucket",
    "bittrex": "Bittrex", "meraki": "Cisco Meraki", "cloudflare": "Cloudflare", "codecov": "Codecov",
    "cohere": "Cohere", "coinbase": "Coinbase", "confluent": "Confluent", "contentful": "Contentful",
    "datadog": "Datadog", "dd": "Datadog", "discord": "Discord", "droneci": "Drone CI", "dropbox": "Dropbox",
    "etsy": "Etsy", "facebook": "Facebook", "fastly": "Fastly", "finicity": "Finicity", "finnhub": "Finnhub",
    "flickr": "Flickr", "freshbooks": "FreshBooks", "gitter": "Gitter", "gocardless": "GoCardless",
    "heroku": "Heroku", "hubspot": "HubSpot", "intercom": "Intercom", "jfrog": "JFrog", "bintray": "JFrog",
    "kraken": "Kraken", "kucoin": "KuCoin", "launchdarkly": "LaunchDarkly", "linear": "Linear",
    "linkedin": "LinkedIn", "lob": "Lob", "looker": "Looker", "mailchimp": "Mailchimp", "mailgun": "Mailgun",
    "mapbox": "Mapbox", "mattermost": "Mattermost", "messagebird": "MessageBird", "mistral": "Mistral",
    "netlify": "Netlify", "newrelic": "New Relic", "nytimes": "NYTimes", "okta": "Okta", "openai": "OpenAI",
    "plaid": "Plaid", "privateai": "Private AI", "rapidapi": "RapidAPI", "sendbird": "Sendbird",
    "sendgrid": "SendGrid", "sentry": "Sentry", "sidekiq": "Sidekiq", "contribsys": "Sidekiq",
    "slack": "Slack", "snyk": "Snyk", "sonar": "Sonar", "sourcegraph": "Sourcegraph", "squarespace": "Squarespace", "stripe": "Stripe",
    "sumo": "Sumo Logic", "sumologic": "Sumo Logic", "telegram": "Telegram", "travis": "Travis CI", "twilio": "Twilio",
    "twitch": "Twitch", "twitter": "Twitter", "typeform": "Typeform", "vault": "Vault", "yandex": "Yandex",
    "zendesk": "Zendesk", "github": "GitHub", "gitlab": "GitLab", "aws": "AWS", "azure": "Azure",
    "gcp": "Google", "google": "Google", "huggingface": "Hugging Face", "hf": "Hugging Face",
    "digitalocean": "DigitalOcean", "do": "DigitalOcean", "npm": "npm", "pypi": "PyPI", "django": "Django",
}
