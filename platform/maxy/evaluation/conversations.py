"""``maxy eval conversations DIR``: Recall@5/10/25 of evidence turns over long conversations.

Each conversation of ``messages.jsonl`` is imported into an account of its own (reused when
the same messages are already there); every question of ``questions.jsonl`` is searched
in its conversation's account through the same message search the conversation-search
tool uses; Recall@k is the share of the question's evidence ids among the first k results.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..accounts import ValidatedAccount
from ..config import Settings
from ..conversations.importing import ImportedMessage, import_messages, parse_message
from ..db import Database
from ..embeddings.base import Embedder
from ..errors import ValidationError
from ..graph.guards import Caller
from ..graph.write import GraphWriter
from ..logs import log_line
from .accounts import empty_account, named_account
from .folds import DEFAULT_FOLDS, conversation_report, conversation_sessions
from .metrics import RecallByCategory, log_fields

KS = (5, 10, 25)
MARKER = "conversation-eval.json"


def load(directory: Path) -> tuple[dict[str, list[ImportedMessage]], list[dict[str, Any]]]:
    directory = Path(directory)
    messages_path, questions_path = directory / "messages.jsonl", directory / "questions.jsonl"
    for path in (messages_path, questions_path):
        if not path.is_file():
            raise ValidationError("DIR", f"{path} is missing (the folder needs messages.jsonl and questions.jsonl)")
    by_conv: dict[str, list[ImportedMessage]] = defaultdict(list)
    for n, line in enumerate(messages_path.open(encoding="utf-8"), start=1):
        if line.strip():
            m = parse_message(json.loads(line), f"messages.jsonl:{n}")
            by_conv[m.conversation].append(m)
    questions = []
    for n, line in enumerate(questions_path.open(encoding="utf-8"), start=1):
        if not line.strip():
            continue
        q = json.loads(line)
        if not isinstance(q.get("question"), str) or not isinstance(q.get("evidence"), list):
            raise ValidationError(f"questions.jsonl:{n}", "needs 'question' (text) and 'evidence' (list of ids)")
        questions.append(q)
    return dict(by_conv), questions


def representation(messages: list[ImportedMessage]) -> str:
    """The messages as they would be stored and embedded: a change to either re-imports."""
    from ..conversations.importing import build_specs
    from ..graph.text import embedding_text

    digest = hashlib.sha256()
    for spec in build_specs("eval", messages):
        row = [list(spec.labels), spec.properties, embedding_text(spec.labels, spec.properties)]
        digest.update(json.dumps(row, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:16]


def conversation_account(
    settings: Settings, db: Database, embedder: Embedder, conversation: str, messages: list[ImportedMessage]
) -> ValidatedAccount:
    fingerprint = representation(messages)
    account = named_account(settings, f"conversations:{conversation}")
    marker = settings.data_root / "accounts" / account.account_id / MARKER
    if marker.is_file() and json.loads(marker.read_text()).get("fingerprint") == fingerprint:
        return account
    empty_account(db, account)
    import_messages(GraphWriter(db, account, embedder, created_by="eval"), messages)
    marker.write_text(json.dumps({"fingerprint": fingerprint, "messages": len(messages)}) + "\n")
    return account


def evaluate(
    settings: Settings,
    db: Database,
    embedder: Embedder,
    directory: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    search: Callable[..., list[dict[str, Any]]] | None = None,
    config: Any = None,
    folds: int = DEFAULT_FOLDS,
) -> dict[str, Any]:
    if search is None:
        from ..conversations import search_messages

        search = search_messages

    by_conv, questions = load(directory)
    accounts = {c: conversation_account(settings, db, embedder, c, msgs) for c, msgs in by_conv.items()}
    recall_by = RecallByCategory(KS)
    latencies = []
    for i, q in enumerate(questions, start=1):
        account = accounts.get(str(q.get("conversation")))
        if account is None:
            raise ValidationError("questions.jsonl", f"conversation {q.get('conversation')!r} has no messages")
        t0 = time.perf_counter()
        extra = {"config": config, "min_relevance": 0} if config is not None else {"min_relevance": 0}
        rows = search(db, Caller(account.account_id), embedder, q["question"], limit=max(KS), **extra)
        latencies.append((time.perf_counter() - t0) * 1000)
        ranked = [r["messageId"] for r in rows]
        recall_by.add(str(q.get("category") or ""), [set(ranked[:k]) for k in KS], q["evidence"])
        if progress is not None:
            progress(i, len(questions))
    result = recall_by.result(latencies)
    result["folds"] = conversation_report(recall_by.per_question, questions, folds, conversation_sessions(questions))
    overall = result["overall"]
    log_line(
        "eval:conversations",
        questions=len(questions),
        folds=result["folds"]["folds"],
        **log_fields(overall),
    )
    return result
