"""Query classification before search: does this message need a knowledge lookup, with
which rewritten query, and which retrievalClass routes it.

| | admin | public |
|---|---|---|
| model | claude-haiku-4-5 | same |
| timeout | 3 s | same |
| history | last 4 messages | same |
| max tokens | 200 | 120 |
| query rewriting | yes | yes |
| topic-change detection | yes | no |
| on failure | search with the raw message | same |
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..config import Settings
from ..llm import LLMUnavailable, complete, parse_json_object
from ..logs import log_line

RETRIEVAL_CLASSES = ("entity", "temporal", "event", "general", "none")  # what a query is routed as

Variant = Literal["admin", "public"]
HISTORY_MESSAGES = 4
MAX_TOKENS = {"admin": 200, "public": 120}
TIMEOUT_S = 3.0


@dataclass
class Classification:
    search: bool
    query: str | None  # rewritten query, or None to use the raw message
    reason: str
    retrieval_class: str = "general"
    topic_change: bool | None = None  # admin only
    topic_change_confidence: float | None = None
    existing_topic: str | None = None
    fallback: bool = False
    latency_ms: float = 0.0
    history_used: list[dict[str, str]] = field(default_factory=list)

    def effective_query(self, raw: str) -> str:
        return self.query or raw


_SYSTEM = """You decide whether a user's chat message needs a knowledge-graph lookup before the
assistant answers. Greetings, thanks, "continue" and other meta messages need none. When a
lookup is needed, rewrite the message into a concrete search query, resolving pronouns and
references from the recent history. Classify the lookup: "entity" (a person, company or
concept), "temporal" (when something happened, dates, recency), "event" (a specific event),
"general" (anything else), or "none" (no lookup)."""

_ADMIN_FORMAT = """Answer with JSON only:
{"search": bool, "query": string or null, "reason": string, "retrievalClass": string,
 "topicChange": bool, "topicChangeConfidence": number 0..1, "existingTopic": string or null}"""

_PUBLIC_FORMAT = """Answer with JSON only:
{"search": bool, "query": string or null, "reason": string, "retrievalClass": string}"""


def _history_text(history: Sequence[dict[str, str]]) -> str:
    lines = []
    for m in history:
        role = str(m.get("role", "user"))[:20]
        lines.append(f"{role}: {str(m.get('content', ''))[:1000]}")
    return "\n".join(lines) or "(none)"


def classify(
    settings: Settings,
    message: str,
    history: Sequence[dict[str, str]] = (),
    *,
    variant: Variant = "admin",
) -> Classification:
    """Never raises: on any failure, ``search=True`` with the raw message."""
    started = time.perf_counter()
    recent = list(history)[-HISTORY_MESSAGES:]
    prompt = f"Recent history (oldest first):\n{_history_text(recent)}\n\nMessage:\n{message[:4000]}\n\n" + (
        _ADMIN_FORMAT if variant == "admin" else _PUBLIC_FORMAT
    )
    try:
        data = parse_json_object(
            complete(settings, prompt, system=_SYSTEM, max_tokens=MAX_TOKENS[variant], timeout=TIMEOUT_S)
        )
        search = data.get("search")
        if not isinstance(search, bool):
            raise LLMUnavailable("'search' is not a boolean")
        query = data.get("query")
        query = query.strip() if isinstance(query, str) and query.strip() else None
        rclass = data.get("retrievalClass")
        rclass = rclass if rclass in RETRIEVAL_CLASSES else ("general" if search else "none")
        if not search:
            rclass = "none"
        result = Classification(search, query, str(data.get("reason") or "")[:300], rclass, history_used=recent)
        if variant == "admin":
            tc = data.get("topicChange")
            result.topic_change = tc if isinstance(tc, bool) else None
            conf = data.get("topicChangeConfidence")
            result.topic_change_confidence = float(conf) if isinstance(conf, (int, float)) else None
            topic = data.get("existingTopic")
            result.existing_topic = topic[:200] if isinstance(topic, str) else None
    except LLMUnavailable as err:
        result = Classification(
            True, None, f"classifier unavailable: {err}"[:300], "general", fallback=True, history_used=recent
        )
    result.latency_ms = (time.perf_counter() - started) * 1000
    if variant == "admin":
        log_line(
            "admin-query-classifier",
            search=result.search,
            retrievalClass=result.retrieval_class,
            topicChange=result.topic_change,
            topicChangeConfidence=result.topic_change_confidence,
            existingTopic=result.existing_topic,
            fallback=result.fallback,
            latencyMs=round(result.latency_ms),
        )
    else:
        log_line(
            "public-query-classifier",
            search=result.search,
            effectiveQuery=result.effective_query(message)[:120],
            reason=result.reason[:120],
            fallback=result.fallback,
            latencyMs=round(result.latency_ms),
        )
    if result.fallback:
        log_line("query-classifier", "fallback", level=logging.WARNING, variant=variant, reason=result.reason[:160])
    return result
