"""Every secret shape of `store/engine/secret_rules.toml` is redacted, each tested here with
examples of its own (made of pieces, so this file holds no whole token), and ordinary text that
looks a little like one is left alone."""

from __future__ import annotations

import tomllib

import pytest

from store.engine.redaction import RULES_FILE, clean, redact

HEX = "0123456789abcdef" * 2
B64 = "QWxhZGRpbjpvcGVuIHNlc2FtZQ"
ALNUM = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

# kind -> (text holding the secret, the secret itself, what must still be there)
EXAMPLES: dict[str, list[tuple[str, str, str]]] = {
    "private_key": [
        ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF" + B64 + "\n-----END PGP PRIVATE KEY BLOCK-----",
         "lQOYBF" + B64, ""),
        ("key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC" + B64 + "\n-----END OPENSSH PRIVATE KEY-----",
         "b3BlbnNzaC" + B64, "key:"),
    ],
    "url_password": [
        ("REDIS_URL=redis://:" + "s3cr3tpw" + "@cache:6379/0", "s3cr3tpw", "@cache:6379/0"),
        ("postgres://app:" + "hunter22" + "@db.internal/app", "hunter22", "postgres://app:"),
    ],
    "anthropic_key": [("export ANTHROPIC_API_KEY=sk-ant-" + "api03-" + ALNUM, ALNUM, "export")],
    "openai_key": [("OPENAI_API_KEY is sk-" + "proj-" + ALNUM, ALNUM, "OPENAI_API_KEY is")],
    "github_token": [("token ghp_" + ALNUM, ALNUM, "token")],
    "gitlab_token": [("git clone https://oauth2@gitlab.com/x.git with glpat-" + ALNUM[:20], ALNUM[:20], "git clone")],
    "huggingface_token": [("HF token hf_" + ALNUM[:34] + " for the hub", ALNUM[:34], "for the hub")],
    "npm_token": [("//registry.npmjs.org/:_authToken=npm_" + ALNUM[:36], ALNUM[:36], "registry.npmjs.org")],
    "aws_access_key": [("aws key AKIA" + "IOSFODNN7EXAMPLE" + " set", "IOSFODNN7EXAMPLE", "set")],
    "slack_token": [("slack xoxb-" + "1234567890-" + ALNUM, ALNUM, "slack")],
    "slack_webhook": [("curl -X POST https://hooks.slack.com/services/" + "T00000000/B00000000/" + ALNUM[:24],
                       "B00000000/" + ALNUM[:24], "https://hooks.slack.com/services/")],
    "discord_webhook": [("post to https://discord.com/api/webhooks/" + "123456789012345678/" + ALNUM + "_x",
                         ALNUM, "https://discord.com/api/webhooks/")],
    "google_api_key": [("maps AIza" + "SyA-" + ALNUM[:31], ALNUM[:31], "maps")],
    "stripe_key": [("STRIPE=sk_" + "live_" + ALNUM, ALNUM, "STRIPE")],
    "sendgrid_key": [("mail with SG." + ALNUM[:22] + "." + ALNUM[:30], ALNUM[:22], "mail with")],
    "twilio_key": [("twilio SK" + HEX + " done", HEX, "done")],
    "azure_storage_key": [
        ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + B64 + "ab/cd+ef==;EndpointSuffix=core",
         B64, "AccountName=acct;AccountKey="),
    ],
    "aws_secret_key": [('{"AccessKeyId": "AKIA' + 'IOSFODNN7EXAMPLE", "SecretAccessKey": "' + "wJalrXUtnFEMI/K7MDENG/"
                        + "bPxRfiCYEXAMPLEKEY" + '"}', "bPxRfiCYEXAMPLEKEY", '"SecretAccessKey": "'),
                       ("aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY",
                        "bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = ")],
    "npm_auth_token": [("//registry.npmjs.org/:_authToken=" + "0d1b0c5e-8a4f-4d2b-9c1e-" + "5f6a7b8c9d0e",
                        "5f6a7b8c9d0e", "registry.npmjs.org/:_authToken=")],
    "slack_app_token": [("SLACK_APP xapp-" + "1-A0123456789-" + ALNUM, ALNUM, "SLACK_APP")],
    "stripe_webhook_secret": [("endpoint secret whsec_" + ALNUM, ALNUM, "endpoint secret")],
    "google_oauth_token": [("access ya29." + "a0AfH6SM" + ALNUM, ALNUM, "access")],
    "azure_sas_signature": [("https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=" + B64 + "%3D&se=x",
                             B64, "https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=")],
    "vault_token": [("VAULT_TOKEN hvs." + "CAESI" + ALNUM, ALNUM, "VAULT_TOKEN")],
    "pypi_token": [("upload with pypi-" + "AgEIcHlwaS5vcmc" + ALNUM, ALNUM, "upload with")],
    "digitalocean_token": [("doctl dop_v1_" + HEX * 2, HEX * 2, "doctl")],
    "docker_pat": [("docker login -p dckr_pat_" + ALNUM[:27], ALNUM[:27], "docker login")],
    "shopify_token": [("shop token shpat_" + HEX, HEX, "shop token")],
    "telegram_bot_token": [("bot 123456789:" + "AA" + ALNUM[:33] + " ok", ALNUM[:33], "bot")],
    "sentry_dsn": [("SENTRY_DSN=https://" + HEX + "@o12345.ingest.sentry.io/678", HEX,
                    "@o12345.ingest.sentry.io/678")],
    "age_secret_key": [("AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S3JN54KHCE",
                        "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", "")],
    "putty_private_key": [("PuTTY-User-Key-File-3: ssh-ed25519\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\n"
                           "Private-Lines: 1\n" + B64 + "\nPrivate-MAC: 00ff", B64, "Public-Lines: 1")],
    "netrc_password": [("machine api.example.com\n  login deploy\n  password " + "Tr0ub4dor", "Tr0ub4dor",
                        "machine api.example.com"),
                       ("machine h login me password " + "Tr0ub4dor" + " macdef x", "Tr0ub4dor", "login me")],
    "quoted_secret": [('password = "' + "correct horse battery staple" + '"', "horse battery staple",
                       "password = "),
                      ("DB_PASSWORD='" + "open sesame now" + "'", "sesame now", "DB_PASSWORD=")],
    "jwt": [("session eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0In0.c2lnbmF0dXJlX2hlcmU", "c2lnbmF0dXJlX2hlcmU",
             "session")],
    "basic_auth": [('curl -H "Authorization: Basic ' + B64 + '" https://api', B64, "Authorization: Basic ")],
    "bearer_token": [("Authorization: Bearer " + ALNUM, ALNUM, "Authorization: Bearer ")],
    "curl_user": [("curl -u deploy:" + "pa55word!" + " https://x", "pa55word!", "curl -u deploy:"),
                  ("curl --user=deploy:" + "pa55word!" + " https://x", "pa55word!", "--user=deploy:")],
    "sshpass_password": [("sshpass -p " + "'Tr0ub4dor'" + " ssh deploy@host", "Tr0ub4dor", "ssh deploy@host"),
                         ("sshpass -e -p" + "Tr0ub4dor" + " ssh host", "Tr0ub4dor", "sshpass -e -p")],
    "mysql_password": [("mysql -h db -u root -p" + "Tr0ub4dor" + " shop", "Tr0ub4dor", "-u root -p"),
                       ("mysqldump --password=" + "Tr0ub4dor" + " shop", "Tr0ub4dor", "mysqldump --password=")],
    "env_password": [("PGPASSWORD=" + "Tr0ub4dor" + " psql -h db", "Tr0ub4dor", "PGPASSWORD="),
                     ("DB_PASS=" + "Tr0ub4dor", "Tr0ub4dor", "DB_PASS="),
                     ("export MYSQL_PWD=" + "Tr0ub4dor", "Tr0ub4dor", "MYSQL_PWD="),
                     ("REDIS_PASSWORD: " + "Tr0ub4dor", "Tr0ub4dor", "REDIS_PASSWORD: ")],
    "assigned_secret": [("password = " + "hunter2hunter2", "hunter2hunter2", "password = "),
                        ("client_secret: " + "abcdEFGH1234", "abcdEFGH1234", "client_secret: ")],
}

