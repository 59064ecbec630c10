"""Summaries: the text each level of the hierarchy is embedded by.

* A text no longer than the level's limit is its own summary (no work, no loss): chunks of
  at most ``CHUNK_SELF_SUMMARY_CHARS`` (1,000) characters, documents and sections of at most
  ``SUMMARY_CHARS`` (500).
* :class:`ExtractiveSummarizer` (default): the lead sentence plus the most central
  sentences (term overlap with the other sentences, TextRank-style degree), in their
  original order, up to ``SUMMARY_CHARS``.
* :class:`ClaudeSummarizer` (when ``ANTHROPIC_API_KEY`` is set): a short abstractive
  summary from the Messages API through the official ``anthropic`` client, with a timeout;
  ANY failure falls back to the extractive summary and logs
  ``[ingest] warn reason=llm-summary-failed ...``. After an authentication error, or
  ``breaker_failures`` failures in a row, that summarizer stops calling the LLM for
  ``cooldown_s`` (300 s) and summarises extractively meanwhile.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from ..logs import log_line
from .chunker import split_sentences

Kind = Literal["document", "section", "chunk"]

SUMMARY_CHARS = 500
CHUNK_SELF_SUMMARY_CHARS = 1800  # a whole chunk (max 1,500) plus its heading line
DEFAULT_MODEL = "claude-haiku-4-5"
LLM_INPUT_CHARS = 24_000
LLM_OUTPUT_CHARS = 800

_WORD = re.compile(r"[a-z0-9][a-z0-9'-]+")
STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having he
    her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor
    not now of off on once only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves may might
    must shall one two use used using via per""".split()
)


@dataclass(frozen=True)
class SummaryJob:
    kind: Kind
    text: str
    title: str = ""


def _limit(kind: Kind) -> int:
    return CHUNK_SELF_SUMMARY_CHARS if kind == "chunk" else SUMMARY_CHARS


def _truncate(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1]
    space = cut.rfind(" ")
    if space > max_chars // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _terms(sentence: str) -> set[str]:
    return {w for w in _WORD.findall(sentence.lower()) if w not in STOP_WORDS and len(w) > 2}


def _overlap_degree(i: int, terms: list[set[str]]) -> float:
    """Sentence i's degree in the sentence-overlap graph, damped by sentence length (TextRank's similarity)."""
    ti = terms[i]
    total = 0.0
    for j, tj in enumerate(terms):
        if i != j and tj:
            overlap = len(ti & tj)
            if overlap:
                total += overlap / (math.log(len(ti) + 1) + math.log(len(tj) + 1))
    return total


def _centrality(terms: list[set[str]]) -> list[float]:
    """Each sentence's score: its overlap degree plus a bonus for the document's topic words."""
    df = Counter(t for ts in terms for t in ts)
    scores = []
    for i, ti in enumerate(terms):
        if not ti:
            scores.append(0.0)
            continue
        total = _overlap_degree(i, terms)
        # terms shared with many sentences are the document's topic words
        total += 0.1 * sum(math.log(df[t]) for t in ti if df[t] > 1) / math.sqrt(len(ti))
        scores.append(total)
    return scores


def _lead_sentences(sentences: list[str], lead: int, max_chars: int) -> tuple[list[int], int]:
    """The first ``lead`` sentences that fit, and the characters they use (joined by spaces)."""
    chosen: list[int] = []
    used = 0
    for i in range(min(lead, len(sentences))):
        cost = len(sentences[i]) + (1 if chosen else 0)
        if used + cost <= max_chars:
            chosen.append(i)
            used += cost
    return chosen, used


def _add_central(sentences: list[str], scores: list[float], chosen: list[int], used: int, max_chars: int) -> None:
    """Append the best-scoring sentences (20+ characters) that fit, until max_chars is nearly used."""
    for i in sorted(range(len(sentences)), key=lambda k: (-scores[k], k)):
        if i in chosen or len(sentences[i]) < 20:
            continue
        cost = len(sentences[i]) + 1
        if used + cost <= max_chars:
            chosen.append(i)
            used += cost
        if used >= max_chars - 40:
            break


