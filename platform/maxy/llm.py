"""One small wrapper over the official ``anthropic`` client for the search-side LLM stages
(query classification, multi-query expansion, HyDE), summaries, the gateway and the memory
agent's tool calls. Every caller degrades on failure: this module raises ``LLMUnavailable``
and never lets a provider error escape."""

from __future__ import annotations

import json
import os
import re
import threading
from typing import Any

from .config import Settings
from .errors import MaxyError

HAIKU = "claude-haiku-4-5"


class LLMUnavailable(MaxyError):
    """No key, a timeout, an HTTP error or an unreadable answer; ``reason`` says which
    (``no-key``, ``timeout``, ``api-error``, ``unreadable-answer``)."""

    def __init__(self, message: str, reason: str = "unreadable-answer"):
        self.reason = reason
        super().__init__(message)


_clients: dict[tuple[str, str | None, float], Any] = {}
_lock = threading.Lock()


def _client(settings: Settings, timeout: float) -> Any:
    key = settings.ANTHROPIC_API_KEY
    if not key:
        raise LLMUnavailable("ANTHROPIC_API_KEY is not set", reason="no-key")
    base_url = settings.ANTHROPIC_BASE_URL or os.environ.get("ANTHROPIC_BASE_URL") or None
    cache_key = (key, base_url, timeout)
    with _lock:
        if cache_key not in _clients:
            try:
                import anthropic
            except ImportError as err:  # pragma: no cover - a dependency of the package
                raise LLMUnavailable(f"the anthropic package is not installed ({err})") from None
            _clients[cache_key] = anthropic.Anthropic(api_key=key, base_url=base_url, timeout=timeout, max_retries=0)
        return _clients[cache_key]


def _failure(err: Exception) -> LLMUnavailable:
    reason = "timeout" if "Timeout" in type(err).__name__ else "api-error"
    return LLMUnavailable(f"{type(err).__name__}: {str(err)[:200]}", reason=reason)


def complete(
    settings: Settings,
    prompt: str,
    *,
    system: str | None = None,
    max_tokens: int = 200,
    timeout: float = 3.0,
    model: str = HAIKU,
) -> str:
    """The text of one Messages API answer, or LLMUnavailable."""
    client = _client(settings, timeout)
    try:
        kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}],
        }
        if system:
            kwargs["system"] = system
        response = client.messages.create(**kwargs)
        text = "".join(getattr(block, "text", "") for block in response.content)
    except Exception as err:  # any provider, transport or decoding failure degrades the same way
        raise _failure(err) from None
    if not text.strip():
        raise LLMUnavailable("empty answer")
    return text


def messages_with_tools(
    settings: Settings,
    *,
    system: str,
    prompt: str,
    tool: dict[str, Any],
    model: str,
    max_tokens: int,
    timeout: float,
) -> dict[str, Any]:
    """The input of the one tool the model is made to call (``tool_choice`` names it), or
    LLMUnavailable: no key, a timeout, an HTTP error, or an answer without that tool's call or
    missing a field its ``input_schema`` requires."""
    client = _client(settings, timeout)
    name = tool["name"]
    try:
        response = client.messages.create(
            model=model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": prompt}],
            tools=[tool],
            tool_choice={"type": "tool", "name": name},
        )
        calls = [block for block in response.content if getattr(block, "type", None) == "tool_use"]
    except Exception as err:  # any provider, transport or decoding failure degrades the same way
        raise _failure(err) from None
    call = next((c for c in calls if getattr(c, "name", None) == name), None)
    if call is None:
        got = ", ".join(str(getattr(c, "name", "?")) for c in calls) or "no tool call"
        raise LLMUnavailable(f"the answer does not call {name} ({got[:100]})")
    arguments = getattr(call, "input", None)
    if not isinstance(arguments, dict):
        raise LLMUnavailable(f"the {name} call's input is not an object")
    missing = [f for f in tool.get("input_schema", {}).get("required", ()) if arguments.get(f) in (None, "")]
    if missing:
        raise LLMUnavailable(f"the {name} call lacks {', '.join(missing)}")
    return arguments


def parse_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (models sometimes wrap it in prose or fences)."""
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        raise LLMUnavailable("the answer holds no JSON object")
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError as err:
        raise LLMUnavailable(f"the answer is not valid JSON ({err.msg})") from None
    if not isinstance(value, dict):
        raise LLMUnavailable("the answer is not a JSON object")
    return value
