"""The OpenAPI description of ``/mcp``: the MCP endpoint is a mounted ASGI app, which FastAPI
leaves out of ``/openapi.json``; this adds its operations and both ways to send the API key
(``Authorization: Bearer`` and ``x-api-key``) as security schemes, so ``/docs`` shows them."""

from __future__ import annotations

from typing import Any

BEARER_SCHEME = "bearerAuth"
API_KEY_SCHEME = "apiKeyHeader"

SECURITY_SCHEMES: dict[str, Any] = {
    BEARER_SCHEME: {
        "type": "http",
        "scheme": "bearer",
        "description": "`Authorization: Bearer <key>`, a key made by `maxy mcp key create` (mxy_<keyId>_<secret>).",
    },
    API_KEY_SCHEME: {
        "type": "apiKey",
        "in": "header",
        "name": "x-api-key",
        "description": "The same key in the `x-api-key` header. Sending both headers with different keys is a 401.",
    },
}

_UNAUTHORIZED = {
    "description": "Missing, unknown or conflicting API key; nothing was read.",
    "headers": {
        "WWW-Authenticate": {
            "description": 'Bearer realm="maxy" (with error and error_description when a key was refused)',
            "schema": {"type": "string"},
        }
    },
    "content": {
        "application/json": {
            "schema": {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]},
            "example": {"error": "unknown API key"},
        }
    },
}
_NOT_FOUND = {"description": "Unknown or expired MCP session, or one opened with another key."}
_SESSION = {
    "name": "mcp-session-id",
    "in": "header",
    "required": False,
    "description": "The session the server assigned in its answer to initialize.",
    "schema": {"type": "string"},
}
_CONVERSATION = {
    "name": "x-maxy-session-id",
    "in": "header",
    "required": False,
    "description": "The client's own session id: the active conversation (session-compact, session-context, "
    "the audit). Default: the MCP session.",
    "schema": {"type": "string", "maxLength": 256},
}
_JSON_RPC = {
    "type": "object",
    "description": "One JSON-RPC 2.0 message (request, notification or response) of the MCP protocol.",
    "properties": {
        "jsonrpc": {"type": "string", "enum": ["2.0"]},
        "id": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "method": {"type": "string"},
        "params": {"type": "object"},
    },
    "required": ["jsonrpc"],
}


def mcp_path_item(tag: str = "mcp") -> dict[str, Any]:
    """The ``/mcp`` path item: POST (a message), GET (the server's stream), DELETE (end the session)."""
    security: list[dict[str, list[str]]] = [{BEARER_SCHEME: []}, {API_KEY_SCHEME: []}]  # either one
    return {
        "post": {
            "tags": [tag],
            "summary": "Send one MCP message (streamable HTTP)",
            "description": "The MCP streamable HTTP transport. The API key pins the account, role (admin or "
            "public tool set), agent and scopes of every call. Send `Accept: application/json, "
            "text/event-stream`.",
            "operationId": "mcp_post",
            "security": security,
            "parameters": [_SESSION, _CONVERSATION],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": _JSON_RPC,
                        "example": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                    }
                },
            },
            "responses": {
                "200": {
                    "description": "The JSON-RPC answer, as JSON or as a server-sent event stream.",
                    "content": {"application/json": {"schema": _JSON_RPC}, "text/event-stream": {}},
                },
                "202": {"description": "A notification or response was accepted."},
                "400": {"description": "Not one JSON-RPC message: a JSON-RPC error (-32700 or -32600)."},
                "401": _UNAUTHORIZED,
                "404": _NOT_FOUND,
            },
        },
        "get": {
            "tags": [tag],
            "summary": "Open the server's event stream for a session",
            "operationId": "mcp_get",
            "security": security,
            "parameters": [_SESSION],
            "responses": {
                "200": {"description": "Server-sent events.", "content": {"text/event-stream": {}}},
                "401": _UNAUTHORIZED,
                "404": _NOT_FOUND,
            },
        },
        "delete": {
            "tags": [tag],
            "summary": "End a session",
            "operationId": "mcp_delete",
            "security": security,
            "parameters": [_SESSION],
            "responses": {"200": {"description": "The session is ended."}, "401": _UNAUTHORIZED, "404": _NOT_FOUND},
        },
    }


def add_mcp(schema: dict[str, Any], path: str) -> dict[str, Any]:
    """``schema`` (FastAPI's) with ``path`` and the security schemes added."""
    schema.setdefault("paths", {})[path] = mcp_path_item()
    schema.setdefault("components", {}).setdefault("securitySchemes", {}).update(SECURITY_SCHEMES)
    return schema
