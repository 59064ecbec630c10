"""EXPAND (query expansion, flag MAXY_GS_EXPANSION): Claude Haiku writes 3-5 paraphrases,
cached for an hour per (accountId, query, retrievalClass), each searched by both paths; on
any failure, the original query alone."""

from __future__ import annotations

import logging
import threading
import time

from ..config import Settings
from ..graph.guards import Caller
from ..llm import LLMUnavailable, complete, parse_json_object
from ..logs import log_line, short
from .config import SearchConfig
from .trace import SearchRun

CACHE_TTL_S = 3600.0
MAX_PARAPHRASES = 5

_cache: dict[tuple[str, str, str], tuple[float, list[str]]] = {}
_lock = threading.Lock()

_PROMPT = """Rewrite the search query below as {n} different paraphrases that could match the same
information in a knowledge graph (different words, synonyms, more specific or more general
phrasings). Answer with JSON only: {{"paraphrases": ["...", "..."]}}.

Query: {query}"""


def queries(caller: Caller, query: str, retrieval_class: str | None, config: SearchConfig, run: SearchRun) -> list[str]:
    """The query, then its paraphrases when expansion is on."""
    if not config.expansion or config.llm is None:
        return [query]
    with run.timed("query_expansion"):
        expanded = expand_query(config.llm, caller.account_id, query, retrieval_class)
    run.count(expansions=len(expanded) - 1)
    return expanded


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def expand_query(settings: Settings, account_id: str, query: str, retrieval_class: str | None) -> list[str]:
    """The query followed by 3-5 distinct paraphrases, or just the query."""
    key = (account_id, query, retrieval_class or "")
    now = time.monotonic()
    with _lock:
        hit = _cache.get(key)
        if hit and now - hit[0] < CACHE_TTL_S:
            return [query, *hit[1]]
    started = time.perf_counter()
    try:
        answer = complete(settings, _PROMPT.format(n=4, query=query), max_tokens=300, timeout=3.0)
        raw = parse_json_object(answer).get("paraphrases")
        if not isinstance(raw, list):
            raise LLMUnavailable("no paraphrases list")
        seen = {query.strip().lower()}
        paraphrases = []
        for p in raw:
            if isinstance(p, str) and p.strip() and p.strip().lower() not in seen and len(p) <= 1000:
                seen.add(p.strip().lower())
                paraphrases.append(p.strip())
        paraphrases = paraphrases[:MAX_PARAPHRASES]
        if len(paraphrases) < 3:
            raise LLMUnavailable(f"only {len(paraphrases)} usable paraphrase(s)")
    except LLMUnavailable as err:
        log_line(
            "query-expansion", "fallback", level=logging.WARNING, accountId=short(account_id), reason=str(err)[:160]
        )
        return [query]
    with _lock:
        _cache[key] = (now, paraphrases)
    log_line(
        "query-expansion",
        accountId=short(account_id),
        paraphrases=len(paraphrases),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return [query, *paraphrases]
