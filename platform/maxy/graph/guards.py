"""The five guard layers as parameterised Cypher WHERE clauses. Every read path uses them.

1. soft delete   ``n.deletedAt IS NULL`` (unconditional), and ``n.pendingWrite IS NULL``: a node
                 written by a write that has not finished yet (a large document streamed in
                 several transactions) stays hidden until that write makes it visible at once
2. scope         ``n.scope IS NULL OR n.scope IN $allowedScopes`` (when scopes are pinned)
3. agent tag     ``n.agents IS NOT NULL AND $agentSlug IN n.agents`` (when an agent is pinned)
4. related nodes the same filters for nodes reached by expansion, where untagged nodes pass
5. account       ``n.accountId = $accountId`` (always, for primary and related nodes)

``outside_community`` keeps a community's member-private records (``allowlist.COMMUNITY_LABELS``)
out of every generic read path (memory-get and its neighbourhood, search's candidates, graph
expansion and exact names, name resolution, conversations, tasks, provenance, forget and the
generic writers' look-ups): those records are read only through the community's member guard
(``maxy.community.view``), never by id elsewhere. The ordinary nodes a community writer creates (a
negotiation's Conversation, turn Messages and task-store records) carry ``CommunityRecord``, so
the same clause hides them; ``generic_guard`` is ``node_guard`` with it.

``deleted_guard`` turns layer 1 around for the admin's trash (soft-deleted nodes, to list and
restore); only a caller whose view holds the admin scope (``Caller.admin_view``) may use it.

Parameter names are prefixed ``g_`` so they never collide with a query's own parameters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..config import SCOPE_VALUES, Settings
from ..errors import ValidationError
from .allowlist import COMMUNITY_LABELS

_VAR_RE = re.compile(r"^[a-z][A-Za-z0-9_]{0,30}$")


@dataclass(frozen=True)
class Caller:
    """Who is reading. ``allowed_scopes=None`` means no scope filter (admin)."""

    account_id: str
    allowed_scopes: tuple[str, ...] | None = None
    agent_slug: str | None = None

    def __post_init__(self) -> None:
        if not self.account_id:
            raise ValidationError("accountId", "a caller always has an account")
        if self.allowed_scopes is not None:
            bad = [s for s in self.allowed_scopes if s not in SCOPE_VALUES]
            if bad:
                raise ValidationError("allowedScopes", f"unknown scope(s) {bad}; allowed: {list(SCOPE_VALUES)}")

    @property
    def pinned(self) -> bool:
        """True when a scope or agent pin narrows the view below the whole account."""
        return self.allowed_scopes is not None or self.agent_slug is not None

    @property
    def admin_view(self) -> bool:
        """True when the view holds the admin scope (unpinned, or ``admin`` among the pinned scopes).
        A public caller never does (public keys and servers cannot pin ``admin``): only an admin
        view sees soft-deleted nodes (``deleted_guard``) and restores them."""
        return self.allowed_scopes is None or "admin" in self.allowed_scopes

    @property
    def view_key(self) -> str | None:
        """A canonical name of a pinned view (None for the whole account): two callers with the
        same pins share it, so ids derived from it are stable across restarts."""
        if not self.pinned:
            return None
        scopes = ",".join(sorted(self.allowed_scopes)) if self.allowed_scopes is not None else "*"
        return f"scopes={scopes};agent={self.agent_slug or '*'}"

    def narrowed(self, scopes: tuple[str, ...] | None = None, agent: str | None = None) -> Caller:
        """This view narrowed to ``scopes`` and ``agent`` (None keeps the pin); a scope outside
        the pinned ones or another agent than the pinned one is refused, never widened."""
        allowed = self.allowed_scopes
        if scopes:
            if allowed is not None and not set(scopes) <= set(allowed):
                raise ValidationError("scope", f"the view is pinned to scopes {list(allowed)}; it cannot be widened")
            allowed = tuple(scopes)
        slug = self.agent_slug
        if agent:
            if slug is not None and agent != slug:
                raise ValidationError("agent", f"the view is pinned to agent {slug!r}; it cannot be changed")
            slug = agent
        return Caller(self.account_id, allowed, slug)

    @classmethod
    def from_settings(cls, settings: Settings, account_id: str | None = None) -> Caller:
        return cls(
            account_id=account_id or settings.ACCOUNT_ID or "",
            allowed_scopes=tuple(settings.ALLOWED_SCOPES) if settings.ALLOWED_SCOPES else None,
            agent_slug=settings.AGENT_SLUG or None,
        )


@dataclass(frozen=True)
class Guard:
    clause: str
    params: dict[str, Any] = field(default_factory=dict)


def _check_var(var: str) -> str:
    if not _VAR_RE.match(var):
        raise ValidationError("var", f"invalid Cypher variable {var!r}")
    return var


def _params(caller: Caller) -> dict[str, Any]:
    params: dict[str, Any] = {"g_accountId": caller.account_id}
    if caller.allowed_scopes is not None:
        params["g_allowedScopes"] = list(caller.allowed_scopes)
    if caller.agent_slug is not None:
        params["g_agentSlug"] = caller.agent_slug
    return params


def _view_parts(caller: Caller, v: str) -> list[str]:
    """Layers 5, 2 and 3 for a primary node."""
    parts = [f"{v}.accountId = $g_accountId"]
    if caller.allowed_scopes is not None:
        parts.append(f"({v}.scope IS NULL OR {v}.scope IN $g_allowedScopes)")
    if caller.agent_slug is not None:
        parts.append(f"({v}.agents IS NOT NULL AND $g_agentSlug IN {v}.agents)")
    return parts


def _live_parts(v: str, pending: str | None = None) -> list[str]:
    """Layer 1: not soft-deleted and not pending (or pending under the write ``pending`` names)."""
    if pending is None:
        return [f"{v}.deletedAt IS NULL", f"{v}.pendingWrite IS NULL"]
    return [f"{v}.deletedAt IS NULL", f"({v}.pendingWrite IS NULL OR {v}.pendingWrite = $g_pendingWrite)"]


def node_guard(caller: Caller, var: str = "n", *, pending: str | None = None) -> Guard:
    """Layers 1, 2, 3 and 5 for a primary (matched or searched) node. ``pending`` also admits
    the nodes of that unfinished write (the writer's own view of what it is staging)."""
    v = _check_var(var)
    params = _params(caller) | ({"g_pendingWrite": pending} if pending is not None else {})
    return Guard(" AND ".join([*_live_parts(v, pending), *_view_parts(caller, v)]), params)


def both(first: Guard, second: Guard | None) -> Guard:
    """``first AND second`` (their parameter names must not collide)."""
    if second is None or second.clause == "true":
        return first
    return Guard(f"{first.clause} AND {second.clause}", {**first.params, **second.params})


def outside_community(var: str = "n") -> Guard:
    """The node is none of a community's records: AND-ed to the account guards on every generic
    read path, so a node id of a profile, intent, opportunity or negotiation answers there exactly
    like an absent one, and nothing behind such a node is reached through it."""
    v = _check_var(var)
    return Guard("NOT (" + " OR ".join(f"{v}:`{label}`" for label in sorted(COMMUNITY_LABELS)) + ")")


def generic_guard(caller: Caller, var: str = "n", *, pending: str | None = None) -> Guard:
    """``node_guard`` and ``outside_community``: the guard of a node on a generic read path."""
    return both(node_guard(caller, var, pending=pending), outside_community(var))


def related_guard(caller: Caller, var: str = "related") -> Guard:
    """Layer 4: nodes reached through a relationship. Untagged nodes pass the agent check."""
    v = _check_var(var)
    parts = [*_live_parts(v), f"{v}.accountId = $g_accountId"]
    if caller.allowed_scopes is not None:
        parts.append(f"({v}.scope IS NULL OR {v}.scope IN $g_allowedScopes)")
    if caller.agent_slug is not None:
        parts.append(f"({v}.agents IS NULL OR $g_agentSlug IN {v}.agents)")
    return Guard(" AND ".join(parts), _params(caller))


def domain_guard(caller: Caller, var: str = "n") -> Guard:
    """Layers 2, 3 and 5 without the soft-delete layer: the nodes a writer may delete, restore
    or purge, live or already soft-deleted."""
    v = _check_var(var)
    return Guard(" AND ".join(_view_parts(caller, v)), _params(caller))


def deleted_guard(caller: Caller, var: str = "n") -> Guard:
    """The soft-deleted, finished nodes of the caller's domain (layers 2, 3 and 5): an admin's
    trash. A caller without the admin view is refused, so no public or shared view learns what
    was deleted."""
    if not caller.admin_view:
        raise ValidationError(
            "deleted",
            "soft-deleted nodes are shown only to an admin view (unpinned, or pinned with the admin scope); "
            "ask for live nodes instead",
        )
    v = _check_var(var)
    parts = [f"{v}.deletedAt IS NOT NULL", f"{v}.pendingWrite IS NULL", *_view_parts(caller, v)]
    return Guard(" AND ".join(parts), _params(caller))
