"""Secrets never reach the graph: one redaction function for task inputs and the audit trail.

A key names a secret when, lower-cased with everything but letters and digits dropped, it
contains one of ``_SECRET_PARTS`` (``apiToken``, ``dbPassword``, ``github_token``,
``awsSecretAccessKey``, ``X-Api-Key``, ``myPrivateKeyPem``), or when one of its words
(split at separators and camelCase) is one of ``_SECRET_WORDS`` (``pin``, ``DB_PASS``,
``userOTP``, ``basic_auth``). Short words match only whole, so ``shipping``, ``passenger``,
``compass`` and ``author`` are not secrets; the price is that ``dbpass`` written as one
lower-case word is not caught either.

Over-redaction is deliberate: ``maxTokens``, ``tokenCount``, ``tokenizer`` or
``authorizationUrl`` lose their values too, because a lost count beats a leaked key.
Only key names are judged; a value that looks like a secret under a plain key is kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"

_SECRET_PARTS = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "privkey",
    "signingkey",
    "encryptionkey",
    "sessionkey",
    "masterkey",
    "licensekey",
    "credential",
    "authorization",
    "bearer",
    "cookie",
    "connectionstring",
)
# Too short to be substrings (pin: shipping, pass: compass, auth: author): whole words only.
_SECRET_WORDS = frozenset({"pin", "otp", "totp", "cvv", "cvc", "pass", "auth", "ssn", "jwt", "dsn"})
# Words of a key: "XApiKey" -> X, Api, Key; "userPIN2" -> user, PIN, 2; "DB_PASS" -> DB, PASS.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


# ---------------------------------------------------------------------------------------
# Keys and structures
def _is_secret_schema(entry: object) -> bool:
    if not isinstance(entry, Mapping):
        return False
    if entry.get("secret") is True or entry.get("x-secret") is True or entry.get("sensitive") is True:
        return True
    return bool(entry.get("format") == "password" or entry.get("writeOnly") is True)


def is_secret_name(key: str) -> bool:
    """True for a key that names a secret: ``apiToken``, ``DB_PASSWORD``, ``x-api-key``, ``userPin``."""
    name = re.sub(r"[^a-z0-9]", "", key.lower())
    if any(part in name for part in _SECRET_PARTS):
        return True
    return any(word.lower() in _SECRET_WORDS for word in _WORD.findall(key))


def _field_schemas(schema: object) -> Mapping[str, Any]:
    """A JSON-Schema object's ``properties``, or a plain {field: entry} mapping."""
    if not isinstance(schema, Mapping):
        return {}
    props = schema.get("properties")
    if isinstance(props, Mapping):
        return props
    return {k: v for k, v in schema.items() if isinstance(v, Mapping)}


def redact_secrets(inputs: Any, schema: Any = None) -> Any:
    """Replace every secret value in ``inputs`` with ``"[redacted]"`` (returns a new structure).

    A field is secret when its schema entry is tagged (``secret: true``, ``x-secret: true``,
    ``sensitive: true``, ``writeOnly: true`` or ``format: "password"``) or when its key names a
    secret (:func:`is_secret_name`). Nested objects and arrays of objects are walked with their
    sub-schemas (``properties`` / ``items``).
    """
    if isinstance(inputs, Mapping):
        fields = _field_schemas(schema)
        out: dict[str, Any] = {}
        for key, value in inputs.items():
            entry = fields.get(key) if isinstance(key, str) else None
            if (isinstance(key, str) and is_secret_name(key)) or _is_secret_schema(entry):
                out[key] = REDACTED if value is not None else None
            else:
                out[key] = redact_secrets(value, entry)
        return out
    if isinstance(inputs, (list, tuple)):
        item_schema = schema.get("items") if isinstance(schema, Mapping) else None
        if _is_secret_schema(item_schema):
            return [REDACTED for _ in inputs]
        return [redact_secrets(v, item_schema) for v in inputs]
    return inputs


# ---------------------------------------------------------------------------------------
# Text (the audit trail's copy of a tool's input and output)
_KEY = r"[A-Za-z_][\w.-]*"
# A `key: value` / `key=value` line, the key optionally quoted (JSON, YAML, env files, rendered hits).
_LINE = re.compile(rf"^(\s*[\"']?)({_KEY})([\"']?[ \t]*[:=][ \t]*)(.*)$")
# A key inside a line: after a space, `{`, `,`, `;`, `?` or `&` (related nodes' `{k: v, ...}`, query strings).
_INLINE = re.compile(rf"(?<=[\s{{,;?&])([\"']?)({_KEY})([\"']?[ \t]*[:=])")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def redact_deep(data: Any) -> Any:
    """:func:`redact_secrets`, and every string inside redacted as text (:func:`redact_text`) too."""
    if isinstance(data, str):
        return redact_text(data)
    if isinstance(data, Mapping):
        return {k: redact_deep(v) for k, v in redact_secrets(data).items()}
    if isinstance(data, (list, tuple)):
        return [redact_deep(v) for v in data]
    return data


def _cut(head: str) -> str:
    """``head`` (up to and including the separator) followed by the marker: ``key: [redacted]``."""
    return f"{head}{REDACTED}" if head[-1:].isspace() or head.endswith("=") else f"{head} {REDACTED}"


def _redact_inline(text: str) -> str:
    """Cut the rest of the line at the first secret-named key inside it (a value's end is not knowable)."""
    for m in _INLINE.finditer(text):
        if is_secret_name(m.group(2)):
            return _cut(text[: m.end()])
    return text


def _redact_line(line: str) -> tuple[str, bool]:
    """(the line redacted, whether it was cut so that deeper-indented lines belong to the cut value)."""
    m = _LINE.match(line)
    if m is None:
        cut = _redact_inline(line)
        return cut, cut != line  # a cut line's deeper-indented continuation is the rest of it too
    head, value = m.group(1) + m.group(2) + m.group(3), m.group(4)
    if is_secret_name(m.group(2)):
        return _cut(head), True
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, (dict, list)):
        safe = redact_deep(data)
        return (line if safe == data else head + json.dumps(safe, ensure_ascii=False)), False
    cut = _redact_inline(value)
    return head + cut, cut != value


def redact_text(text: str) -> str:
    """A tool's input or output with its secrets redacted, unchanged when it holds none.

    JSON is redacted structurally (and its strings as text). Other text line by line: the value
    of a ``key: value`` or ``key=value`` line whose key names a secret, with the lines indented
    below it (a multi-line value, a nested YAML block); and after a secret-named key inside a line
    (``{name: x, apiToken: y}``, ``?api_key=...``, ``export DB_PASSWORD=...``) the rest of that line,
    with the lines indented below it (a related node's multi-line value continues there).
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, (dict, list, str)):
        safe = redact_deep(data)
        return text if safe == data else json.dumps(safe, ensure_ascii=False, indent=2, default=str)
    out: list[str] = []
    owner: int | None = None  # indentation of the secret line whose value is still running
    for line in text.split("\n"):
        if owner is not None and _indent(line) > owner:
            continue
        redacted, secret = _redact_line(line)
        owner = _indent(line) if secret else None
        out.append(redacted)
    return "\n".join(out)
