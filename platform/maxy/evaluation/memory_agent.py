"""``maxy eval memory-agent DIR``: Recall@5/10/25 of evidence turns after the memory agent
has read each conversation.

Each conversation of ``messages.jsonl`` is fed through the memory agent
(``maxy.memoryagent.runner``) into an account of its own, session by session: its turns
become Messages (conversation-append) and each turn one MemoryEntry. Every question of
``questions.jsonl`` is then searched in that account three ways, in the same run:

- ``messages``: the raw message search (the conversation-search tool's), the baseline;
- ``entries``: the agent's entries alone, each standing for the turn it records;
- ``entries+messages``: entries and messages searched together, each turn counted once.

Recall@k is the share of the question's evidence ids among the turns of the first k results,
in the form ``maxy eval conversations`` prints. The agent runs in model mode when
ANTHROPIC_API_KEY is set and degraded mode otherwise; the account is rebuilt when the
messages, the mode, the model or the prompts change (or with ``fresh``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..accounts import ValidatedAccount
from ..config import Settings
from ..conversations.importing import ImportedMessage
from ..db import Database
from ..embeddings.base import Embedder
from ..errors import ValidationError
from ..graph.guards import Caller
from ..graph.write import GraphWriter
from ..logs import log_line
from ..search import MESSAGE_SEARCH, SearchConfig, SearchRequest, hybrid
from .accounts import empty_account, named_account
from .conversations import load, representation
from .folds import DEFAULT_FOLDS, conversation_report, conversation_sessions
from .metrics import RecallByCategory, log_fields

KS = (5, 10, 25)
MARKER = "memory-agent-eval.json"
VARIANTS: dict[str, tuple[str, ...]] = {
    "messages": ("Message",),
    "entries": ("MemoryEntry",),
    "entries+messages": ("MemoryEntry", "Message"),
}
# a search may return a turn's entry and its message: ask for more so k distinct turns remain
_OVERFETCH = 2


def agent_mode(settings: Settings) -> str:
    return "model" if settings.ANTHROPIC_API_KEY else "degraded"


def _fingerprint(settings: Settings, messages: Sequence[ImportedMessage]) -> str:
    from ..memoryagent.prompts import load_prompts

    digest = hashlib.sha256()
    digest.update(representation(list(messages)).encode())  # the messages as stored and embedded
    mode = agent_mode(settings)
    digest.update(f"mode={mode} model={settings.MAXY_AGENT_MODEL if mode == 'model' else '-'}".encode())
    digest.update(json.dumps(load_prompts(), sort_keys=True).encode())
    return digest.hexdigest()[:16]


def agent_account(
    settings: Settings,
    db: Database,
    embedder: Embedder,
    conversation: str,
    messages: list[ImportedMessage],
    *,
    fresh: bool = False,
    progress: Callable[[int], None] | None = None,
) -> tuple[ValidatedAccount, dict[str, Any] | None]:
    """The conversation's account after the agent has read it, and what this call wrote
    (None when the account was already up to date)."""
    from ..memoryagent.runner import run_messages

    fingerprint = _fingerprint(settings, messages)
    account = named_account(settings, f"memory-agent:{conversation}")
    marker = settings.data_root / "accounts" / account.account_id / MARKER
    if not fresh and marker.is_file() and json.loads(marker.read_text()).get("fingerprint") == fingerprint:
        return account, None
    marker.unlink(missing_ok=True)  # a run cut short is rebuilt next time, never reused
    empty_account(db, account)
    writer = GraphWriter(db, account, embedder, created_by="eval")
    summary = run_messages(
        writer, settings, messages, progress=(lambda done, _total: progress(1)) if progress else None
    )
    written = summary.as_dict()
    marker.write_text(json.dumps({"fingerprint": fingerprint, **written}) + "\n")
    return account, written


def ranked_turns(
    db: Database, caller: Caller, embedder: Embedder, question: str, labels: tuple[str, ...], config: SearchConfig
) -> list[str]:
    """The message ids of the turns the search found, best first, each once: an entry
    stands for the turn it records."""
    request = SearchRequest(question, limit=max(KS) * _OVERFETCH, labels=labels, expand_hops=0, min_relevance=0)
    response = hybrid(db, caller, request, embedder, config.with_(keywords=()))
    seen: dict[str, None] = {}
    for hit in response.hits:
        mid = hit.properties.get("messageId")
        if isinstance(mid, str) and mid:
            seen.setdefault(mid, None)
    return list(seen)[: max(KS)]


def evaluate(
    settings: Settings,
    db: Database,
    embedder: Embedder,
    directory: Any,
    *,
    fresh: bool = False,
    config: SearchConfig | None = None,
    feed_progress: Callable[[int, int], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    folds: int = DEFAULT_FOLDS,
) -> dict[str, Any]:
    """Feed, then search each question three ways (see the module docstring)."""
    by_conv, questions = load(directory)
    total_messages = sum(len(m) for m in by_conv.values())
    fed = 0

    def tick(n: int) -> None:
        nonlocal fed
        fed += n
        if feed_progress is not None:
            feed_progress(fed, total_messages)

    accounts: dict[str, ValidatedAccount] = {}
    written: dict[str, Any] = {}
    for conversation, msgs in by_conv.items():
        accounts[conversation], wrote = agent_account(
            settings, db, embedder, conversation, msgs, fresh=fresh, progress=tick
        )
        if wrote is None:
            tick(len(msgs))
        else:
            written[conversation] = wrote
    config = config or MESSAGE_SEARCH
    recalls = {name: RecallByCategory(KS) for name in VARIANTS}
    latencies: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for i, q in enumerate(questions, start=1):
        account = accounts.get(str(q.get("conversation")))
        if account is None:
            raise ValidationError("questions.jsonl", f"conversation {q.get('conversation')!r} has no messages")
        caller = Caller(account.account_id)
        for name, labels in VARIANTS.items():
            t0 = time.perf_counter()
            ranked = ranked_turns(db, caller, embedder, q["question"], labels, config)
            latencies[name].append((time.perf_counter() - t0) * 1000)
            recalls[name].add(str(q.get("category") or ""), [set(ranked[:k]) for k in KS], q["evidence"])
        if progress is not None:
            progress(i, len(questions))
    results = {name: recalls[name].result(latencies[name]) for name in VARIANTS}
    last_session = conversation_sessions(questions)
    for name, result in results.items():
        result["folds"] = conversation_report(recalls[name].per_question, questions, folds, last_session)
        log_line(
            "eval:memory-agent",
            variant=name,
            questions=len(questions),
            folds=result["folds"]["folds"],
            **log_fields(result["overall"]),
        )
    return {"mode": agent_mode(settings), "written": written, **results}
