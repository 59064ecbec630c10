"""Opportunities: matches between two members, their statuses and moves, send, accept, reject,
and the dedupe against pairs already accepted."""

from .records import (
    create_opportunity,
    decide_opportunity,
    get_opportunity,
    list_opportunities,
    move,
    send_opportunity,
)
from .statuses import STATUSES, TRANSITIONS, check_transition

__all__ = [
    "STATUSES",
    "TRANSITIONS",
    "check_transition",
    "create_opportunity",
    "decide_opportunity",
    "get_opportunity",
    "list_opportunities",
    "move",
    "send_opportunity",
]
