"""Networks and membership.

A Network ``{name, prompt, joinPolicy, ownerMemberId}`` (its ``networkId`` is its nodeId) groups
members; a member is in it while their NetworkMembership ``{memberId, networkId, status}`` is
``active`` (``role`` owner or member, an optional ``memberPrompt``: what this member is there
for). Join policy ``anyone``: any member joins by themselves and any member invites others;
``invite``: only the owner invites. An invitation (status ``invited``) makes nothing visible: the
invitee joins to accept it or leaves to decline it, so no member is put where others see their
profile without their own step. Inviting answers the same whether or not the id names a member,
so it tells no one who exists. The account's admin adds members directly. A network a member is
not in, not invited to and cannot join answers like one that does not exist.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from ..db import Database
from ..errors import ValidationError
from ..graph.guards import Caller, node_guard
from ..graph.write import Edge, GraphWriter, NodeSpec
from ..identifiers import unknown_member
from ..logs import log_line
from .members import PROFILE, check_member_id, profile_node_id
from .view import MemberView, active_member, unknown_network

NETWORK, MEMBERSHIP = "Network", "NetworkMembership"
JoinPolicy = Literal["anyone", "invite"]
MembershipStatus = Literal["active", "invited", "left"]
_IN_OR_INVITED = ("active", "invited")
JOIN_POLICIES: tuple[JoinPolicy, ...] = ("anyone", "invite")
MAX_NAME, MAX_PROMPT = 200, 4000
_NAMESPACE = uuid.UUID("0d7b6f0e-3a47-4f4e-9c7e-51a2e0c4d8b3")
_NETWORK_FIELDS = "n.nodeId AS networkId, n.name AS name, n.prompt AS prompt, n.joinPolicy AS joinPolicy, n.ownerMemberId AS ownerMemberId"


def membership_node_id(account_id: str, network_id: str, member_id: str) -> str:
    return f"membership-{uuid.uuid5(_NAMESPACE, f'{account_id}/{network_id}/{member_id}')}"


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _text(value: object, field: str, limit: int, *, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(field, "must be non-empty text" if required else "must be non-empty text or omitted")
    if len(value) > limit:
        raise ValidationError(field, f"at most {limit} characters (got {len(value)})")
    return value.strip()


def _check_network_id(value: object) -> str:
    if not isinstance(value, str) or not value or len(value) > 128:
        raise unknown_network(value)
    return value


def _member_exists(db: Database, caller: Caller, member_id: str) -> bool:
    guard = node_guard(caller, "p")
    rows = db.read(
        f"MATCH (p:{PROFILE} {{memberId: $m}}) WHERE {guard.clause} RETURN 1 AS ok", m=member_id, **guard.params
    )
    return bool(rows)


def _network(db: Database, caller: Caller, network_id: str, member_id: str | None) -> dict[str, Any] | None:
    """The network and ``member_id``'s membership status in it (None: never a member)."""
    guard = node_guard(caller, "n")
    rows = db.read(
        f"""
        MATCH (n:Node {{nodeId: $id}}) WHERE n:{NETWORK} AND {guard.clause}
        OPTIONAL MATCH (m:{MEMBERSHIP} {{accountId: $g_accountId, networkId: n.nodeId, memberId: $member}})
        WHERE m.deletedAt IS NULL
        RETURN {_NETWORK_FIELDS}, m.status AS status, m.role AS role
        """,
        id=network_id,
        member=member_id,
        **guard.params,
    )
    return rows[0] if rows else None


def _visible_network(db: Database, caller: Caller, network_id: str, member_id: str | None) -> dict[str, Any]:
    """The network as ``member_id`` may see it (a member of it, invited to it, or an open one),
    else refused."""
    net = _network(db, caller, _check_network_id(network_id), member_id)
    if net is None or (member_id is not None and net["joinPolicy"] != "anyone" and net["status"] not in _IN_OR_INVITED):
        raise unknown_network(network_id)
    return net


def _membership(
    account_id: str,
    network_id: str,
    member_id: str,
    *,
    status: MembershipStatus,
    role: str,
    prompt: str | None,
    by: str,
) -> NodeSpec:
    props: dict[str, Any] = {"memberId": member_id, "networkId": network_id, "status": status, "role": role}
    stamps = {"active": ("joinedAt", "addedBy"), "invited": ("invitedAt", "invitedBy"), "left": ("leftAt", "leftBy")}
    at, who = stamps[status]
    props |= {at: _now(), who: by}
    if prompt is not None:
        props["memberPrompt"] = prompt
    return NodeSpec(
        [MEMBERSHIP],
        props,
        node_id=membership_node_id(account_id, network_id, member_id),
        edges=[Edge("MEMBER_OF", network_id), Edge("HAS_MEMBERSHIP", profile_node_id(account_id, member_id), "in")],
    )


