"""Trace events of the community's pipelines: graph and agent start/end with durations, and the
negotiation's session, turn and outcome events.

Each event is one ``[trace] type=... name=...`` log line, and is kept by the collector of the
running context (a tool call opens one with :func:`collecting`), so a tool result can carry the
events of its own call under ``trace``. Without a collector the events are only logged.

    with trace.collecting():
        with trace.graph("opportunity"):
            with trace.agent("intent-inferrer") as a:
                ...
                a.summary = "2 intents"
        trace.event("negotiation_turn", opportunityId=..., turnIndex=0, action="propose")
        events = trace.collected()
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..logs import log_line

_events: ContextVar[list[dict[str, Any]] | None] = ContextVar("maxy_community_trace", default=None)


def event(type_: str, /, **fields: Any) -> dict[str, Any]:
    """Record one event (``{"type": type_, **fields}``): logged, and kept by the open collector."""
    record = {"type": type_, **fields}
    log_line("trace", type=type_, **{k: v for k, v in fields.items() if not isinstance(v, dict)})
    events = _events.get()
    if events is not None:
        events.append(record)
    return record


@contextmanager
def collecting() -> Iterator[list[dict[str, Any]]]:
    """Keep the events of this block (nested blocks share the outermost collector)."""
    if _events.get() is not None:
        yield _events.get() or []
        return
    events: list[dict[str, Any]] = []
    token = _events.set(events)
    try:
        yield events
    finally:
        _events.reset(token)


def collected() -> list[dict[str, Any]]:
    """The events the open collector holds so far (a copy; empty without one)."""
    return list(_events.get() or [])


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


@contextmanager
def graph(name: str) -> Iterator[None]:
    """``graph_start`` now, ``graph_end`` with ``durationMs`` (and ``error`` on a failure) after."""
    event("graph_start", name=name)
    started = time.monotonic()
    try:
        yield
    except BaseException as err:
        event("graph_end", name=name, durationMs=_ms(started), error=type(err).__name__)
        raise
    event("graph_end", name=name, durationMs=_ms(started))


@dataclass
class AgentSpan:
    """An agent's run: set ``summary`` (what it did, in a few words) before the block ends."""

    name: str
    summary: str | None = None


@contextmanager
def agent(name: str) -> Iterator[AgentSpan]:
    """``agent_start`` now, ``agent_end`` with ``durationMs`` and the span's ``summary`` after."""
    span = AgentSpan(name)
    event("agent_start", name=name)
    started = time.monotonic()
    try:
        yield span
    except BaseException as err:
        event("agent_end", name=name, durationMs=_ms(started), summary=span.summary, error=type(err).__name__)
        raise
    event("agent_end", name=name, durationMs=_ms(started), summary=span.summary)
