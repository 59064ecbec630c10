"""A community member's intents (what they seek or offer): inference, verification and
reconciliation by the model, stored as Intent nodes and assigned to networks directly or by the
indexer. Built on ``maxy.community`` (members, networks, the member guard, model settings, trace)."""

from __future__ import annotations

from .assignment import assign_intent_network, member_networks
from .pipeline import create_intents, delete_intent, update_intent
from .store import INTENT, get_intent, read_intents

__all__ = [
    "INTENT",
    "assign_intent_network",
    "create_intents",
    "delete_intent",
    "get_intent",
    "member_networks",
    "read_intents",
    "update_intent",
]
