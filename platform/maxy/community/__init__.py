"""A community run on one account: members with profiles, networks and membership, the member
guard (who sees whose records), the community's model settings and its trace events. Intents and
discovery (maxy.community.intents, maxy.community.discovery), opportunities and negotiation (maxy.community.opportunities,
maxy.community.negotiation) build on these."""

from __future__ import annotations

from ..identifiers import unknown_member
from .members import (
    MEMBER_ID_RE,
    PROFILE,
    PROFILE_HYDE,
    check_member_id,
    get_profile,
    list_profiles,
    profile_node_id,
    require_member,
    upsert_profile,
)
from .models import MODEL_SETTINGS, ModelSetting, model_for
from .networks import (
    JOIN_POLICIES,
    MEMBERSHIP,
    NETWORK,
    add_member,
    create_network,
    join_network,
    leave_network,
    list_networks,
    network_members,
    shared_networks,
)
from .view import MemberView, community_writer, unknown_network, visible_member_clause

__all__ = [
    "JOIN_POLICIES",
    "MEMBERSHIP",
    "MEMBER_ID_RE",
    "MODEL_SETTINGS",
    "NETWORK",
    "PROFILE",
    "PROFILE_HYDE",
    "MemberView",
    "ModelSetting",
    "add_member",
    "check_member_id",
    "community_writer",
    "create_network",
    "get_profile",
    "join_network",
    "leave_network",
    "list_networks",
    "list_profiles",
    "model_for",
    "network_members",
    "profile_node_id",
    "require_member",
    "shared_networks",
    "unknown_member",
    "unknown_network",
    "upsert_profile",
    "visible_member_clause",
]
