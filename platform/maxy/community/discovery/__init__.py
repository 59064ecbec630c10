"""Opportunity discovery for a community member: HyDE lenses (cached in the graph), vector
search over profiles and intents inside the networks the member shares, evaluation by the model
(or by similarity, saying so), ranking, and the direct path to a named member."""

from __future__ import annotations

from .pipeline import discover_opportunities

__all__ = ["discover_opportunities"]
