"""HyDE (flag MAXY_GS_HYDE): hypothetical documents written by the LLM, embedded, and
searched on the vector path beside the query itself.

Cache-aware and lens-based: the LLM first infers 1-3 lenses for the query (a search
perspective plus the corpus it targets: documents, messages or entities), then writes,
for each lens not already cached, a short passage in that corpus's voice that would answer
the query. Lenses are cached per (account, query) and documents per (account, query,
lens), for an hour, so a repeated query costs no LLM call. Any failure: no hypothetical
documents, the query alone (never an error).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..config import Settings
from ..embeddings.base import Embedder, EmbeddingError
from ..llm import LLMUnavailable, complete, parse_json_object
from ..logs import log_line, short

CACHE_TTL_S = 3600.0
MAX_LENSES = 3
CORPORA = ("documents", "messages", "entities")


@dataclass(frozen=True)
class Lens:
    label: str
    corpus: str


_lens_cache: dict[tuple[str, str], tuple[float, tuple[Lens, ...]]] = {}
_doc_cache: dict[tuple[str, str, Lens], tuple[float, str]] = {}
_lock = threading.Lock()

_LENS_PROMPT = """A user searches a knowledge graph (documents, conversation messages, and entities such
as people and companies) with the query below. Infer 1-{n} search lenses: distinct
perspectives an ideal answer could be written from, each tagged with the corpus it would
live in ("documents", "messages" or "entities"). Answer with JSON only:
{{"lenses": [{{"label": "...", "corpus": "documents"}}]}}

Query: {query}"""

_DOC_PROMPT = """Write a short passage (2-4 sentences) that would appear in the {corpus} of a knowledge
graph and answer the query below from this perspective: {label}. Write it as the source
itself would (a document paragraph, a chat message, or an entity description), with
concrete plausible details. Answer with JSON only: {{"document": "..."}}

Query: {query}"""


def clear_cache() -> None:
    with _lock:
        _lens_cache.clear()
        _doc_cache.clear()


def _fresh(entry: tuple[float, object] | None) -> bool:
    return entry is not None and time.monotonic() - entry[0] < CACHE_TTL_S


def infer_lenses(settings: Settings, account_id: str, query: str) -> tuple[Lens, ...]:
    key = (account_id, query)
    with _lock:
        hit = _lens_cache.get(key)
        if _fresh(hit):
            return hit[1]  # type: ignore[index]
    data = parse_json_object(complete(settings, _LENS_PROMPT.format(n=MAX_LENSES, query=query), max_tokens=250))
    raw = data.get("lenses")
    if not isinstance(raw, list):
        raise LLMUnavailable("no lenses list")
    lenses: list[Lens] = []
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("label"), str) and item["label"].strip():
            corpus = str(item["corpus"]) if item.get("corpus") in CORPORA else "documents"
            lens = Lens(item["label"].strip()[:200], corpus)
            if lens not in lenses:
                lenses.append(lens)
    if not lenses:
        raise LLMUnavailable("no usable lens")
    result = tuple(lenses[:MAX_LENSES])
    with _lock:
        _lens_cache[key] = (time.monotonic(), result)
    return result


def hypothetical_documents(settings: Settings, account_id: str, query: str) -> list[str]:
    """One passage per lens (cached); [] on any failure."""
    started = time.perf_counter()
    try:
        lenses = infer_lenses(settings, account_id, query)
        docs: list[str] = []
        generated = 0
        for lens in lenses:
            key = (account_id, query, lens)
            with _lock:
                hit = _doc_cache.get(key)
            if _fresh(hit):
                docs.append(hit[1])  # type: ignore[index]
                continue
            data = parse_json_object(
                complete(
                    settings, _DOC_PROMPT.format(corpus=lens.corpus, label=lens.label, query=query), max_tokens=300
                )
            )
            text = data.get("document")
            if not isinstance(text, str) or not text.strip():
                raise LLMUnavailable("no document text")
            text = text.strip()[:2000]
            with _lock:
                _doc_cache[key] = (time.monotonic(), text)
            docs.append(text)
            generated += 1
    except LLMUnavailable as err:
        log_line("hyde", "fallback", level=logging.WARNING, accountId=short(account_id), reason=str(err)[:160])
        return []
    log_line(
        "hyde",
        accountId=short(account_id),
        lenses=len(docs),
        generated=generated,
        cached=len(docs) - generated,
        ms=round((time.perf_counter() - started) * 1000),
    )
    return docs


def hypothetical_vectors(settings: Settings, account_id: str, query: str, embedder: Embedder) -> Sequence[list[float]]:
    docs = hypothetical_documents(settings, account_id, query)
    if not docs:
        return []
    try:
        return embedder.embed(docs)
    except EmbeddingError as err:
        log_line("hyde", "fallback", level=logging.WARNING, accountId=short(account_id), reason=str(err)[:160])
        return []
