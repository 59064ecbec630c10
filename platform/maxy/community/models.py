"""The community's model settings in one place: each agent's model, token budget, timeout and
temperature. ``MAXY_COMMUNITY_MODEL`` sets the model of every agent, ``MAXY_MODEL_<AGENT>``
(e.g. ``MAXY_MODEL_NEGOTIATOR``) one agent's, and ``MAXY_COMMUNITY_TIMEOUT_S`` every agent's
timeout; an agent's own variable wins over the shared one."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..config import Settings, agent_model_variable
from ..errors import ValidationError
from ..llm import HAIKU


@dataclass(frozen=True)
class ModelSetting:
    model: str
    max_tokens: int
    timeout_s: float
    temperature: float | None = None


MODEL_SETTINGS: dict[str, ModelSetting] = {
    "intent-inferrer": ModelSetting(HAIKU, 1024, 20.0),
    "intent-verifier": ModelSetting(HAIKU, 512, 15.0, 0.0),
    "intent-reconciler": ModelSetting(HAIKU, 1024, 20.0, 0.0),
    "intent-indexer": ModelSetting(HAIKU, 256, 15.0, 0.0),
    "profile-hyde-generator": ModelSetting(HAIKU, 512, 20.0, 0.4),
    "lens-inferrer": ModelSetting(HAIKU, 512, 15.0, 0.2),
    "hyde-generator": ModelSetting(HAIKU, 512, 20.0, 0.4),
    "opportunity-evaluator": ModelSetting(HAIKU, 1024, 30.0, 0.0),
    "negotiator": ModelSetting(HAIKU, 1024, 30.0, 0.2),
}


def model_for(settings: Settings, agent: str) -> ModelSetting:
    """The setting ``agent`` runs with, the environment's overrides applied."""
    base = MODEL_SETTINGS.get(agent)
    if base is None:
        raise ValidationError("agent", f"unknown model agent {agent!r}; one of {', '.join(MODEL_SETTINGS)}")
    model = getattr(settings, agent_model_variable(agent)) or settings.MAXY_COMMUNITY_MODEL or base.model
    timeout = settings.MAXY_COMMUNITY_TIMEOUT_S or base.timeout_s
    return replace(base, model=model, timeout_s=timeout)
