"""``maxy eval memory DIR``: how well an agent finds again what it wrote about people.

``observations.jsonl`` holds the facts an agent would have written while long conversations
went on. Each conversation gets a fresh account (emptied when it exists); each speaker is
written as a Person and each fact as a ``Fact`` about its person (an ABOUT edge), through
:func:`maxy.memory.remember.remember`, the function ``memory-write`` runs, with ``validFrom`` =
the session's time and the fact's evidence ids kept on the node. Each question of
``questions.jsonl`` whose evidence every fact's evidence covers is then asked through
:func:`maxy.memory.recall.recall`, the function ``memory-search`` runs, with only its text.
Recall@k is the share of the question's evidence ids among the evidence of the first k hits.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..accounts import ValidatedAccount
from ..config import Settings
from ..db import Database
from ..embeddings.base import Embedder
from ..errors import ValidationError
from ..graph.guards import Caller
from ..graph.write import Edge, GraphWriter
from ..logs import log_line
from ..memory.recall import recall
from ..memory.remember import MemoryWrite, remember
from ..search import SearchRequest
from .accounts import empty_account, named_account
from .folds import DEFAULT_FOLDS, conversation_report, conversation_sessions
from .metrics import RecallByCategory, log_fields

KS = (5, 10, 25)
FACT_FIELDS = ("conversation", "about", "fact", "evidence")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise ValidationError("DIR", f"{path} is missing (the folder needs observations.jsonl and questions.jsonl)")
    rows = []
    for n, line in enumerate(path.open(encoding="utf-8"), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise ValidationError(f"{path.name}:{n}", f"not JSON ({err.msg})") from None
    return rows


def load(directory: Path) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Facts by conversation, and the questions every one of whose evidence ids a fact covers."""
    facts: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for n, row in enumerate(_jsonl(Path(directory) / "observations.jsonl"), start=1):
        if not all(row.get(k) for k in FACT_FIELDS) or not isinstance(row["evidence"], list):
            raise ValidationError(f"observations.jsonl:{n}", f"needs {', '.join(FACT_FIELDS)} (evidence: a list)")
        facts[str(row["conversation"])].append(row)
    covered = {c: {e for f in rows for e in f["evidence"]} for c, rows in facts.items()}
    questions = []
    for n, q in enumerate(_jsonl(Path(directory) / "questions.jsonl"), start=1):
        if not isinstance(q.get("question"), str) or not isinstance(q.get("evidence"), list):
            raise ValidationError(f"questions.jsonl:{n}", "needs 'question' (text) and 'evidence' (list of ids)")
        known = covered.get(str(q.get("conversation")), set())
        if q["evidence"] and set(q["evidence"]) <= known:
            questions.append(q)
    return dict(facts), questions


def fresh_account(settings: Settings, db: Database, conversation: str) -> ValidatedAccount:
    """The account ``memory:<conversation>``, created or emptied."""
    account = named_account(settings, f"memory:{conversation}")
    empty_account(db, account)
    return account


def write_facts(writer: GraphWriter, facts: list[dict[str, Any]]) -> int:
    """Each speaker as a Person (resolved after the first), each fact as a Fact ABOUT them."""
    people: dict[str, str] = {}
    for f in facts:
        about = str(f["about"])
        if about not in people:
            people[about] = remember(writer, MemoryWrite(["Person"], {"name": about}))["nodeId"]
        props = {"text": f["fact"], "evidence": [str(e) for e in f["evidence"]]}
        if f.get("timestamp"):
            props["validFrom"] = f["timestamp"]
        remember(writer, MemoryWrite(["Fact"], props, edges=[Edge("ABOUT", people[about])]))
    return len(facts)


def evaluate(
    settings: Settings,
    db: Database,
    embedder: Embedder,
    directory: Path,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    folds: int = DEFAULT_FOLDS,
) -> dict[str, Any]:
    facts, questions = load(directory)
    # the sessions every question names, so the folds match those of maxy eval conversations
    last_session = conversation_sessions(_jsonl(Path(directory) / "questions.jsonl"))
    accounts: dict[str, ValidatedAccount] = {}
    started = time.perf_counter()
    written = 0
    for conversation, rows in sorted(facts.items()):
        account = accounts[conversation] = fresh_account(settings, db, conversation)
        written += write_facts(GraphWriter(db, account, embedder, created_by="eval"), rows)
        if progress is not None:
            progress("facts", written, sum(map(len, facts.values())))
    write_ms = (time.perf_counter() - started) * 1000
    recall_by = RecallByCategory(KS)
    latencies = []
    for i, q in enumerate(questions, start=1):
        account = accounts[str(q["conversation"])]
        t0 = time.perf_counter()
        response = recall(
            db,
            Caller(account.account_id),
            embedder,
            settings,
            SearchRequest(q["question"], limit=max(KS), min_relevance=0),
        )
        latencies.append((time.perf_counter() - t0) * 1000)
        ranked = [h.properties.get("evidence") or [] for h in response.hits]
        found_at = [{e for ev in ranked[:k] for e in ev} for k in KS]
        recall_by.add(str(q.get("category") or ""), found_at, q["evidence"])
        if progress is not None:
            progress("questions", i, len(questions))
    result = {**recall_by.result(latencies), "facts": written, "write_ms": round(write_ms)}
    result["folds"] = conversation_report(recall_by.per_question, questions, folds, last_session)
    overall = result["overall"]
    log_line(
        "eval:memory", questions=len(questions), facts=written, folds=result["folds"]["folds"], **log_fields(overall)
    )
    return result
