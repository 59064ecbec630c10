"""Bilateral negotiation between two members' agents over an opportunity: turns, caps, outcomes,
the system negotiator, parked turns for personal agents with durable timers, and the sweep."""

from .engine import Negotiations
from .parked import TurnConflict, pickup, respond
from .sweep import SweepLoop, sweep
from .turns import ACTIONS, Outcome, Turn, check_turn, outcome, turn_cap

__all__ = [
    "ACTIONS",
    "Negotiations",
    "TurnConflict",
    "Outcome",
    "SweepLoop",
    "Turn",
    "check_turn",
    "outcome",
    "pickup",
    "respond",
    "sweep",
    "turn_cap",
]
