"""One forced tool call to a community agent (intent-inferrer, intent-verifier, lens-inferrer,
opportunity-evaluator ...): the agent's model settings from ``maxy.community.models``, an
agent_start / agent_end trace event around it, and ``LLMUnavailable`` (with its reason) when the
model cannot be asked or its answer cannot be read, so every caller degrades the same way."""

from __future__ import annotations

from typing import Any

from ...config import Settings
from ...llm import LLMUnavailable, messages_with_tools
from .. import trace
from ..models import model_for


def ask(settings: Settings, agent: str, *, system: str, prompt: str, tool: dict[str, Any]) -> dict[str, Any]:
    """The input of ``tool``'s forced call by ``agent``'s model."""
    setting = model_for(settings, agent)
    with trace.agent(agent) as step:
        try:
            answer = messages_with_tools(
                settings,
                system=system,
                prompt=prompt,
                tool=tool,
                model=setting.model,
                max_tokens=setting.max_tokens,
                timeout=setting.timeout_s,
            )
        except LLMUnavailable as err:
            step.summary = f"unavailable: {err.reason}"
            raise
        step.summary = f"called {tool['name']}"
    return answer