def extractive_summary(text: str, max_chars: int = SUMMARY_CHARS, *, lead: int = 1, max_sentences: int = 300) -> str:
    """Lead sentence(s) plus the most central sentences, in document order, within max_chars."""
    flat = " ".join(text.split())
    if len(flat) <= max_chars:
        return flat
    sentences = _with_what_they_introduce(split_sentences(text)[:max_sentences])
    if not sentences:
        return _truncate(flat, max_chars)
    scores = _centrality([_terms(s) for s in sentences])
    chosen, used = _lead_sentences(sentences, lead, max_chars)
    if not chosen:
        return _truncate(sentences[0], max_chars)
    _add_central(sentences, scores, chosen, used, max_chars)
    return " ".join(sentences[i] for i in sorted(chosen))


def _with_what_they_introduce(sentences: list[str]) -> list[str]:
    """A sentence that introduces what follows (it ends with a colon: "... enabled:") joined
    with the unit after it (the code block or list it introduces), so the two are chosen
    together and a summary never ends on a colon whose content was left out."""
    out: list[str] = []
    for sentence in sentences:
        if out and out[-1].endswith(":") and not out[-1].endswith("::"):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out


# ---------------------------------------------------------------------------------------
class ExtractiveSummarizer:
    name = "extractive"

    def summarize(self, kind: Kind, text: str, title: str = "") -> str:
        own = self.own_summary(kind, text)
        if own is not None:
            return own
        return extractive_summary(text, SUMMARY_CHARS)

    @staticmethod
    def own_summary(kind: Kind, text: str) -> str | None:
        """The text itself when it is short enough to be its own summary."""
        stripped = text.strip()
        if kind == "chunk":
            return stripped if len(stripped) <= CHUNK_SELF_SUMMARY_CHARS else None
        flat = " ".join(stripped.split())
        return flat if len(flat) <= SUMMARY_CHARS else None

    def summarize_many(self, jobs: Sequence[SummaryJob]) -> list[str]:
        return [self.summarize(j.kind, j.text, j.title) for j in jobs]


_PROMPTS = {
    "document": "Summarise this document in 2-4 sentences (at most 450 characters): its subject and its key facts.",
    "section": "Summarise this section of a document in 1-3 sentences (at most 450 characters): its key facts.",
    "chunk": "Summarise this passage in 1-3 sentences (at most 450 characters): its key facts and named entities.",
}
_SYSTEM = (
    "You write short, factual summaries that are embedded for semantic search. Use the text's own key terms "
    "and names. No preamble, no markdown, no opinions: reply with the summary text only."
)


