"""Secrets never reach the graph: one redaction function for task inputs and the audit trail."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"

# A key is secret when its name, lower-cased with everything but letters and digits dropped,
# contains one of these. Over-redaction (maxTokens, tokenCount) is the price of catching
# apiToken, dbPassword, github_token or awsSecretAccessKey: a lost count beats a leaked key.
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
    "signingkey",
    "encryptionkey",
    "sessionkey",
    "masterkey",
    "credential",
    "authorization",
    "bearer",
    "cookie",
)
# Short names that would match too much as substrings (pin: shipping, otp: hotpot).
_SECRET_NAMES = frozenset({"pin", "otp", "cvv", "cvc", "pass", "auth", "ssn"})


# ---------------------------------------------------------------------------------------
# Secrets
def _is_secret_schema(entry: object) -> bool:
    if not isinstance(entry, Mapping):
        return False
    if entry.get("secret") is True or entry.get("x-secret") is True or entry.get("sensitive") is True:
        return True
    return bool(entry.get("format") == "password" or entry.get("writeOnly") is True)


def is_secret_name(key: str) -> bool:
    """True for a key that names a secret: ``apiToken``, ``DB_PASSWORD``, ``x-api-key``, ``pin``."""
    name = re.sub(r"[^a-z0-9]", "", key.lower())
    return name in _SECRET_NAMES or any(part in name for part in _SECRET_PARTS)


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
    secret (:func:`is_secret_name`: password, token, apiKey, privateKey, credential, ... inside
    any compound name). Nested objects and
    arrays of objects are walked with their sub-schemas (``properties`` / ``items``).
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


_LINE = re.compile(r"^(\s*[\"']?)([A-Za-z_][\w.-]*)([\"']?\s*[:=]\s*)(.+)$", re.MULTILINE)


def redact_text(text: str) -> str:
    """A tool's output with its secrets redacted: JSON structurally, other text line by line
    (the value of every ``key: value`` or ``key=value`` line whose key names a secret)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, (dict, list)):
        return json.dumps(redact_secrets(data), ensure_ascii=False, indent=2, default=str)

    def line(m: re.Match[str]) -> str:
        return f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}" if is_secret_name(m.group(2)) else m.group(0)

    return _LINE.sub(line, text)