def _prompt_only(account_id: str, network_id: str, member_id: str, prompt: str) -> NodeSpec:
    """A member's ``memberPrompt`` changed, nothing else of their membership."""
    return NodeSpec(
        [MEMBERSHIP], {"memberPrompt": prompt}, node_id=membership_node_id(account_id, network_id, member_id)
    )


def _log(op: str, started: float, **fields: Any) -> None:
    log_line("community", op=op, **fields, ms=int((time.monotonic() - started) * 1000))


def create_network(
    writer: GraphWriter,
    owner_member_id: str,
    *,
    name: str,
    prompt: str | None = None,
    join_policy: JoinPolicy = "anyone",
) -> dict[str, Any]:
    """A new network owned (and joined) by ``owner_member_id``."""
    started = time.monotonic()
    owner = check_member_id(owner_member_id)
    clean_name = _text(name, "name", MAX_NAME, required=True)
    clean_prompt = _text(prompt, "prompt", MAX_PROMPT, required=False)
    if join_policy not in JOIN_POLICIES:
        raise ValidationError("joinPolicy", f"one of {', '.join(JOIN_POLICIES)} (got {join_policy!r})")
    if not _member_exists(writer.db, writer.caller, owner):
        raise unknown_member(owner)
    account_id = writer.account.account_id
    network_id = f"network-{uuid.uuid4()}"
    props = {"name": clean_name, "prompt": clean_prompt, "joinPolicy": join_policy, "ownerMemberId": owner}
    writer.write_many(
        [
            NodeSpec([NETWORK], props, node_id=network_id),
            _membership(account_id, network_id, owner, status="active", role="owner", prompt=None, by=owner),
        ]
    )
    _log("network-create", started, network=network_id, owner=owner, join_policy=join_policy)
    return {"networkId": network_id, **props, "members": [owner]}


def join_network(
    writer: GraphWriter, member_id: str, network_id: str, *, member_prompt: str | None = None
) -> dict[str, Any]:
    """``member_id`` joins an open (``anyone``) network by themselves, or accepts an invitation
    to an invite-only one (to anyone else it answers like an absent network). The invitation's
    ``memberPrompt`` stays unless the member gives their own."""
    started = time.monotonic()
    member = check_member_id(member_id)
    if not _member_exists(writer.db, writer.caller, member):
        raise unknown_member(member)
    net = _visible_network(writer.db, writer.caller, network_id, member)
    prompt = _text(member_prompt, "memberPrompt", MAX_PROMPT, required=False)
    account_id = writer.account.account_id
    joined = net["status"] != "active"  # an invite-only network is visible only to its members and invitees
    if joined:
        writer.write(
            _membership(account_id, network_id, member, status="active", role="member", prompt=prompt, by=member)
        )
    elif prompt is not None:
        writer.write(_prompt_only(account_id, network_id, member, prompt))
    _log("network-join", started, network=network_id, member=member, already=not joined)
    return {"networkId": network_id, "memberId": member, "status": "active", "joined": joined}


def add_member(
    writer: GraphWriter,
    actor_member_id: str | None,
    network_id: str,
    member_id: str,
    *,
    member_prompt: str | None = None,
) -> dict[str, Any]:
    """``actor_member_id`` invites ``member_id`` to a network: to an invite-only one only its
    owner, to an open one any member of it; the invitee joins to accept. ``actor_member_id=None``
    is the account's admin, who adds the member at once. A member already in it is said to be."""
    started = time.monotonic()
    member = check_member_id(member_id)
    actor = None if actor_member_id is None else check_member_id(actor_member_id, "actorMemberId")
    net = _visible_network(writer.db, writer.caller, network_id, actor)
    if actor is not None:
        if net["status"] != "active":
            raise ValidationError("networkId", f"you are not a member of network {network_id!r}: join it first")
        if net["joinPolicy"] == "invite" and net["ownerMemberId"] != actor:
            raise ValidationError("networkId", f"network {network_id!r} is invite-only: only its owner invites members")
    prompt = _text(member_prompt, "memberPrompt", MAX_PROMPT, required=False)
    account_id = writer.account.account_id
    current = _network(writer.db, writer.caller, network_id, member)
    if current is not None and current["status"] == "active":  # its members see that anyway
        if prompt is not None:
            if actor is not None and actor != member:
                raise ValidationError(
                    "memberPrompt", f"{member!r} is in network {network_id!r} already: their prompt is theirs to set"
                )
            writer.write(_prompt_only(account_id, network_id, member, prompt))
        _log("network-add", started, network=network_id, member=member, actor=actor or "admin", status="active")
        return {"networkId": network_id, "memberId": member, "status": "active", "added": False}
    status: MembershipStatus = "active" if actor is None else "invited"
    if _member_exists(writer.db, writer.caller, member):
        role = (current or {}).get("role") or "member"
        writer.write(
            _membership(account_id, network_id, member, status=status, role=role, prompt=prompt, by=actor or "admin")
        )
    elif actor is None:  # the admin sees every member: there is nothing to keep from them
        raise unknown_member(member)
    # else an id that names no member was invited: the answer is an invitation's all the same
    _log("network-add", started, network=network_id, member=member, actor=actor or "admin", status=status)
    return {"networkId": network_id, "memberId": member, "status": status, "added": status == "active"}


