"""Who calls the HTTP server: the API key a request presents, the view it pins, the 401.

Every router of ``maxy serve`` (``/mcp``, the console, agents, the gateway, negotiation)
authenticates here, so all of them read a key the same way and pin the same view for it. The
keys themselves are kept by :mod:`maxy.serving.keys`.
"""

from __future__ import annotations

import hmac
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..accounts import AccountError, validate_account
from ..config import Settings
from ..db import Database
from ..errors import ConfigError, ValidationError
from ..httpjson import JSONAnswer
from ..logs import log_line, short
from ..mcp.server import check_public_pins, pinned_context
from ..plugins.api import ToolContext
from .keys import ApiKey

API_KEY_HEADER = "x-api-key"
REALM = "maxy"


@dataclass(frozen=True)
class KeyRefusal:
    """Why a request presents no API key that can be used (a 401)."""

    reason: str  # missing-key, not-bearer, conflicting-keys, unknown-key
    message: str

    def challenge(self) -> str:
        """The WWW-Authenticate value (RFC 6750): no error code when no key was sent at all."""
        base = f'Bearer realm="{REALM}"'
        if self.reason in ("missing-key", "not-bearer"):
            return base
        error = "invalid_token" if self.reason == "unknown-key" else "invalid_request"
        return f'{base}, error="{error}", error_description="{self.message}"'


UNKNOWN_KEY = KeyRefusal("unknown-key", "unknown API key")


def presented_key(headers: Mapping[str, str]) -> tuple[str | None, KeyRefusal | None]:
    """(the API key a request presents, None), or (None, why it presents none that can be used).

    ``Authorization: Bearer <key>`` and ``x-api-key: <key>`` are equivalent; both with the same
    key is fine, with different keys is refused. Another Authorization scheme (Basic from a
    proxy in front, say) is ignored beside an x-api-key and refused on its own."""
    api_key = (headers.get(API_KEY_HEADER) or "").strip() or None
    authorization = (headers.get("authorization") or "").strip()
    scheme, _, token = authorization.partition(" ")
    is_bearer = scheme.lower() == "bearer"
    bearer = (token.strip() or None) if is_bearer else None
    if authorization and not is_bearer and api_key is None:
        return None, KeyRefusal(
            "not-bearer",
            f"Authorization: only the Bearer scheme is accepted (Authorization: Bearer <key>), not {scheme}",
        )
    if api_key and bearer and not hmac.compare_digest(api_key.encode(), bearer.encode()):
        return None, KeyRefusal(
            "conflicting-keys",
            "x-api-key and Authorization: Bearer carry different keys: send one key, in either header",
        )
    key = api_key or bearer
    if key is None:
        return None, KeyRefusal(
            "missing-key", "missing API key: send Authorization: Bearer <key> (or x-api-key: <key>)"
        )
    return key, None


def context_for_key(settings: Settings, record: ApiKey, *, db: Database, embedder: Any) -> ToolContext:
    """The ToolContext an API key pins: its account (validated), role, scopes, agent, task role and
    member, no session.
    ``/mcp`` and the console both build their callers here, so both see exactly the same view."""
    account = validate_account(settings.data_root, record.account_id)
    pinned = settings.model_copy(
        update={
            "ACCOUNT_ID": account.account_id,
            "ALLOWED_SCOPES": list(record.scopes) if record.scopes else None,
            "AGENT_SLUG": record.agent_slug,
            "SESSION_ID": None,
            "SESSION_NODE_ID": None,
            "KNOWLEDGE_KEYWORDS": None,
            "TASK_ROLE": record.task_role,  # the key's, never the serving process's own
            "MEMBER_ID": record.member_id,  # likewise
        }
    )
    if record.role == "public":  # a key file edited by hand must not widen a public key
        check_public_pins(pinned)
    log_line(
        "mcp",
        "pinned",
        role=record.role,
        accountId=short(account.account_id),
        scopes=record.scopes or "all",
        agent=record.agent_slug,
        taskRole=record.task_role,
        member=record.member_id,
        keyId=record.key_id,
    )
    return pinned_context(pinned, record.role, account, db=db, embedder=embedder)


def unauthorized(refusal: KeyRefusal | None) -> Any:
    """The 401 for a request without a usable API key (logged), with its Bearer challenge."""
    refusal = refusal or UNKNOWN_KEY
    log_line("mcp-http", "auth-failed", level=logging.WARNING, reason=refusal.reason)
    return JSONAnswer({"error": refusal.message}, status_code=401, headers={"WWW-Authenticate": refusal.challenge()})


class UsableKeys:
    """Whether a resolved key pins a usable view, by the same ``context_for_key`` that ``/mcp``
    and the console build their callers with; the pins found good are remembered (a key whose
    account goes away no longer resolves at all)."""

    def __init__(self, settings: Settings, db: Database, embedder: Any):
        self.settings = settings
        self.db = db
        self.embedder = embedder
        self._good: set[tuple[Any, ...]] = set()
        self._lock = threading.Lock()

    def problem(self, record: Any) -> tuple[str, str] | None:
        """None when the key is usable; otherwise why not, as shown to its holder and as logged."""
        pins = (record.key_id, record.account_id, record.role, record.scopes, record.agent_slug)
        with self._lock:
            if pins in self._good:
                return None
        try:
            context_for_key(self.settings, record, db=self.db, embedder=self.embedder)
        except ConfigError as unusable:  # a public key whose record lost its pins
            return str(unusable), str(unusable)
        except (AccountError, ValidationError) as gone:  # its message names paths: logged, not shown
            return "its account is gone or unreadable: ask the operator for a new key", str(gone)
        with self._lock:
            self._good.add(pins)
        return None
