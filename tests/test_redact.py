"""Tests for cascade.turns.redact: the secret boundary in front of every prompt.

Fake credentials are assembled from pieces (``"gh" + "p_" + ...``) so that this file itself
does not look like a leak to secret scanners; the text ``redact`` sees is the joined string.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cascade.turns import redact as redact_module
from cascade.turns.redact import Redaction, is_placeholder, is_secret_file, redact

_bundled = redact_module._bundled
_PATTERN_FILE = redact_module._PATTERN_FILE

REPO = Path(__file__).resolve().parent.parent

AWS_ID = "AK" + "IA" + "Z7QXW3RT5YUP2LMN"
AWS_EXAMPLE_ID = "AK" + "IA" + "IOSFODNN7EXAMPLE"  # the AWS documentation's own pair
AWS_EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzQ8kLm2Np4"
GH = "gh" + "p_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
GH_PAT = "github" + "_pat_" + "11ABCDEFG0123456789_abcdefghijKLMNOP"
GLPAT = "gl" + "pat-" + "xY9z_8Wv7Ut6Sr5Qp4On"
SLACK = "xo" + "xb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T02AB3CD4/B05EF6GH7/Xk9Lm2Qp7Rt4Vw8Zy1Ab3Cd5"
SLACK_DOCS_HOOK = "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
SAS_SIG = "RoQXdbBmQvuUCRasbbKSkWYzN26RxpS%2FE27oklkYaJE%3D"
SAS_QUERY = "sv=2022-11-02&ss=b&srt=o&sp=r&se=2027-01-01T00:00:00Z&spr=https&" + "si" + "g="
OPENAI = "sk" + "-proj-" + "Ab3De5Gh7Jk9Mn1Pq3St5Vx7Za9Ce1Gi"
OPENAI_OLD = "sk" + "-" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4"
ANTHROPIC = "sk" + "-ant-" + "api03-Ab3De5Gh7Jk9Mn1Pq3St5Vx7Za9Ce1Gi"
GOOGLE = "AI" + "za" + "SyB1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6R"
STRIPE = "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRIPE_TEST = "rk" + "_test_" + "51HqLyjWDarjtT1zdp7dcXYZ"
TWILIO = "S" + "K" + "0123456789abcdef0123456789abcdef"
SENDGRID = "S" + "G." + "ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
NPM = "np" + "m_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PYPI = "py" + "pi-AgEIcHlwaS5vcmc" + "CJGE4ZjM2YTAtYWJjZC00ZWZhLTk5ZGUtOGE3NmQ1"
JWT = ("ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0."
       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
AZURE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
PEM = ("-----BEGIN RSA " + "PRIVATE KEY-----\n"
       "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
       "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
       "-----END RSA " + "PRIVATE KEY-----")


def doc(*lines: str) -> str:
    return "\n".join(lines) + "\n"


# ---- what is redacted, and exactly how --------------------------------------------------------
# (id, input, expected kinds in order, expected output -- None where only the kinds are checked)
CASES = [
    ("aws-access-key", f"key id {AWS_ID} here", ["aws-access-key"],
     "key id [REDACTED:aws-access-key] here"),
    ("aws-sts-key", "ASIA" + "Q2W3E4R5T6Y7U8I9", ["aws-access-key"], "[REDACTED:aws-access-key]"),
    ("aws-secret-ini", f"aws_secret_access_key = {AWS_SECRET}", ["aws-secret-key"],
     "aws_secret_access_key = [REDACTED:aws-secret-key]"),
    ("aws-secret-json", f'{{"AccessKeyId": "{AWS_ID}", "SecretAccessKey": "{AWS_SECRET}"}}',
     ["aws-access-key", "aws-secret-key"],
     '{"AccessKeyId": "[REDACTED:aws-access-key]", "SecretAccessKey": "[REDACTED:aws-secret-key]"}'),
    ("pem-block", doc("before", PEM, "after"), ["private-key"],
     "before\n[REDACTED:private-key]\nafter\n"),
    ("pem-openssh-unterminated",
     "ssh key:\n-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\nmore",
     ["private-key"], "ssh key:\n[REDACTED:private-key]"),
    ("pem-in-json-string",
     '{"private_key": "-----BEGIN ' + 'PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n'
     '-----END ' + 'PRIVATE KEY-----\\n", "client_email": "x@y.iam.gserviceaccount.com"}',
     ["private-key"],
     '{"private_key": "[REDACTED:private-key]\\n", "client_email": "x@y.iam.gserviceaccount.com"}'),
    ("pem-encrypted-legacy",
     doc("-----BEGIN RSA " + "PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED",
         "DEK-Info: AES-128-CBC,3F17F5316E2BAC89", "", "abc", "-----END RSA " + "PRIVATE KEY-----"),
     ["private-key"], "[REDACTED:private-key]\n"),
    ("github-token", f"GITHUB auth uses {GH}.", ["github-token"],
     "GITHUB auth uses [REDACTED:github-token]."),
    ("github-pat", f"pat: {GH_PAT}", ["github-token"], "pat: [REDACTED:github-token]"),
    ("gitlab", f"glab auth login --token {GLPAT}", ["gitlab-token"],
     "glab auth login --token [REDACTED:gitlab-token]"),
    ("slack-token", f"SLACK_BOT={SLACK}", ["slack-token"], "SLACK_BOT=[REDACTED:slack-token]"),
    ("slack-webhook", f"Alerts go to {SLACK_HOOK} today", ["slack-webhook"],
     "Alerts go to [REDACTED:slack-webhook] today"),
    ("openai-project", f"client = OpenAI(api_key='{OPENAI}')", ["openai-key"],
     "client = OpenAI(api_key='[REDACTED:openai-key]')"),
    ("openai-legacy", f"OPENAI_API_KEY={OPENAI_OLD}", ["openai-key"],
     "OPENAI_API_KEY=[REDACTED:openai-key]"),
    ("anthropic", f"key {ANTHROPIC}", ["anthropic-key"], "key [REDACTED:anthropic-key]"),
    ("google", f"maps?key={GOOGLE}&q=1", ["google-api-key"],
     "maps?key=[REDACTED:google-api-key]&q=1"),
    ("stripe-live", f"stripe.api_key = '{STRIPE}'", ["stripe-key"],
     "stripe.api_key = '[REDACTED:stripe-key]'"),
    ("stripe-restricted-test", STRIPE_TEST, ["stripe-key"], "[REDACTED:stripe-key]"),
    ("twilio", f"TWILIO_API_KEY_SID {TWILIO}", ["twilio-key"],
     "TWILIO_API_KEY_SID [REDACTED:twilio-key]"),
    ("sendgrid", f"SENDGRID: {SENDGRID}", ["sendgrid-key"], "SENDGRID: [REDACTED:sendgrid-key]"),
    ("npm", f"//registry.npmjs.org/:_authToken={NPM}", ["npm-token"],
     "//registry.npmjs.org/:_authToken=[REDACTED:npm-token]"),
    ("pypi", f"password = {PYPI}", ["pypi-token"], "password = [REDACTED:pypi-token]"),
    ("jwt-bearer", f"Authorization: Bearer {JWT}", ["jwt"], "Authorization: Bearer [REDACTED:jwt]"),
    ("bearer-opaque", "curl -H 'Authorization: Bearer 8f3a9c2e1b7d4f6a0e5c'", ["bearer-token"],
     "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'"),
    ("basic-auth", 'headers = {"Authorization": "Basic dXNlcjpodW50ZXIy"}', ["basic-auth"],
     'headers = {"Authorization": "Basic [REDACTED:basic-auth]"}'),
    ("azure-connection-string",
     f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZURE_KEY};"
     "EndpointSuffix=core.windows.net", ["azure-storage-key"],
     "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:azure-storage-key];"
     "EndpointSuffix=core.windows.net"),
    ("password-in-url", "DATABASE_URL=postgres://app:Tr0ub4dor@db.internal:5432/app",
     ["password-in-url"],
     "DATABASE_URL=postgres://app:[REDACTED:password-in-url]@db.internal:5432/app"),
    ("password-in-url-https", "git clone https://rob:hunter2@example.com/repo.git",
     ["password-in-url"], "git clone https://rob:[REDACTED:password-in-url]@example.com/repo.git"),
    ("password-in-url-with-at", "redis://:p@ss:w0rd@cache:6379/0", ["password-in-url"],
     "redis://:[REDACTED:password-in-url]@cache:6379/0"),
    ("token-as-url-user", f"https://{GH}@github.com/o/r.git", ["github-token"],
     "https://[REDACTED:github-token]@github.com/o/r.git"),
    ("generic-python", 'password = "hunter2"', ["secret-assignment"],
     'password = "[REDACTED:secret-assignment]"'),
    ("generic-yaml-upper", "PASSWORD: s3cret", ["secret-assignment"],
     "PASSWORD: [REDACTED:secret-assignment]"),
    ("generic-api-key", 'api_key="a8f5f167f44f4964e6c998dee827110c"', ["secret-assignment"],
     'api_key="[REDACTED:secret-assignment]"'),
    ("generic-secret-key-yaml", "  secret_key: Zx9!kL2mQ", ["secret-assignment"],
     "  secret_key: [REDACTED:secret-assignment]"),
    ("generic-token", "token = 0a1b2c3d4e5f", ["secret-assignment"],
     "token = [REDACTED:secret-assignment]"),
    ("generic-client-secret-json", '{"client_id": "abc", "client_secret": "9f8e7d6c5b4a"}',
     ["secret-assignment"], '{"client_id": "abc", "client_secret": "[REDACTED:secret-assignment]"}'),
    ("generic-db-pass", "DB_PASS=topsecret99", ["secret-assignment"],
     "DB_PASS=[REDACTED:secret-assignment]"),
    ("generic-json-password", '{"user": "rob", "password": "correcthorse"}', ["secret-assignment"],
     '{"user": "rob", "password": "[REDACTED:secret-assignment]"}'),
    ("generic-ini", doc("[database]", "user = app", "password = letmein42"), ["secret-assignment"],
     "[database]\nuser = app\npassword = [REDACTED:secret-assignment]\n"),
    ("generic-shell-export", "export GITHUB_TOKEN=abc123def456", ["secret-assignment"],
     "export GITHUB_TOKEN=[REDACTED:secret-assignment]"),
    ("generic-letters-only-with-equals", "DB_PASSWORD=supersecretpassword", ["secret-assignment"],
     "DB_PASSWORD=[REDACTED:secret-assignment]"),
    ("generic-properties", "spring.datasource.password=Secr3tPass", ["secret-assignment"],
     "spring.datasource.password=[REDACTED:secret-assignment]"),
    ("generic-camel-case", "const apiKey = 'q7Wm2Xp9Lk4Rt8Zv';", ["secret-assignment"],
     "const apiKey = '[REDACTED:secret-assignment]';"),
    ("generic-rails", "SECRET_KEY_BASE=0123456789abcdef0123", ["secret-assignment"],
     "SECRET_KEY_BASE=[REDACTED:secret-assignment]"),
    ("generic-pgpassword", "PGPASSWORD='Pg!pass2024' psql", ["secret-assignment"],
     "PGPASSWORD='[REDACTED:secret-assignment]' psql"),
    ("generic-go-struct", 'cfg := Config{Password: "gopher2024", Port: 5432}', ["secret-assignment"],
     'cfg := Config{Password: "[REDACTED:secret-assignment]", Port: 5432}'),
    ("generic-query-string", "https://api.example.com/cb?token=abc123def456&user=1",
     ["secret-assignment"], "https://api.example.com/cb?token=[REDACTED:secret-assignment]&user=1"),
    ("generic-cli-flag", "mysql --password=Hunter2024 -u root", ["secret-assignment"],
     "mysql --password=[REDACTED:secret-assignment] -u root"),
    ("generic-markdown-bold", "**Password:** `Sup3rS3cret`", ["secret-assignment"],
     "**Password:** `[REDACTED:secret-assignment]`"),
    ("generic-escaped-json", '"{\\"password\\": \\"hunter2024\\"}"', ["secret-assignment"],
     '"{\\"password\\": \\"[REDACTED:secret-assignment]\\"}"'),
    ("generic-env-prefix", "PGPASSWORD=Hunter2024 psql -h db", ["secret-assignment"],
     "PGPASSWORD=[REDACTED:secret-assignment] psql -h db"),
    ("generic-indented-key-word-first", "  key_password: hunter2024", ["secret-assignment"],
     "  key_password: [REDACTED:secret-assignment]"),
    ("generic-keeps-comment", "password = s3cr3t99  # rotate monthly", ["secret-assignment"],
     "password = [REDACTED:secret-assignment]  # rotate monthly"),
    ("azure-sas-url", f"GET https://acct.blob.core.windows.net/c/f.txt?{SAS_QUERY}{SAS_SIG} now",
     ["azure-sas-signature"],
     f"GET https://acct.blob.core.windows.net/c/f.txt?{SAS_QUERY}[REDACTED:azure-sas-signature] now"),
    ("azure-sas-connection-string",
     f"BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature={SAS_QUERY}{SAS_SIG}",
     ["azure-sas-signature"],
     f"BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature={SAS_QUERY}"
     "[REDACTED:azure-sas-signature]"),
    ("azure-sas-unencoded", "?sp=r&si" + "g=AM1+0re2jWBdRrMXonyfdciOEXVJgQCtFsgqpMGd=&se=2026",
     ["azure-sas-signature"], "?sp=r&sig=[REDACTED:azure-sas-signature]&se=2026"),
    ("yaml-block-literal", doc("db:", "  password: |", "    Blk!Lit3ral-2024", "  user: app"),
     ["secret-assignment"], "db:\n  password: |\n    [REDACTED:secret-assignment]\n  user: app\n"),
    ("yaml-block-folded-comment", doc("client_secret: >-  # from the portal", "  Fo1ded~Secret~99x"),
     ["secret-assignment"], "client_secret: >-  # from the portal\n  [REDACTED:secret-assignment]\n"),
    ("yaml-block-every-line", doc("token: |", "  abcdef123456", "", "  ghijkl789012", "next: 1"),
     ["secret-assignment", "secret-assignment"],
     "token: |\n  [REDACTED:secret-assignment]\n\n  [REDACTED:secret-assignment]\nnext: 1\n"),
    ("yaml-plain-next-line", doc("- name: payments", "  api_key:", "    9c1e7b3f5a2d8e4c6b0a"),
     ["secret-assignment"], "- name: payments\n  api_key:\n    [REDACTED:secret-assignment]\n"),
    ("yaml-quoted-key-next-line", doc('"password":', '  "pK7#mQ2vL9xR"'), ["secret-assignment"],
     '"password":\n  "[REDACTED:secret-assignment]"\n'),
    ("yaml-aws-secret-next-line", doc("aws_secret_access_key:", f"  {AWS_SECRET}"),
     ["aws-secret-key"], "aws_secret_access_key:\n  [REDACTED:aws-secret-key]\n"),
    ("wrapped-token", doc(f"We found the leaked token {GH}", "Zq9Lm2Xv in the build log."),
     ["github-token", "github-token"],
     "We found the leaked token [REDACTED:github-token]\n[REDACTED:github-token] in the build log.\n"),
    ("wrapped-assignment-three-lines",
     doc("API_KEY=" + "Ab3dE5gH7j" * 8, "Ab3dE5gH7j" * 8, "Kz9", "echo done"),
     ["secret-assignment", "secret-assignment", "secret-assignment"],
     "API_KEY=[REDACTED:secret-assignment]\n[REDACTED:secret-assignment]\n"
     "[REDACTED:secret-assignment]\necho done\n"),
    ("wrapped-in-a-quote", doc("> > the password is " + "Xy7!pq9z" * 8, "> > Kq2w, thanks"),
     ["secret-in-prose", "secret-in-prose"],
     "> > the password is [REDACTED:secret-in-prose]\n> > [REDACTED:secret-in-prose], thanks\n"),
    ("several-one-line", f"AWS={AWS_ID} GH={GH}", ["aws-access-key", "github-token"],
     "AWS=[REDACTED:aws-access-key] GH=[REDACTED:github-token]"),
    ("specific-beats-generic", f"token: {GH}", ["github-token"], "token: [REDACTED:github-token]"),
    # the kinds no other case or corpus passage shows: each pattern of the table finds its token
    ("grafana-token", "GRAFANA_SA=" + "gl" + "sa_" + "Xk9Lm2Qp7Rt4Vw8Zy1Ab3Cd5Ef6Gh7Ij_1a2b3c4d",
     ["grafana-token"], "GRAFANA_SA=[REDACTED:grafana-token]"),
    ("shopify-token", "admin API: " + "shp" + "at_" + "0123456789abcdef0123456789abcdef",
     ["shopify-token"], "admin API: [REDACTED:shopify-token]"),
    ("postman-key", "export " + "PM" + "AK-" + "0123456789abcdef01234567-"
     + "0123456789abcdef0123456789abcdef01", ["postman-key"], "export [REDACTED:postman-key]"),
    ("digitalocean-token", "doctl auth init -t " + "dop" + "_v1_" + "0a1b2c3d" * 8,
     ["digitalocean-token"], "doctl auth init -t [REDACTED:digitalocean-token]"),
    ("databricks-token", "host and " + "da" + "pi" + "0123456789abcdef0123456789abcdef",
     ["databricks-token"], "host and [REDACTED:databricks-token]"),
]


@pytest.mark.parametrize("text, kinds, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_redacts(text: str, kinds: list[str], expected: str | None) -> None:
    out, found = redact(text)
    assert [r.kind for r in found] == kinds
    if expected is not None:
        assert out == expected
    for secret in (AWS_ID, AWS_SECRET, GH, GH_PAT, GLPAT, SLACK, OPENAI, ANTHROPIC, GOOGLE, STRIPE,
                   TWILIO, SENDGRID, NPM, PYPI, JWT, AZURE_KEY, "hunter2", "s3cret", "Tr0ub4dor"):
        assert secret not in out


# ---- what is left alone -----------------------------------------------------------------------
PROSE = [
    ("adr-passwords", doc(
        "## Decision",
        "Users sign in with a password; the password policy requires 12 characters.",
        "Password: required field, at least 12 characters.",
        "We store only the bcrypt hash of the password, never the password itself.",
        "The token expiry is one hour; refresh tokens last 30 days.",
        "API keys are issued per tenant and rotated by the secret manager.",
        "Key rotation happens quarterly. The key: it must never be logged.",
        "In short, token = opaque string issued by the IdP; secret: rotated often.",
    )),
    ("env-references", doc(
        "password: ${DB_PASSWORD}",
        'password: "${DB_PASSWORD}"',
        "api_key = os.environ[\"API_KEY\"]",
        "token = os.getenv('GITHUB_TOKEN')",
        "secret = settings.SECRET_KEY",
        "TOKEN=$GITHUB_TOKEN",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "password: {{ vault_db_password }}",
        "password=%(db_password)s",
        "set PASSWORD=%DB_PASSWORD%",
        "api_key = process.env.API_KEY",
        "password = get_password()",
    )),
    ("placeholders", doc(
        "api_key: <your-api-key>",
        "API_KEY=your-api-key-here",
        "password = changeme",
        'password: "********"',
        "token: xxxxxxxxxxxx",
        "client_secret: YOUR_CLIENT_SECRET",
        'password = "password"',
        "secret: [REDACTED]",
        "password: null",
        "token = None",
        "secret: true",
        'password: "example-password"',
        "DB_PASS=placeholder",
        'password = ""',
        "password = abc",
        "password: {password}",
    )),
    ("yaml-words", doc(
        "auth:",
        "  token: opaque",
        "  password: bcrypt",
        "  scope: read-only",
        "  token_type: bearer",
        "  token_ttl: 3600",
        "  password_min_length: 12",
        "  api_key_header: X-Api-Key",
        "  secretName: app-secrets",
        "kind: Secret",
    )),
    ("json-schema", doc(
        '{"password": {"type": "string", "minLength": 12},',
        ' "token": "issued by the identity provider"}',
    )),
    ("ml-and-identifiers", doc(
        "We evaluated sk-learn and sk-learn-compatible-pipeline-wrapper for the ranking model.",
        "The risk-assessment-framework-v2 and task-1234567890abcdefghij stay as they are.",
        "Commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c fixed it; see issue 123e4567-e89b-12d3-a456-426614174000.",
        "Use `pip install scikit-learn`; docs at https://example.com/docs?page=2&lang=en.",
        "Connect to https://db.internal:5432/app and ssh://git@github.com:22/o/r.git.",
        "Email rob@example.com, or ping @security.",
        "Sign-off: xoxo-hugs-and-kisses from the whole team.",
    )),
    ("base64-image", "![diagram](data:image/png;base64," + "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
     "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" * 20 + ")\n"),
    ("pem-header-in-prose", doc(
        "A key file starts with `-----BEGIN RSA PRIVATE KEY-----` and ends with the END line.",
        "Never commit files that contain -----BEGIN OPENSSH PRIVATE KEY----- blocks.",
    )),
    ("url-placeholders", doc(
        "Format: postgres://user:password@host:5432/db",
        "git clone https://<user>:<token>@example.com/repo.git",
        "https://user:${TOKEN}@example.com",
        "http://localhost:8080/health",
    )),
    ("code-without-literals", doc(
        "def login(user, password):",
        "    if not check(user.password_hash, password):",
        "        raise AuthError('bad password')",
        "    token = issue_token(user)",
        "    return {'token': token, 'expires_in': 3600}",
    )),
    ("bearer-prose", "The API uses bearer authentication-mechanisms and Basic authentication.\n"),
    ("documentation-examples", doc(
        f"aws_access_key_id = {AWS_EXAMPLE_ID}",
        f"aws_secret_access_key = {AWS_EXAMPLE_SECRET}",
        f'{{"AccessKeyId": "{AWS_EXAMPLE_ID}", "SecretAccessKey": "{AWS_EXAMPLE_SECRET}"}}',
        f"Post to {SLACK_DOCS_HOOK} (the Slack docs' URL).",
        "gh" + "p_" + "x" * 36 + " and AK" + "IA" + "X" * 16 + " are shapes, not keys.",
    )),
    ("sas-without-signature", doc(
        "https://acct.blob.core.windows.net/public/logo.svg",
        "?sv=2022-11-02&sp=r&se=<expiry>&si" + "g=<signature>",
        "The sig=... parameter; si" + "g=SignatureOfTheRequestItself is a word.",
    )),
    ("yaml-next-line-not-a-value", doc(
        "password:",
        "  min_length: 12",
        "token:",
        "  - at least 12 characters",
        "secret: |",
        "  rotated by the vault every 90 days",
        "api_key: >-",
        "  ${API_KEY}",
        "client_secret:",
        "  opaque",
        "db_password: !vault |",
        "  $ANSIBLE_VAULT;1.1;AES256",
        "  62313365396662343061393464336163383764373764613633653634306231386433626436",
        "signing_key:",
        "next_key: Xy7!pq9z-but-not-under-the-key",
        "**Password:**",
        "    Xy7!pq9zQ2",
    )),
]


@pytest.mark.parametrize("text", [p[1] for p in PROSE], ids=[p[0] for p in PROSE])
def test_leaves_prose_alone(text: str) -> None:
    out, found = redact(text)
    assert found == []
    assert out == text


# ---- a secret wrapped at a column: its rest on the next line, and what is not its rest --------
LONG_LINE = "The service reads its key from API_KEY=" + "Ab3dE5gH7jK9mN1pQ3sT5vX7"  # 63 characters
HEX_LINE = "  signing_secret: " + "7cb99d9962e7" * 5  # 78 characters, a lower-case hex value


@pytest.mark.parametrize("first, second", [
    (LONG_LINE, "and nothing else."),
    (LONG_LINE, "2024 was the year it leaked."),
    (LONG_LINE, "/srv/app2 holds the rest of the configuration."),
    (LONG_LINE, "--force2 is needed to apply it"),
    (LONG_LINE, "user1: bob"),
    (LONG_LINE, "DB_HOST=db.internal"),
    (LONG_LINE, "- Ab3dE5 is a list item"),
    (LONG_LINE, "and/or the vault"),
    (LONG_LINE, ""),
    (HEX_LINE, "  iOS2 clients read it as well"),  # capitals: not the rest of a lower-case value
    ("token: " + GH, "Zq9Lm2Xv after a short line"),  # 47 characters: not wrapped
    (f"The service reads its key from API_KEY={'Ab3dE5gH7j' * 3}.", "Zq9Lm2Xv after a full stop"),
])
def test_what_does_not_continue_a_secret(first: str, second: str) -> None:
    out, found = redact(doc(first, second))
    assert [r.line for r in found] == [1]
    assert out.endswith("\n" + second + "\n")


def test_a_secret_on_the_next_line_is_its_own() -> None:
    out, found = redact(doc(LONG_LINE, f"{GH} too"))
    assert found == [Redaction("secret-assignment", 1), Redaction("github-token", 2)]
    assert out.endswith("\n[REDACTED:github-token] too\n")


def test_yaml_with_crlf() -> None:
    text = "password:\r\n  min_length: 12\r\ntoken: |\r\n  Blk!Lit3ral-2024\r\n"
    assert redact(text) == ("password:\r\n  min_length: 12\r\ntoken: |\r\n"
                            "  [REDACTED:secret-assignment]\r\n", [Redaction("secret-assignment", 4)])


def test_a_wrapped_secret_with_crlf() -> None:
    out, found = redact(f"{LONG_LINE}\r\nZq9Lm2Xv here\r\n")
    assert found == [Redaction("secret-assignment", 1), Redaction("secret-assignment", 2)]
    assert out == "The service reads its key from API_KEY=[REDACTED:secret-assignment]\r\n" \
                  "[REDACTED:secret-assignment] here\r\n"


# ---- line numbers, idempotence -----------------------------------------------------------------

def test_line_numbers_are_those_of_the_input() -> None:
    text = doc(
        "# ADR 12",                          # 1
        PEM,                                 # 2-5 (four lines)
        "",                                  # 6
        f"id = {AWS_ID}",                    # 7
        "password: s3cret99",                # 8
        f"two on one line: {GH} {NPM}",      # 9
        "url: https://a:Tr0ub4dor@h/x",      # 10
    )
    out, found = redact(text)
    assert found == [Redaction("private-key", 2), Redaction("aws-access-key", 7),
                     Redaction("secret-assignment", 8), Redaction("github-token", 9),
                     Redaction("npm-token", 9), Redaction("password-in-url", 10)]
    assert out.splitlines()[1] == "[REDACTED:private-key]"


def test_line_numbers_with_crlf() -> None:
    out, found = redact(f"a\r\nb\r\ntoken = {GH}\r\n")
    assert found == [Redaction("github-token", 3)]
    assert out == "a\r\nb\r\ntoken = [REDACTED:github-token]\r\n"


ALL_INPUTS = [c[1] for c in CASES] + [p[1] for p in PROSE]


@pytest.mark.parametrize("text", ALL_INPUTS)
def test_idempotent(text: str) -> None:
    once, _ = redact(text)
    twice, found = redact(once)
    assert twice == once
    assert found == []


def test_text_whose_lowercase_changes_length() -> None:
    # "İ".lower() is two characters: offsets must still be those of the original text.
    text = "İstanbul İİİ office\npassword = hunter2024\nİ token: " + GH + "\n"
    out, found = redact(text)
    assert out == ("İstanbul İİİ office\npassword = [REDACTED:secret-assignment]\n"
                   "İ token: [REDACTED:github-token]\n")
    assert found == [Redaction("secret-assignment", 2), Redaction("github-token", 3)]


def test_empty_and_plain_text() -> None:
    assert redact("") == ("", [])
    assert redact("nothing to see") == ("nothing to see", [])


@pytest.mark.parametrize("value, expected", [
    ("${DB_PASSWORD}", True), ("$DB_PASSWORD", True), ("<your-key>", True), ("xxxxxx", True),
    ("******", True), ("changeme", True), ("CHANGEME", True), ("None", True), ("null", True),
    ("true", True), ("example", True), ("my-example-key", True), ("[REDACTED:jwt]", True),
    ("your_api_key", True), ("TOKEN_HERE", True), ("{{ secret }}", True), ("%(pw)s", True),
    ("hunter2", False), ("s3cret", False), ("Tr0ub4dor&3", False), ("password123", False),
])
def test_is_placeholder(value: str, expected: bool) -> None:
    assert is_placeholder(value) is expected


# ---- files never read ---------------------------------------------------------------------------
@pytest.mark.parametrize("path, expected", [
    (".env", True), ("config/.env", True), (".env.local", True), (".env.production", True),
    ("prod.env", True), (".envrc", True), ("certs/server.pem", True), ("tls/server.key", True),
    ("keystore.p12", True), ("cert.pfx", True), ("app.keystore", True), ("trust.jks", True),
    ("id_rsa", True), ("home/.ssh/id_ed25519", True), ("id_ecdsa_sk", True), ("id_dsa", True),
    ("id_rsa.pub", False), (".ssh/id_ed25519.pub", False), (".npmrc", True), (".pypirc", True),
    (".netrc", True), ("_netrc", True), (".git-credentials", True), (".htpasswd", True),
    ("aws/credentials", True), ("gcp/credentials.json", True), ("terraform.tfvars", True),
    ("prod.tfvars.json", True), ("config/secrets.yml", True), ("secrets.yaml", True),
    (".dockercfg", True), ("home/.docker/config.json", True), ("kubeconfig", True),
    ("C:\\Users\\rob\\.env", True), ("ENV/.ENV", True),
    ("docs/adr/0007-event-store.md", False), ("config.json", False), ("app/config.json", False),
    ("environment.md", False), ("docs/env.md", False), ("src/keys.py", False),
    ("docs/secrets-management.md", False), ("credentials.md", False), ("keyboard.txt", False),
    ("README.md", False), ("", False), ("docs/", False),
])
def test_is_secret_file(path: str, expected: bool) -> None:
    assert is_secret_file(path) is expected


# ---- large and adversarial inputs (speed is measured in bench/parsing.py; the timeouts here
# only catch catastrophic backtracking, which takes minutes) ---------------------------------

def test_a_megabyte_of_design_doc() -> None:
    page = doc(
        "## Decision",
        "We store the API key in the secret manager; the token expiry is one hour and the",
        "password policy requires 12 characters. Key rotation: https://vault.internal/keys.",
        "Commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c, ticket 123e4567-e89b-12d3-a456-426614174000.",
        "```yaml", "password: ${DB_PASSWORD}", "api_key: <your-key>", "token_ttl: 3600",
        "key: value", "```",
        "| Field | Type | Notes |", "|---|---|---|", "| password | string | required |",
    )
    text = (page * (1_000_000 // len(page) + 1))[:1_000_000]
    secret_text = text[:500_000] + f"\ntoken = {GH}\n" + text[500_000:]
    assert [r.kind for r in redact(secret_text)[1]] == ["github-token"]


@pytest.mark.parametrize("name, text", [
    ("a", "a" * 100_000),
    ("begin-without-end", "-----BEGIN " * 10_000),
    ("pem-header-without-end", "-----BEGIN RSA " + "PRIVATE KEY-----\n" + "A" * 100_000),
    ("many-pem-headers", ("-----BEGIN RSA " + "PRIVATE KEY-----\n") * 3_000),
])
@pytest.mark.timeout(20)
def test_adversarial_inputs_finish(name: str, text: str) -> None:
    clean, _ = redact(text)
    assert redact(clean)[0] == clean


@pytest.mark.parametrize("text", [
    "a" * 1_000_000,
    "-----BEGIN " * 100_000,
    "pass" * 250_000,
    "password=" * 110_000,
    "password: " * 100_000,
    "api_key=" * 120_000,
    "://a:b" * 160_000,
    "http://user:" + "p" * 1_000_000,
    "sk-" * 330_000,
    "eyJabcdefghij." * 70_000,
    'password="' + "a" * 1_000_000,
    "Bearer " * 150_000,
    "AKIA" * 250_000,
    " " * 1_000_000,
    "\n" * 1_000_000,
    # the context detectors (half a megabyte is enough to show a quadratic scan): tables,
    # prose, command lines, XML, the markers themselves
    "| password " * 45_000,
    "| password | x1 " * 30_000,
    "| password |\n|---|\n" * 25_000,
    "| user | password |\n|---|---|\n" + "| app | Xy7!pq9z |\n" * 25_000,
    "|" + " password |" * 1_500 + "\n|" + "---|" * 1_500 + "\n"
    + ("|" + " a1b2c3d4 |" * 1_500 + "\n") * 12,
    "password for " * 37_500,
    "token 1 " * 60_000,
    "api key: " * 55_000,
    "mysql " + "-pX " * 125_000,
    "mysql " + "=-pX" * 125_000,
    "curl " + "-u=" * 165_000,
    "htpasswd " + "-b " * 165_000,
    "sshpass " + "-p " * 165_000,
    "-passin pass:" * 37_500,
    "<password>abcdef1</" * 25_000,
    '"auth": "' * 50_000,
    "$2y$10$" * 70_000,
    "[REDACTED:private-key] = x1" * 17_500,
    # values on the next line, secrets wrapped at a column, SAS signatures
    "password: |\n" * 80_000,
    "".join(" " * i + "password: |\n" for i in range(1_400)),
    ("password: |\n" + "  a1b2c3d4e5f6\n" * 70) * 1_000,
    "password:\n" + ("  " + "x1" * 2_000 + "\n") * 250,
    "API_KEY=" + ("Ab3" * 30 + "\n") * 11_000,
    ("> the password is " + "Xy7!pq9z" * 8 + "\n") * 12_000,
    "&si" + "g=" * 200_000,
    # prose that sets a secret-named key: every key a candidate, the verb looked for before it
    "set the token to x1 " * 50_000,
    "set " + "and DB_PASSWORD to Xy7!pq9z, " * 35_000,
    ("set a b c d e f g " * 12 + "token to Ab12cd!x\n") * 4_000,
    # tokens cut short at a line's end, in a quote: every start a candidate, every line a piece
    ("x" * 60 + " sk-proj-Ab12\n> Cd34Ef56\n") * 12_000,
    "> " + "x" * 58 + "sk-proj-Ab3d\n" + ("> " + "Ab3dE5Zz9" * 8 + "\n") * 12_000,
    ("- > " + "x" * 56 + " gh" + "p_Ab3dE5\n  >> Zz9Yy8Xx7\n") * 14_000,
    # ... across table cells and <br>
    "| sk-proj-Ab12 | Cd34Ef56 " * 40_000,
    "| sk-proj-Ab12 | Cd34Ef56gh |\n" * 35_000,
    "| gh" + "p_Ab3dE5 " + "| `Ab3dE5Zz9` " * 80_000 + "|",
    ("gh" + "p_Ab3dE5<br>") * 80_000,
    "gh" + "p_Ab3dE5" + "<br />Ab3dE5Zz9" * 60_000,
    "si" + "g=" + "a1%2F" * 200_000,
])
@pytest.mark.timeout(30)
def test_adversarial_megabytes_finish(text: str) -> None:
    clean, _ = redact(text)
    assert isinstance(clean, str)


# ---- the pattern table is data ------------------------------------------------------------------

def test_every_pattern_of_the_table_is_tried() -> None:
    """Each pattern of secret_patterns.yml is in the one alternation or tried on its own, and
    the kinds it names are the ones the module documents."""
    data = yaml.safe_load(_PATTERN_FILE.read_text("utf-8"))
    table = _bundled()
    assert len(table.members) + len(table.passes) == len(data["patterns"])
    assert [p.kind for p, _ in table.members.values()] + [p.kind for p in table.passes] \
        == [p["kind"] for p in data["patterns"] if "keywords" not in p] \
        + [p["kind"] for p in data["patterns"] if "keywords" in p]
    documented = redact_module.__doc__
    assert [p["kind"] for p in data["patterns"] if f"  {p['kind']} " not in documented] == []


def test_the_no_op_hook_never_reads_the_pattern_table(tmp_path: Path) -> None:
    """A commit that touches no governed document loads no redaction, nor its patterns."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".ai-rules.yml").write_text("extends: [adr]\n")
    (repo / "notes.txt").write_text("hello\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    probe = ("import sys; from cascade.main import main; rc = main(['hook', 'notes.txt']); "
             "r = sys.modules.get('cascade.turns.redact'); "
             "print(rc, r is not None and r._bundled.cache_info().currsize > 0)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout.split() == ["0", "False"], proc.stderr


def test_imports_nothing_heavy() -> None:
    code = ("import sys, cascade.turns.redact, cascade.turns.replies; "
            "print(sorted(m for m in ('litellm', 'jinja2', 'json_repair') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