def leave_network(writer: GraphWriter, member_id: str, network_id: str) -> dict[str, Any]:
    """``member_id`` leaves a network, or declines an invitation to it (its owner cannot leave:
    the network would have no one to add members)."""
    started = time.monotonic()
    member = check_member_id(member_id)
    net = _network(writer.db, writer.caller, _check_network_id(network_id), member)
    if net is None or net["status"] not in _IN_OR_INVITED:
        raise unknown_network(network_id)
    if net["ownerMemberId"] == member:
        raise ValidationError("networkId", f"you own network {network_id!r}: its owner cannot leave it")
    account_id = writer.account.account_id
    writer.write(
        _membership(account_id, network_id, member, status="left", role=net["role"] or "member", prompt=None, by=member)
    )
    _log("network-leave", started, network=network_id, member=member)
    return {"networkId": network_id, "memberId": member, "status": "left"}


def list_networks(db: Database, viewer: MemberView) -> list[dict[str, Any]]:
    """The networks ``viewer`` is in, with their active members; then those it is invited to
    (``invited: true``: join_network accepts, leave_network declines) and the open ones it could
    join (``joined: false``, no member list). The admin sees every network with its members."""
    guard = node_guard(viewer.caller, "n")
    rows = db.read(
        f"""
        MATCH (n:{NETWORK}) WHERE {guard.clause}
        WITH n, $m_viewer IS NULL OR {active_member("$m_viewer", "n")} AS joined,
             EXISTS {{ MATCH (iv:{MEMBERSHIP} {{accountId: $g_accountId, memberId: $m_viewer,
                                               networkId: n.nodeId, status: 'invited'}})
                      WHERE iv.deletedAt IS NULL }} AS invited
        WHERE joined OR invited OR n.joinPolicy = 'anyone'
        OPTIONAL MATCH (m:{MEMBERSHIP} {{accountId: $g_accountId, networkId: n.nodeId, status: 'active'}})
        WHERE joined AND m.deletedAt IS NULL
        WITH n, joined, invited, m ORDER BY m.memberId
        RETURN {_NETWORK_FIELDS}, joined, invited, collect(m.memberId) AS members
        ORDER BY joined DESC, invited DESC, n.name, n.nodeId
        """,
        m_viewer=viewer.member_id,
        **guard.params,
    )
    return [r if r["joined"] else {k: v for k, v in r.items() if k != "members"} for r in rows]


def shared_networks(db: Database, view: MemberView | Caller, a: str, b: str) -> list[str]:
    """The ids of the networks both members are active in (sorted), inside the account of
    ``view`` (a MemberView or a bare Caller)."""
    guard = node_guard(view.caller if isinstance(view, MemberView) else view, "n")
    rows = db.read(
        f"""
        MATCH (n:{NETWORK}) WHERE {guard.clause} AND {active_member("$a", "n")} AND {active_member("$b", "n")}
        RETURN n.nodeId AS id ORDER BY id
        """,
        a=check_member_id(a),
        b=check_member_id(b, "otherMemberId"),
        **guard.params,
    )
    return [r["id"] for r in rows]


def network_members(db: Database, viewer: MemberView, network_id: str) -> Sequence[str]:
    """The active members of a network ``viewer`` is in (the admin: any network)."""
    net = _visible_network(db, viewer.caller, network_id, viewer.member_id)
    if viewer.member_id is not None and net["status"] != "active":
        raise unknown_network(network_id)
    guard = node_guard(viewer.caller, "m")
    rows = db.read(
        f"MATCH (m:{MEMBERSHIP} {{networkId: $id, status: 'active'}}) WHERE {guard.clause} "
        "RETURN m.memberId AS id ORDER BY id",
        id=network_id,
        **guard.params,
    )
    return [r["id"] for r in rows]
