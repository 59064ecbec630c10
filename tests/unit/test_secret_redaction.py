"""Secrets never reach the graph: redaction by normalised substring of the key name (short
words such as pin or pass only whole), for Task inputs and the audit trail's input and output,
checked as pure functions (end to end through the tools: ``tests/integration/test_secret_redaction_tools.py``)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from maxy.mcp.audit import _input_json
from maxy.secrets import REDACTED, is_secret_name, redact_secrets, redact_text

SECRET_WORDS = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "api_key",
    "privatekey",
    "private-key",
    "credential",
    "credentials",
    "accesskey",
    "authorization",
    "cookie",
    "bearer",
    "signingkey",
    "sessionkey",
    "pwd",
]
SHORT_WORDS = ["pin", "otp", "cvv", "pass", "auth", "ssn"]
COMPOUND = [
    "apiToken",
    "dbPassword",
    "github_token",
    "awsSecretAccessKey",
    "X-Api-Key",
    "client_secret_value",
    "myPrivateKeyPem",
    "DB_PASSWD",
    "DB_PASS",
    "db.pass",
    "refresh-token",
    "SMTP_CREDENTIALS",
    "sessionKey",
    "pwd",
    "PIN",
    "userPin",
    "PINCode",
    "otp",
    "basic_auth",
    "Authorization",
    "Cookie",
    "x-amz-security-token",
]
PLAIN = [
    "hostname",
    "keywords",
    "keywordsText",
    "title",
    "name",
    "sessionId",
    "shipping",
    "author",
    "description",
    "spinner",
    "hotpot",
    "passenger",
    "compassion",
    "bypass",
    "authorName",
    "nodeId",
    "completedAt",
]


def test_compound_names_are_secret_and_plain_names_are_not() -> None:
    assert all(is_secret_name(k) for k in COMPOUND), [k for k in COMPOUND if not is_secret_name(k)]
    assert not any(is_secret_name(k) for k in PLAIN), [k for k in PLAIN if is_secret_name(k)]
    # Deliberate: counts named after tokens go too; a short word run into another is not seen.
    assert is_secret_name("maxTokens") and is_secret_name("tokenCount") and not is_secret_name("dbpass")


separators = st.sampled_from(["", "_", "-", ".", " "])
affixes = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", max_size=8)
casings = st.sampled_from([str.lower, str.upper, str.title])


@given(st.sampled_from(SECRET_WORDS), affixes, affixes, separators, separators, casings)
def test_a_key_holding_a_secret_word_never_keeps_its_value(word, prefix, suffix, sep1, sep2, case) -> None:
    key = f"{prefix}{sep1}{case(word)}{sep2}{suffix}"
    nested = {"outer": [{key: "s3cr3t-value", "ok": "kept"}], key: {"deep": "s3cr3t-value"}}
    out = redact_secrets(nested)
    assert "s3cr3t-value" not in json.dumps(out)
    assert out["outer"][0]["ok"] == "kept" and out[key] == REDACTED


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6)


@given(st.sampled_from(SHORT_WORDS), words, words, st.sampled_from(["_", "-", ".", " ", "camel"]), casings)
def test_a_short_secret_word_standing_as_a_word_never_keeps_its_value(word, prefix, suffix, sep, case) -> None:
    if sep == "camel":
        key = f"{prefix}{word.title()}{suffix.title()}"  # userPinCode
    else:
        key = f"{case(prefix)}{sep}{case(word)}{sep}{case(suffix)}"  # DB_PASS_X, user-pin-code
    assert redact_secrets({key: "s3cr3t-value"}) == {key: REDACTED}, key


@given(st.dictionaries(st.sampled_from(PLAIN), st.text(max_size=20), max_size=6))
def test_keys_without_a_secret_word_survive_unchanged(data) -> None:
    assert redact_secrets(data) == data


value_text = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 .,-/", max_size=30)


@given(st.lists(st.tuples(st.sampled_from(PLAIN), value_text), max_size=8), st.sampled_from(["", "  ", "    "]))
def test_text_without_a_secret_name_is_unchanged(pairs, indent) -> None:
    text = "[Note] (id: n1) (score: 0.700)\n" + "\n".join(f"{indent}{k}: {v}" for k, v in pairs)
    assert redact_text(text) == text
    as_json = json.dumps(dict(pairs))
    assert redact_text(as_json) == as_json  # JSON without secrets keeps its exact form


@given(st.sampled_from(COMPOUND), st.lists(value_text, min_size=1, max_size=4), st.sampled_from([": ", "=", " = "]))
def test_a_secret_line_loses_its_value_and_its_continuation_lines(key, parts, sep) -> None:
    value = "\n    ".join(f"zq{p}" for p in parts)  # a multi-line value, continued as memory-search renders it
    text = f"[Note] (id: n1)\n  name: kept\n  {key}{sep}{value}\n  title: also kept"
    out = redact_text(text)
    assert "zq" not in out, out
    assert out.splitlines() == ["[Note] (id: n1)", "  name: kept", f"  {key}{sep}{REDACTED}", "  title: also kept"]


def test_text_output_is_redacted_line_by_line_inline_and_json_structurally() -> None:
    text = "[Note] (id: n1) (score: 0.700)\n  name: deploy notes\n  dbPassword: hunter2\n  api_token = abc123\n"
    out = redact_text(text)
    assert "hunter2" not in out and "abc123" not in out and "name: deploy notes" in out
    assert f"dbPassword: {REDACTED}" in out
    data = json.loads(redact_text(json.dumps({"taskId": "t1", "result": {"githubToken": "gh-1"}})))
    assert data == {"taskId": "t1", "result": {"githubToken": REDACTED}}
    assert redact_text("no secrets here: fine") == "no secrets here: fine"
    # related nodes render their properties inline; a secret cuts the rest of that line
    related = "  Related:\n    --[HAS]--> [Cred] {name: db, password: hunter2, zone: eu}\n  after: kept"
    assert redact_text(related) == f"  Related:\n    --[HAS]--> [Cred] {{name: db, password: {REDACTED}\n  after: kept"
    # a JSON value under a plain key, a query string, a shell line, a nested YAML block
    assert (
        redact_text('  config: {"apiToken": "t1", "host": "h"}')
        == f'  config: {{"apiToken": "{REDACTED}", "host": "h"}}'
    )
    assert redact_text("  url: https://x.example/?api_key=abc&v=1") == f"  url: https://x.example/?api_key={REDACTED}"
    assert redact_text("export DB_PASSWORD=xyz") == f"export DB_PASSWORD={REDACTED}"
    assert redact_text("credentials:\n  user: bob\n  pass: p\nafter: 1") == f"credentials: {REDACTED}\nafter: 1"
    # a JSON string whose text holds a secret line
    assert "q-1" not in redact_text(json.dumps({"note": "name: x\nsessionToken: q-1"}))


def test_the_audit_input_redacts_schema_tags_names_and_secrets_inside_strings() -> None:
    stored = _input_json(
        {
            "kind": "deploy",
            "inputs": {"cf": "cf-1", "hostname": "ok.example"},
            "inputSchema": {"properties": {"cf": {"type": "string", "secret": True}}},
            "properties": {"config": json.dumps({"apiToken": "tok-2"}), "script": "export DB_PASSWORD=pw-3"},
            "headers": [{"X-Api-Key": "key-4"}],
        }
    )
    assert not [v for v in ("cf-1", "tok-2", "pw-3", "key-4") if v in stored], stored
    assert json.loads(stored)["inputs"]["hostname"] == "ok.example"
