"""Who sees a community's records: the member guard.

A member sees their own records; another member's profile (and its HyDE document) only while the
two share a network, that member's intent only while it is assigned to a network both are in,
and an opportunity or negotiation only when it names them. The account's admin (a view without a
member) sees every member's records. The clause is always AND-ed with the account guards
(``maxy.graph.guards.node_guard``), so account isolation holds as ever.

How the records carry it (every community writer keeps to this):

- a member's own records (MemberProfile, ProfileHyde, Intent, HydeLens, HydeDocument) carry
  ``memberId``;
- membership is a NetworkMembership node ``{memberId, networkId, status: "active"|"invited"|"left"}``
  (``networkId`` is the Network's nodeId); only ``active`` counts, an invitation shows nothing;
- an intent is in a network through ``(intent)-[:IN_NETWORK]->(network)``; the edge is withdrawn
  by setting its ``unassignedAt``;
- a pair's records (Opportunity, Negotiation, NegotiationTimer) carry ``memberIds``: the two members.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..accounts import ValidatedAccount
from ..db import Database
from ..embeddings.base import Embedder
from ..errors import ValidationError
from ..graph.allowlist import COMMUNITY
from ..graph.guards import Caller, Guard, both, node_guard
from ..graph.write import GraphWriter
from ..identifiers import unknown_member

Kind = Literal["member", "intent", "pair"]
KINDS: tuple[Kind, ...] = ("member", "intent", "pair")


@dataclass(frozen=True)
class MemberView:
    """A reader of the community: the account view of ``caller``, narrowed to ``member_id``
    (None: the account's admin, who sees every member)."""

    caller: Caller
    member_id: str | None = None

    @property
    def admin(self) -> bool:
        return self.member_id is None

    def resolve(self, member_id: str | None) -> str | None:
        """The member a call acts for: the pinned one, or ``member_id`` for the admin. A pinned
        view naming another member is refused exactly as an unknown member is."""
        if self.member_id is None:
            return member_id
        if member_id is not None and member_id != self.member_id:
            raise unknown_member(member_id)
        return self.member_id


def unknown_network(network_id: object, field: str = "networkId") -> ValidationError:
    """The one refusal for a network that does not exist or that the caller cannot see."""
    return ValidationError(field, f"no network {network_id!r} you can see; list_networks shows yours")


def community_writer(
    db: Database, account: ValidatedAccount, embedder: Embedder | None, caller: Caller, *, created_by: str
) -> GraphWriter:
    """The writer of the community's records (the only one ``GraphWriter`` lets write them)."""
    return GraphWriter(db, account, embedder, caller=caller, created_by=created_by, owner=COMMUNITY)


def active_member(member_var: str, network_var: str) -> str:
    """Cypher: the member ``member_var`` (an expression) is an active member of the network node
    ``network_var``, inside the guard's account."""
    return (
        f"EXISTS {{ MATCH (cv_mm:NetworkMembership {{accountId: $g_accountId, memberId: {member_var}, "
        f"networkId: {network_var}.nodeId, status: 'active'}}) WHERE cv_mm.deletedAt IS NULL }}"
    )


def _shared(var: str) -> str:
    return (
        "EXISTS { MATCH (cv_a:NetworkMembership {accountId: $g_accountId, memberId: $m_viewer, status: 'active'})"
        f" MATCH (cv_b:NetworkMembership {{accountId: $g_accountId, memberId: {var}.memberId, status: 'active'}})"
        " WHERE cv_b.networkId = cv_a.networkId AND cv_a.deletedAt IS NULL AND cv_b.deletedAt IS NULL"
        " MATCH (cv_sn:Node {nodeId: cv_a.networkId}) WHERE cv_sn:Network AND cv_sn.deletedAt IS NULL }"
    )


def _assigned(var: str) -> str:
    return (
        f"EXISTS {{ MATCH ({var})-[cv_ia:IN_NETWORK]->(cv_an:Network {{accountId: $g_accountId}}) "
        f"WHERE cv_ia.unassignedAt IS NULL AND cv_an.deletedAt IS NULL"
        f" AND {active_member('$m_viewer', 'cv_an')} AND {active_member(f'{var}.memberId', 'cv_an')} }}"
    )


def visible_member_clause(view: MemberView, var: str = "n", *, kind: Kind = "member") -> Guard:
    """The guard of a community record bound to ``var``: the account guards (``node_guard``)
    and the member rule of its ``kind`` (``member``: profiles and other per-member records,
    ``intent``: intents, ``pair``: opportunities, negotiations and their timers)."""
    guard = node_guard(view.caller, var)  # checks var
    if kind not in KINDS:
        raise ValidationError("kind", f"one of {', '.join(KINDS)}")
    if view.member_id is None:
        return guard
    if kind == "pair":
        rule = f"$m_viewer IN coalesce({var}.memberIds, [])"
    elif kind == "intent":
        rule = f"({var}.memberId = $m_viewer OR {_assigned(var)})"
    else:
        rule = f"({var}.memberId = $m_viewer OR {_shared(var)})"
    return both(guard, Guard(rule, {"m_viewer": view.member_id}))