ORDINARY = [
    "The tests pass: all 40 of them",
    "A basic configuration works for most users",
    "docker run -u 1000:1000 image",
    "Ask the task runner; skip the slow ones",
    "mysql -p asks for the password",
    "bypass = true in the settings",
    "Use https://hooks.slack.com for notices (see docs)",
    "PGPASSWORD=*** was set by the wrapper",
]


def rule_ids() -> list[str]:
    with open(RULES_FILE, "rb") as handle:
        return [rule["id"] for rule in tomllib.load(handle)["rule"]]


def test_every_rule_in_the_data_file_has_examples_here():
    assert sorted(rule_ids()) == sorted(EXAMPLES)


@pytest.mark.parametrize(("kind", "text", "secret", "kept"),
                         [(kind, *example) for kind, examples in EXAMPLES.items() for example in examples])
def test_each_secret_shape_is_redacted_and_named(kind, text, secret, kept):
    redacted, counts = redact(text)
    assert secret not in redacted, redacted
    assert f"[REDACTED:{kind}]" in redacted, redacted
    assert kept in redacted
    assert counts.get(kind, 0) >= 1


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_as_it_is(text):
    assert redact(text) == (text, {})


def _forward_only(pattern: str) -> str | None:
    """Why a match attempt of `pattern` may give back what it read, or start inside a run of the
    characters it reads (the two together made `jwt` quadratic); None when it can do neither.

    Read from the pattern's parse, not from a clock: the pattern must open with a negative
    lookbehind of a class C (so an attempt begins only where a run of C begins), its first
    character must be of C, and after that come only single characters and repeats that are
    possessive (`{n,}+`, which never give back) or of a fixed count, each of one character
    class or literal. Every attempt is then one forward pass that starts at the start of a run;
    with k repeats, the engine reads each character of the text at most k + 1 times."""
    from re import _constants as c
    from re import _parser

    def chars(node) -> set[int] | None:  # the characters one node of a class or a literal matches
        op, av = node
        if op is c.LITERAL:
            return {av}
        if op is c.IN:
            found: set[int] = set()
            for item, value in av:
                if item is c.LITERAL:
                    found.add(value)
                elif item is c.RANGE:
                    found.update(range(value[0], value[1] + 1))
                else:
                    return None  # a category or a negated class: not checked here
            return found
        return None

    nodes = list(_parser.parse(pattern))
    if not nodes or nodes[0][0] is not c.ASSERT_NOT or nodes[0][1][0] != -1:
        return "it does not open with a negative lookbehind: an attempt may start inside a run"
    behind = list(nodes[0][1][1])
    run = chars(behind[0]) if len(behind) == 1 else None
    if run is None:
        return "its lookbehind is not one character class"
    first = chars(nodes[1]) if len(nodes) > 1 else None
    if first is None or not first <= run:
        return "its first character is not one the lookbehind refuses before it"
    for op, av in nodes[1:]:
        if op in (c.LITERAL, c.IN):
            continue
        if op in (c.POSSESSIVE_REPEAT, c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, body = av
            if len(body) != 1 or chars(body[0]) is None:
                return "a repeat of more than one character class"
            if op is c.POSSESSIVE_REPEAT or low == high:
                continue
            return f"a repeat {{{low},{'' if high is c.MAXREPEAT else high}}} that may give back what it read"
        return f"a part ({op}) this check does not read"
    return None


def test_the_jwt_rule_cannot_backtrack_over_its_input():
    """`eyJ-` repeated (256 KB in the issue took 13 s): the `jwt` rule was quadratic, each
    position of a run of token characters starting an attempt that read to the run's end and
    gave it back a character at a time. Proved from the pattern's structure (`_forward_only`),
    not timed: attempts start only where a run starts, and none gives back what it read. The
    time it takes is measured by `benchmarks/bench_hostile_hooks.py redaction` (docs/benchmarks.md)."""
    rules = {rule["id"]: rule for rule in tomllib.loads(RULES_FILE.read_text(encoding="utf-8"))["rule"]}
    assert _forward_only(rules["jwt"]["pattern"]) is None
    # The check tells the quadratic shapes apart: the rule as it was, and each half of the fix.
    token = "[A-Za-z0-9_-]"
    was = rf"eyJ{token}{{8,}}\.eyJ{token}{{8,}}\.{token}{{8,}}"
    assert "lookbehind" in _forward_only(was)
    assert "give back" in _forward_only(rf"(?<!{token}){was}")
    assert "lookbehind" in _forward_only(was.replace("}", "}+"))
    # And the rule still finds nothing in the text that was slow, and a token where there is one.
    large = "eyJ-" * 16000
    assert redact(large) == (large, {})
    text, secret, _ = EXAMPLES["jwt"][0]
    assert redact(large + " " + text)[1] == {"jwt": 1} and secret not in redact(large + " " + text)[0]


def test_cleaning_records_what_was_redacted():
    cleaned = clean("PGPASSWORD=Tr0ub4dor psql && curl -u me:pa55word! https://x")
    assert cleaned.redactions == {"curl_user": 1, "env_password": 1}
