"""The secret corpus: realistic fake tokens made at run time, and look-alikes that must survive.

No value here is a real credential, and no literal in this file has a token's full shape (prefixes are
assembled, bodies are drawn from a seeded generator), so secret scanners and push protection have
nothing to flag. Each shape is written in the context a user would paste it in (an .env line, a YAML
key, a curl command, a JSON object), and lists the raw values that must never be found on disk.
Used by tests/test_redact.py, the end-to-end write-path test and bench/redaction.py.
"""
from __future__ import annotations

import base64
import hashlib
import random
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


@dataclass(frozen=True)
class Shape:
    family: str
    name: str
    text: str                  # the line as a user would write it
    secrets: tuple[str, ...]   # raw values that must not survive anywhere


def _j(*parts: str) -> str:
    return "".join(parts)


def shapes(seed: int = 16) -> list[Shape]:
    rnd = random.Random(seed)

    def r(alphabet: str, n: int) -> str:
        # mix classes the way issued tokens do, so a draw is never a plain word or a plain number
        mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
        while True:
            s = "".join(rnd.choice(alphabet) for _ in range(n))
            if not mixed or n < 8 or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
                return s

    out: list[Shape] = []

    def add(family: str, name: str, text: str, *secrets: str) -> None:
        out.append(Shape(family, name, text, secrets))

    # private keys
    body = "\n".join(r(B64, 64) for _ in range(6))
    for label in ("RSA ", "EC ", "DSA ", "OPENSSH ", "", "ENCRYPTED "):
        add("private key", f"pem {label or 'pkcs8 '}".strip(),
            _j("-----BEGIN ", label, "PRIVATE KEY-----\n", body, "\n-----END ", label, "PRIVATE KEY-----"),
            body.split("\n")[0], body.split("\n")[-1])
    pgp = r(B64, 64)
    add("private key", "pgp block", _j("-----BEGIN PGP PRIVATE ", "KEY BLOCK-----\n\n", pgp, "\n=", r(B64, 4),
                                       "\n-----END PGP PRIVATE KEY BLOCK-----"), pgp)
    esc = r(B64, 64)
    add("private key", "pem in json", _j('{"type": "service_account", "private_key": "-----BEGIN PRIVATE ',
                                         'KEY-----\\n', esc, '\\n-----END PRIVATE KEY-----\\n"}'), esc)
    trunc = r(B64, 64)
    add("private key", "pem truncated", _j("-----BEGIN RSA PRIVATE ", "KEY-----\n", trunc), trunc)
    # GitHub
    for p in ("ghp", "gho", "ghu", "ghs", "ghr"):
        t = _j(p, "_", r(ALNUM, 36))
        add("GitHub", p, f"export GITHUB_TOKEN={t}", t)
    t = _j("github", "_pat_", r(ALNUM, 22), "_", r(ALNUM, 59))
    add("GitHub", "fine-grained pat", f"git clone https://{t}@github.com/acme/shop.git", t)
    # GitLab
    for p in ("glpat-", "gldt-", "glrt-", "glptt-"):
        t = _j(p, r(URLSAFE.replace("-", ""), 20 if p != "glptt-" else 40))
        add("GitLab", p.rstrip("-"), f"CI_TOKEN: {t}", t)
    # AWS
    kid = _j("AK", "IA", r(UPPER_ALNUM, 16))
    sk = r(B64, 40)
    add("AWS", "access key id", f"aws_access_key_id = {kid}", kid)
    add("AWS", "secret access key", f"aws_secret_access_key = {sk}", sk)
    sid = _j("AS", "IA", r(UPPER_ALNUM, 16))
    add("AWS", "session key id", f"the temporary key {sid} expired at noon", sid)
    # OpenAI, Anthropic and other model vendors
    t = _j("sk-", "proj-", r(URLSAFE, 58), "T3Blbk", "FJ", r(URLSAFE, 58))
    add("OpenAI", "project key", f"OPENAI_API_KEY={t}", t)
    t = _j("sk-", r(ALNUM, 48))
    add("OpenAI", "legacy key", f"openai.api_key = '{t}'", t)
    t = _j("sk-", "ant-", "api03-", r(URLSAFE, 93), "AA")
    add("Anthropic", "api key", f'client = Anthropic(api_key="{t}")', t)
    t = _j("gs", "k_", r(ALNUM, 52))
    add("Groq", "api key", f"GROQ_API_KEY={t}", t)
    t = _j("hf", "_", r(string.ascii_letters, 34))
    add("Hugging Face", "user token", f"huggingface-cli login --token {t}", t)
    t = _j("api", "_org_", r(string.ascii_letters, 34))
    add("Hugging Face", "org token", f"HF_ORG={t}", t)
    # Stripe
    for p in ("sk_live_", "rk_test_"):
        t = _j(p[:3], p[3:], r(ALNUM, 24))
        add("Stripe", p.rstrip("_"), f"stripe.api_key = \"{t}\"", t)
    t = _j("wh", "sec_", r(ALNUM, 32))
    add("Stripe", "webhook secret", f"STRIPE_WEBHOOK={t}", t)
    # Slack
    t = _j("xo", "xb-", r(string.digits, 12), "-", r(string.digits, 13), "-", r(ALNUM, 24))
    add("Slack", "bot token", f"SLACK_BOT={t}", t)
    t = _j("xo", "xp-", r(string.digits, 12), "-", r(string.digits, 12), "-", r(string.digits, 12), "-", r(HEX, 32))
    add("Slack", "user token", f"slack user token {t}", t)
    t = _j("xa", "pp-1-", r(UPPER_ALNUM, 11), "-", r(string.digits, 13), "-", r(HEX, 64))
    add("Slack", "app token", f"app-level token: {t}", t)
    h = _j("T", r(UPPER_ALNUM, 8), "/B", r(UPPER_ALNUM, 8), "/", r(ALNUM, 24))
    add("Slack", "webhook", f"curl -X POST https://hooks.slack.com/services/{h}", h)
    # Google
    t = _j("AI", "za", r(URLSAFE, 35))
    add("Google", "api key", f'"apiKey": "{t}"', t)
    t = _j("GOC", "SPX-", r(URLSAFE, 28))
    add("Google", "oauth client secret", f"client secret {t}", t)
    t = _j("ya", "29.", r(URLSAFE, 120))
    add("Google", "oauth access token", f"access token {t}", t)
    # npm, PyPI, RubyGems, NuGet, Docker Hub
    t = _j("np", "m_", r(ALNUM, 36))
    add("npm", "token", f"//registry.npmjs.org/:_authToken={t}", t)
    t = _j("pypi-", "AgEIcHlwaS5vcmc", r(URLSAFE, 120))
    add("PyPI", "upload token", f"[pypi]\nusername = __token__\npassword = {t}", t)
    t = _j("ruby", "gems_", r(HEX, 48))
    add("RubyGems", "api key", f"GEM_HOST_API_KEY: {t}", t)
    t = _j("dckr", "_pat_", r(URLSAFE, 27))
    add("Docker Hub", "pat", f"docker login -u acme -p {t}", t)
    # JWT, bearer, basic
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    payload = base64.urlsafe_b64encode(f'{{"sub":"{r(string.digits, 10)}","name":"ops"}}'.encode()).decode().rstrip("=")
    sig = r(URLSAFE, 43)
    add("JWT", "jwt", f"session cookie {header}.{payload}.{sig}", payload, sig)
    t = r(ALNUM, 40)
    add("bearer", "authorization bearer", f"Authorization: Bearer {t}", t)
    t = r(ALNUM + "._-", 48)
    add("bearer", "curl header", f"curl -H 'Authorization: Token {t}' https://api.acme.test/v1", t)
    cred = base64.b64encode(f"deploy:{r(ALNUM, 16)}".encode()).decode()
    add("basic auth", "authorization basic", f"Authorization: Basic {cred}", cred)
    add("basic auth", "basic in prose", f"the proxy wants basic {cred} on every call", cred)
    # passwords in URLs and on command lines
    pw = r(ALNUM, 14)
    add("password in URL", "postgres", f"DATABASE_URL=postgres://app:{pw}@db.internal:5432/shop", pw)
    pw = r(ALNUM, 12)
    add("password in URL", "redis", f"redis://:{pw}@cache:6379/0", pw)
    pw = r(ALNUM, 12)
    add("curl", "curl -u", f"curl -u admin:{pw} https://ci.acme.test/api/json", pw)
    pw = r(ALNUM, 12)
    add("curl", "curl --user", f'curl --user "deploy:{pw}" https://artifacts.acme.test', pw)
    pw = r(ALNUM, 12)
    add("command line", "--password", f"psql --password={pw} -h db", pw)
    # keyword assignments
    pw = r(ALNUM, 12)
    add("assignment", "env DB_PASSWORD", f"DB_PASSWORD={pw}", pw)
    pw = r(ALNUM + "!@#%^&*", 14)
    add("assignment", "python DB_PASSWORD", f"DB_PASSWORD = '{pw}'", pw)
    pw = r(ALNUM, 16)
    add("assignment", "yaml password", f"database:\n  password: {pw}\n  host: db", pw)
    pw = r(ALNUM, 16)
    add("assignment", "json password", f'{{"user": "app", "password": "{pw}"}}', pw)
    pw = r(ALNUM, 16)
    add("assignment", "toml secret", f'[server]\nsecret = "{pw}"', pw)
    dj = _j("django-insecure-", r(LOWER_ALNUM + "!@#$%^&*(-_=+)", 50))
    add("Django", "secret key", f"SECRET_KEY = '{dj}'", dj[16:])
    t = r(ALNUM, 32)
    add("assignment", "go api key", f'const apiKey := "{t}"', t)
    t = r(ALNUM, 32)
    add("assignment", "ts annotated", f'const token: string = "{t}";', t)
    t = r(ALNUM, 24)
    add("assignment", "xml password", f"<password>{t}</password>", t)
    t = r(ALNUM, 20)
    add("assignment", "export", f'export MYSQL_PWD="{t}"', t)
    t = r(ALNUM, 32)
    add("assignment", "header x-api-key", f"X-Api-Key: {t}", t)
    # vendors with fixed prefixes
    t = _j("SG", ".", r(URLSAFE, 22), ".", r(URLSAFE, 43))
    add("SendGrid", "api key", f"SENDGRID={t}", t)
    t = _j("ke", "y-", r(HEX, 32))
    add("Mailgun", "private key", f"mailgun api {t}", t)
    t = _j("SK", r(HEX, 32))
    add("Twilio", "api key", f"twilio.rest.Client('{t}', auth)", t)
    t = r(HEX, 32)
    add("Twilio", "auth token", f"TWILIO_AUTH_TOKEN={t}", t)
    t = _j("M", r(ALNUM, 25), ".", r(URLSAFE, 6), ".", r(URLSAFE, 38))
    add("Discord", "bot token", f"bot.run('{t}')", t)
    t = _j(r(string.digits, 10), ":AA", r(URLSAFE, 33))
    add("Telegram", "bot token", f"https://api.telegram.org/bot{t}/getMe", t)
    t = _j("do", "p_v1_", r(HEX, 64))
    add("DigitalOcean", "pat", f"doctl auth init -t {t}", t)
    t = _j("HR", "KU-AA", r(URLSAFE, 58))
    add("Heroku", "api key v2", f"HEROKU_API_KEY={t}", t)
    u = f"{r(HEX, 8)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 12)}"
    add("Heroku", "legacy api key", f"heroku_api_key: {u}", u)
    t = r(HEX, 32)
    add("Datadog", "api key", f"DD_API_KEY={t}", t)
    t = r(HEX, 40)
    add("Datadog", "app key", f"datadog_app_key: \"{t}\"", t)
    t = _j("AGE-SECRET-", "KEY-1", r(BECH32, 58))
    add("age", "secret key", f"# created: 2026-01-01\n{t}", t)
    t = _j("hv", "s.", r(URLSAFE, 95))
    add("Vault", "service token", f"VAULT_TOKEN={t}", t)
    t = _j("hv", "b.", r(URLSAFE, 140))
    add("Vault", "batch token", f"batch token {t}", t)
    t = _j("sh", "pat_", r(HEX, 32))
    add("Shopify", "access token", f"X-Shopify-Access-Token: {t}", t)
    t = _j("lin", "_api_", r(ALNUM, 40))
    add("Linear", "api key", f"LINEAR={t}", t)
    t = _j("nt", "n_", r(string.digits, 11), r(ALNUM, 35))
    add("Notion", "token", f"notion token {t}", t)
    t = _j("PM", "AK-", r(HEX, 24), "-", r(HEX, 34))
    add("Postman", "api key", f"postman key {t}", t)
    t = _j("dapi", r(HEX, 32))
    add("Databricks", "token", f"databricks token {t}", t)
    t = _j("dp", ".pt.", r(ALNUM, 43))
    add("Doppler", "token", f"DOPPLER={t}", t)
    t = _j("glsa", "_", r(ALNUM, 32), "_", r(HEX, 8))
    add("Grafana", "service account", f"grafana {t}", t)
    t = _j("NR", "AK-", r(UPPER_ALNUM, 27))
    add("New Relic", "user key", f"NEW_RELIC={t}", t)
    t = _j("sq0", "atp-", r(URLSAFE, 22))
    add("Square", "access token", f"square {t}", t)
    t = _j(r(ALNUM, 3), "8Q~", r(ALNUM + "_~.-", 34))
    add("Azure", "ad client secret", f"AZURE_CLIENT_SECRET={t}", t)
    t = base64.b64encode(rnd.randbytes(64)).decode()
    add("Azure", "storage key", f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={t};", t.rstrip("="))
    t = _j("LT", "AI", r(ALNUM, 20))
    add("Alibaba", "access key id", f"alibaba {t}", t)
    t = _j("ts", "key-auth-", r(ALNUM, 12), "-", r(ALNUM, 30))
    add("Tailscale", "auth key", f"tailscale up --authkey {t}", t)
    t = _j("pu", "l-", r(HEX, 40))
    add("Pulumi", "token", f"PULUMI={t}", t)
    t = _j("sntr", "yu_", r(HEX, 64))
    add("Sentry", "user token", f"sentry {t}", t)
    t = _j("pscale", "_tkn_", r(URLSAFE, 43))
    add("PlanetScale", "token", f"planetscale {t}", t)
    t = _j("shippo", "_live_", r(HEX, 40))
    add("Shippo", "token", f"shippo {t}", t)
    t = _j("xkey", "sib-", r(HEX, 64), "-", r(ALNUM, 16))
    add("Sendinblue", "api key", f"brevo {t}", t)
    t = _j(r(ALNUM, 14), ".atlas", "v1.", r(URLSAFE, 64))
    add("Terraform Cloud", "token", f"terraform token {t}", t)
    t = _j("ATAT", "T3", r(URLSAFE, 186))
    add("Atlassian", "api token", f"jira {t}", t)
    t = _j("gl", "c_", r(ALNUM, 40))
    add("Grafana", "cloud token", f"grafana cloud {t}", t)
    # AWS secret access keys outside an assignment, named a few words before (drawn last, so the
    # draws above keep their values)
    for name, text in (("secret in prose", "the deploy user signs with secret {}"),
                       ("secret key is", "for staging the AWS secret key is {} (rotate it)"),
                       ("configure set", "aws configure set aws_secret_access_key {}"),
                       ("configure prompt", "AWS Secret Access Key [None]: {}"),
                       ("markdown table", "| aws_secret_access_key | `{}` |")):
        t = r(B64, 40)
        add("AWS", name, text.format(t), t)
    return out


def look_alikes(seed: int = 61) -> list[str]:
    """Ordinary text that resembles secrets: none of it may be changed."""
    rnd = random.Random(seed)
    sha = hashlib.sha1(b"stele").hexdigest()
    sha256 = hashlib.sha256(b"stele").hexdigest()
    b64_text = base64.b64encode(b"The quick brown fox jumps over the lazy dog, twice a day.").decode()
    uuid = "123e4567-e89b-12d3-a456-426614174000"
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(b"left-pad").digest()).decode()
    ex_id, ex_secret = _j("AKIA", "IOSFODNN7", "EXAMPLE"), _j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCY", "EXAMPLEKEY")
    return [
        f"commit {sha} fixed the refund rounding",
        f"git cherry-pick {sha[:12]}",
        f"sha256:{sha256}",
        f"image: registry.acme.test/shop@sha256:{sha256}",
        f"request id {uuid} failed with 502",
        f'"id": "{uuid}", "kind": "order"',
        f"request_id = \"{uuid}\"",
        f"base64 of a sentence: {b64_text}",
        f'  integrity "{integrity}"',
        f'"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz", "integrity": "{integrity}"',
        f"left-pad==1.3.0 --hash=sha256:{sha256}",
        'api_key = os.environ["PAYMENTS_API_KEY"]',
        "password: ${POSTGRES_PASSWORD}",
        "DB_PASSWORD=${DB_PASSWORD}",
        "token = os.getenv('GITHUB_TOKEN')",
        "const secret = process.env.JWT_SECRET;",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        'api_key: "<your-api-key>"',
        "password = changeme",
        "SECRET_KEY=changeme",
        'token: "YOUR_TOKEN_HERE"',
        "password: '********'",
        f"aws_access_key_id = {ex_id}",
        f"aws_secret_access_key = {ex_secret}",
        "Bearer tokens expire after 15 minutes; send `Authorization: Bearer <token>`.",
        "We use sk-learn for ranking and task-runner for jobs.",
        "Basic authentication is disabled on the admin API.",
        "password: see the vault entry for the staging database",
        "The secret sauce is caching, and the key insight is batching.",
        "token_url = \"https://auth.acme.test/oauth/token\"",
        "API_KEY_ID=payments-prod",
        "sort_key = \"created_at\"",
        "primary_key: order_id",
        "password_min_length = 12",
        "session = requests.Session()",
        "connect(host=db, password=pwd)",
        "key: ${{ runner.os }}-pip-${{ hashFiles('**/requirements.txt') }}",
        "error TS2769: No overload matches this call.",
        "postgres://db.internal:5432/shop has no credentials in it",
        "https://docs.acme.test:8443/path?user=me",
        "The PEM file starts with -----BEGIN CERTIFICATE----- and is public.",
        "A block '-----BEGIN RSA PRIVATE KEY----- ... -----END RSA PRIVATE KEY-----' was redacted whole.",
        "Slack channel #xoxb-alerts is where bots post.",
        "TASK-418 rotates the token: AKIA keys older than 90 days are disabled.",
        "ghp_ tokens are classic GitHub tokens; github_pat_ are fine-grained.",
        "version: 2.14.1-rc.3",
        "eyJ is how a base64 JSON object starts.",
        f"cache key: deps-{rnd.randrange(10**6)}-linux",
        "See DEC-4F7K and RISK-2M9Q; rotate keys monthly.",
        "the build id is 20261129.4 and the run is 8123",
        "mailgun uses key- prefixed keys",
        "12:30 standup, then 14:00:05 deploy",
        # 40 characters after a secret's name, or after an AWS key id, that are no secret key
        f"rotated the AWS secret key in commit {sha}",
        f"secret scanning flagged {sha}; the key was revoked",
        f"aws_secret_access_key moved to SSM, see {sha.upper()}",
        "the secret lives in SecretsManagerRotationLambdaFunctionNames",
        "the secret key is read from config/secrets/aws/credentials/main",
        f"AKIA keys rotate; the secret key is {ex_secret}",
    ]
