"""The inbound message gateway: every message screened and classified before an agent sees it."""

from __future__ import annotations

from .screen import CHANNELS, ROLES, Screening, screen_message

__all__ = ["CHANNELS", "ROLES", "Screening", "screen_message"]
