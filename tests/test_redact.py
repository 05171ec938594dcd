"""The secret catalog: every shape must be redacted, every look-alike must survive untouched."""
import pytest

from stele.redact import Redactor, describe, redact

PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\n"
       "-----END RSA PRIVATE KEY-----")
SECRETS = {
    "pem-rsa": PEM,
    "pem-openssh": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----",
    "pem-ec": "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oaRsIXn\n-----END EC PRIVATE KEY-----",
    "pem-pkcs8": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----",
    "pem-truncated": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
    "bearer": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdefghijklmnop",
    "bearer-opaque": "curl -H 'authorization: bearer 7f3a9c2e1b8d4f6a0c5e2b9d8f7a6c5e'",
    "ghp": "token ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "gho": "gho_16C7e42F292c6912E7710c838347Ae178B4a",
    "ghs": "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
    "github-pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
    "akia": "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
    "asia": "ASIAY34FZKBOKMUTVV7A was the session key",
    "aws-secret": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "openai": "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyzABCDEF0123456789",
    "openai-legacy": "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",
    "anthropic": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-ABCDEFGHIJ",
    "stripe-live": "stripe key sk_live_51HqLyjWDarjtT1zdp7dcXOIZLHQKKXvE",
    "stripe-restricted": "rk_test_51HqLyjWDarjtT1zdp7dcXOIZLHQ",
    "slack-bot": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "slack-user": "xoxp-123456789012-123456789012-123456789012-abcdef1234567890abcdef1234567890",
    "google": "key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
    "npm": "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "url-password": "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/shop",
    "password-assign": 'password = "correct-horse-battery"',
    "client-secret": "client_secret: 9d8f7a6c5e4b3a2f1e0d",
}
SECRET_FRAGMENTS = {
    "pem-rsa": "MIIEowIBAAKCAQEA", "pem-openssh": "b3BlbnNzaC1rZXkt", "pem-ec": "MHcCAQEEIBkg",
    "pem-pkcs8": "MIIEvQIBADAN", "pem-truncated": "MIIEvQIBADAN", "bearer": "eyJhbGciOiJIUzI1NiJ9abc",
    "bearer-opaque": "7f3a9c2e1b8d", "ghp": "ghp_16C7e42F", "gho": "gho_16C7", "ghs": "ghs_16C7",
    "github-pat": "github_pat_11ABC", "akia": "AKIAIOSFODNN7EXAMPLE", "asia": "ASIAY34FZKBOKMUTVV7A",
    "aws-secret": "wJalrXUtnFEMI", "openai": "sk-proj-abc", "openai-legacy": "sk-abcdefghij",
    "anthropic": "sk-ant-api03", "stripe-live": "sk_live_51Hq", "stripe-restricted": "rk_test_51Hq",
    "slack-bot": "xoxb-1234", "slack-user": "xoxp-1234", "google": "AIzaSyDdI0h", "npm": "npm_abcdefgh",
    "jwt": "eyJzdWIiOiIxMjM0", "url-password": "s3cr3t-Pa55", "password-assign": "correct-horse",
    "client-secret": "9d8f7a6c5e4b",
}
LOOK_ALIKES = [
    "Bearer tokens expire after 15 minutes; the header is `Authorization: Bearer <token>`.",
    "We use sk-learn for the ranking experiments, and task-runner for jobs.",
    "The AKIA prefix marks long-lived AWS keys; ASIA marks temporary ones.",
    "ghp_ tokens are classic GitHub tokens; github_pat_ are fine-grained.",
    "Password hashing uses bcrypt with cost factor 12.",
    "password: see the vault",
    "The PEM file starts with -----BEGIN CERTIFICATE----- and is public.",
    "Slack channel #xoxb-alerts is where bots post.",
    "sk_live_ keys must never be logged (see DEC-4F7K).",
    "https://docs.example.com:8443/path?user=me",
    "postgres://db.internal:5432/shop has no credentials in it",
    "eyJ is how a base64 JSON object starts.",
    "TASK-418 rotates the token: AKIA keys older than 90 days are disabled.",
    "The secret sauce is caching.",
    "error TS2769: No overload matches this call.",
    "api_key rotation happens monthly",
    "Set token: ${GITHUB_TOKEN} in the workflow",
    "sha256:9f3c2e1b8d4f6a0c5e2b9d8f7a6c5e4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d",
    "commit 9f3c2e1b8d4f6a0c5e2b9d8f7a6c5e4b3a2f1e0d",
    "UUID 123e4567-e89b-12d3-a456-426614174000",
    "A block '-----BEGIN RSA PRIVATE KEY----- ... -----END RSA PRIVATE KEY-----' was redacted whole.",
]


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_every_secret_shape_is_redacted(name):
    result = redact(f"before {SECRETS[name]} after")
    assert SECRET_FRAGMENTS[name] not in result.text, result.text
    assert "[REDACTED:" in result.text
    assert (result.text.startswith("before ") and result.text.endswith(" after")) or name == "pem-truncated"
    assert sum(result.found.values()) >= 1


def test_the_catalog_is_big_enough():
    assert len(SECRETS) >= 20 and len(LOOK_ALIKES) >= 20


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_survive(text):
    result = redact(text)
    assert result.text == text and not result.found


def test_summary_names_kinds_never_secrets():
    result = redact(f"{SECRETS['akia']} and {SECRETS['asia']} and {PEM}")
    summary = result.summary()
    assert summary == "2 AWS access key ids, 1 PEM private key"
    assert "AKIA" not in summary
    assert describe(result.found) == summary


def test_configured_patterns_apply_and_bad_ones_name_the_setting():
    r = Redactor([r"ACME-[0-9]{6}"]).redact("ticket ACME-123456 leaked")
    assert r.text == "ticket [REDACTED:configured pattern] leaked"
    with pytest.raises(Exception, match=r"redaction\.patterns"):
        Redactor(["(unclosed"])


def test_redaction_is_idempotent():
    once = redact(SECRETS["bearer"] + " " + SECRETS["url-password"]).text
    assert redact(once).text == once
