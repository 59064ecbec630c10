"""Secrets never reach the graph: one redaction function for task inputs and the audit trail."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"

_SECRET_NAMES = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "authtoken",
        "bearertoken",
        "privatekey",
        "clientsecret",
        "apisecret",
        "pin",
        "otp",
    }
)


# ---------------------------------------------------------------------------------------
# Secrets
def _is_secret_schema(entry: object) -> bool:
    if not isinstance(entry, Mapping):
        return False
    if entry.get("secret") is True or entry.get("x-secret") is True or entry.get("sensitive") is True:
        return True
    return bool(entry.get("format") == "password" or entry.get("writeOnly") is True)


def _is_secret_name(key: str) -> bool:
    return re.sub(r"[^a-z0-9]", "", key.lower()) in _SECRET_NAMES


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
    ``sensitive: true``, ``writeOnly: true`` or ``format: "password"``) or when its key is a
    well-known secret name (password, token, apiKey, clientSecret, ...). Nested objects and
    arrays of objects are walked with their sub-schemas (``properties`` / ``items``).
    """
    if isinstance(inputs, Mapping):
        fields = _field_schemas(schema)
        out: dict[str, Any] = {}
        for key, value in inputs.items():
            entry = fields.get(key) if isinstance(key, str) else None
            if (isinstance(key, str) and _is_secret_name(key)) or _is_secret_schema(entry):
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
