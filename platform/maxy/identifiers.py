"""The shapes of names that travel between layers: an agent's slug, and the name of a plugin,
its MCP server or a specialist. A leaf module: settings, the graph, the plugin system and the
API keys all check names here."""

from __future__ import annotations

import re

from .errors import ValidationError

SLUG_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")  # an agent's slug (fullmatch)
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")  # a plugin's, its server's, a specialist's name (fullmatch)


def check_agent_slug(slug: object, *, field: str = "agents") -> str:
    """``slug`` when it is an agent's slug (lower-case letters, digits, ``-`` or ``_``, at most
    64); else ValidationError naming ``field``."""
    if not isinstance(slug, str) or not SLUG_RE.fullmatch(slug):
        raise ValidationError(
            field, f"invalid agent slug {slug!r}: lower-case letters, digits, '-' or '_' (at most 64)"
        )
    return slug


def unknown_member(member_id: object, field: str = "memberId") -> ValidationError:
    """The one refusal for a member that does not exist or that the caller may not name."""
    return ValidationError(field, f"no member {member_id!r} you can see in this account; list_networks shows them")