class ClaudeSummarizer(ExtractiveSummarizer):
    """Abstractive summaries from Claude; extractive on any failure."""

    name = "claude"

    def __init__(
        self,
        api_key: str,
        *,
        model: str | None = None,
        base_url: str | None = None,
        timeout: float = 20.0,
        max_retries: int = 1,
        max_tokens: int = 200,
        concurrency: int = 4,
        breaker_failures: int = 3,
        cooldown_s: float = 300.0,
    ) -> None:
        import anthropic  # the official client; imported only when a key is configured

        self.model = model or DEFAULT_MODEL
        self.max_tokens = max_tokens
        self.concurrency = max(1, concurrency)
        self.breaker_failures = breaker_failures
        self.cooldown_s = cooldown_s
        self._disabled_until = 0.0
        self.client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url or None, timeout=timeout, max_retries=max_retries
        )
        self._lock = threading.Lock()
        self._failures_in_row = 0

    def summarize(self, kind: Kind, text: str, title: str = "") -> str:
        own = self.own_summary(kind, text)
        if own is not None:
            return own
        if self.llm_enabled:
            try:
                return self._ask(kind, text, title)
            except Exception as exc:  # noqa: BLE001 - any failure means: fall back
                self._failed(kind, exc)
        return extractive_summary(text, SUMMARY_CHARS)

    @property
    def llm_enabled(self) -> bool:
        return time.monotonic() >= self._disabled_until

    def summarize_many(self, jobs: Sequence[SummaryJob]) -> list[str]:
        if len(jobs) <= 1 or self.concurrency == 1:
            return super().summarize_many(jobs)
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="llm-summary") as pool:
            return list(pool.map(lambda j: self.summarize(j.kind, j.text, j.title), jobs))

    def _ask(self, kind: Kind, text: str, title: str) -> str:
        body = text if len(text) <= LLM_INPUT_CHARS else text[:LLM_INPUT_CHARS] + "\n[...]"
        heading = f"Title: {title}\n\n" if title else ""
        message: Any = self.client.messages.create(
            model=self.model,
            max_tokens=self.max_tokens,
            system=_SYSTEM,
            messages=[{"role": "user", "content": f"{_PROMPTS[kind]}\n\n{heading}<text>\n{body}\n</text>"}],
        )
        parts = [
            getattr(block, "text", "") for block in (message.content or []) if getattr(block, "type", "") == "text"
        ]
        summary = " ".join(" ".join(parts).split())
        if not summary:
            raise ValueError("the model returned no text")
        with self._lock:
            self._failures_in_row = 0
        return _truncate(summary, LLM_OUTPUT_CHARS)

    def _failed(self, kind: Kind, exc: Exception) -> None:
        status = getattr(exc, "status_code", None)
        with self._lock:
            self._failures_in_row += 1
            trip = None
            if self.llm_enabled:
                if status in (401, 403):
                    trip = "auth"
                elif self._failures_in_row >= self.breaker_failures:
                    trip = f"{self._failures_in_row}-failures-in-a-row"
                if trip:
                    self._disabled_until = time.monotonic() + self.cooldown_s
                    self._failures_in_row = 0
        log_line(
            "ingest",
            "warn",
            level=logging.WARNING,
            reason="llm-summary-failed",
            kind=kind,
            model=self.model,
            error=type(exc).__name__,
            status=status,
            detail=str(exc)[:160],
            fallback="extractive",
        )
        if trip:
            log_line(
                "ingest",
                "warn",
                level=logging.WARNING,
                reason="llm-summary-disabled",
                cause=trip,
                model=self.model,
                cooldown_s=self.cooldown_s,
                fallback="extractive",
            )


# ---------------------------------------------------------------------------------------
_cache: dict[tuple[Any, ...], ExtractiveSummarizer] = {}
_cache_lock = threading.Lock()


def get_summarizer(settings: Any = None) -> ExtractiveSummarizer:
    """Claude when ANTHROPIC_API_KEY is set (env or config .env), else extractive.

    MAXY_SUMMARY_MODEL (default claude-haiku-4-5), ANTHROPIC_BASE_URL and
    MAXY_SUMMARY_TIMEOUT_S (default 20) tune the Claude path.
    """

    if settings is None:
        try:
            from ..config import load_settings

            settings = load_settings()
        except Exception:  # noqa: BLE001 - invalid settings elsewhere must not stop ingest
            settings = None

    def setting(name: str) -> str | None:
        value = getattr(settings, name, None) if settings is not None else None
        return (str(value) if value else None) or os.environ.get(name) or None

    key = setting("ANTHROPIC_API_KEY")
    if not key:
        return ExtractiveSummarizer()
    model = setting("MAXY_SUMMARY_MODEL") or DEFAULT_MODEL
    base_url = setting("ANTHROPIC_BASE_URL")
    try:
        timeout = float(setting("MAXY_SUMMARY_TIMEOUT_S") or 20.0)
    except ValueError:
        timeout = 20.0
    cache_key = (key, model, base_url, timeout)
    with _cache_lock:
        found = _cache.get(cache_key)
        if found is None:
            try:
                found = ClaudeSummarizer(key, model=model, base_url=base_url, timeout=timeout)
            except Exception as exc:  # noqa: BLE001 - e.g. the anthropic package is missing
                log_line(
                    "ingest",
                    "warn",
                    level=logging.WARNING,
                    reason="llm-summary-unavailable",
                    error=type(exc).__name__,
                    detail=str(exc)[:160],
                    fallback="extractive",
                )
                found = ExtractiveSummarizer()
            _cache[cache_key] = found
        return found
