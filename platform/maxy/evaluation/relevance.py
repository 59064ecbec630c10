"""``maxy eval calibrate`` and ``maxy eval relevance``: a relevance that means the same everywhere.

Three development splits are asked the way agents ask them (SciFact claims of its abstracts'
chunks, LoCoMo questions of the facts written about people and of the conversation messages),
and a noise set nothing answers (``noise.py``) is asked of each of those graphs. Every hit keeps
its signals (``maxy.search.relevance.features``).

``calibrate`` fits the logistic model (``fit``: first hit against hit, then query against
query as the gate decides) and picks the highest cut at which the first relevant hit of at
least ``CLEAR_TARGET`` of each split's queries still clears it and the gate costs no split more
than ``MAX_LOSS`` of Recall@10 or nDCG@10; the bias is then moved so that cut reads 0.5.
``relevance`` measures the shipped calibration: how often the first relevant hit clears the
cut, how often a noise query answers "no relevant results", and what the cut costs nDCG@10 and
Recall@10.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..config import Settings
from ..db import Database
from ..embeddings.base import Embedder
from ..errors import ValidationError
from ..graph.guards import Caller
from ..graph.write import GraphWriter
from ..logs import log_line
from ..search import BASELINE, MESSAGE_SEARCH, SearchRequest, hybrid
from ..search.hits import Hit
from ..search.relevance import (
    ANSWER_KEY,
    FEATURES,
    AnswerCalibration,
    Calibration,
    blank_cosine,
    content_words,
    features,
)
from . import beir, conversations, memory, noise
from .logistic import newton
from .metrics import ndcg_at_k, recall_at_k

SPLITS = ("scifact", "memory", "messages")
CLEAR_TARGET = 0.90  # the first relevant hit clears the cut in at least this share of each split
MAX_LOSS = 0.005  # what the cut may cost a split's Recall@10 (and SciFact's nDCG@10): half a point
NOISE_WEIGHT = 8.0  # a noise query that opens the gate weighs this many relevant answers
HARD_ROUNDS = 5
TOP = 10
SCIFACT_DEPTH = 300  # as maxy eval beir: chunk hits, ranked per document
Progress = Callable[[str, int, int], None]


@dataclass
class Asked:
    """One query and its hits, best first, with their signals and judgements."""

    split: str  # scifact | memory | messages, or noise:<split>
    kind: str  # the noise kind; "" for a development question
    hits: list[Hit]
    relevant: list[bool]
    signals: list[tuple[float, ...]]
    ranked: list[list[str]]  # per hit, the ids the split's metric ranks (documents, evidence, messages)
    judged: dict[str, int]  # what is relevant among them


def _asked(
    split: str,
    kind: str,
    query: str,
    hits: list[Hit],
    ranked: list[list[str]],
    judged: dict[str, int],
    embedder: Embedder,
) -> Asked:
    words = content_words(query)
    blank = blank_cosine(embedder, embedder.embed([query])[0])  # as the search's vector path reads it
    return Asked(
        split,
        kind,
        hits,
        [any(judged.get(r, 0) > 0 for r in rs) for rs in ranked],
        [features(h, words, blank) for h in hits],
        ranked,
        judged,
    )


def ask_all(
    settings: Settings,
    db: Database,
    embedder: Embedder,
    scifact_dir: Path,
    locomo_dir: Path,
    *,
    progress: Progress | None = None,
) -> list[Asked]:
    """Every development question and every noise query, asked of its graph with no cut."""
    tick = progress or (lambda stage, done, total: None)
    data = beir.load_beir(scifact_dir, "dev")
    sci = beir.eval_account(settings, data)
    beir.ensure_corpus(settings, db, embedder, data, sci, progress=lambda d, t: tick("scifact corpus", d, t))
    facts, questions = memory.load(locomo_dir)
    fact_accounts = {}
    for conversation, rows in sorted(facts.items()):
        fact_accounts[conversation] = memory.fresh_account(settings, db, conversation)
        memory.write_facts(GraphWriter(db, fact_accounts[conversation], embedder, created_by="eval"), rows)
    by_conv, message_questions = conversations.load(locomo_dir)
    message_accounts = {
        c: conversations.conversation_account(settings, db, embedder, c, msgs) for c, msgs in by_conv.items()
    }

    def scifact(query: str) -> list[Hit]:
        request = SearchRequest(query, limit=SCIFACT_DEPTH, labels=beir.EVAL_LABELS, expand_hops=0, min_relevance=0)
        hits = hybrid(db, Caller(sci.account_id), request, embedder, BASELINE.with_(candidate_k=SCIFACT_DEPTH)).hits
        return _first_per_document(hits)

    def facts_of(account_id: str, query: str) -> list[Hit]:
        request = SearchRequest(query, limit=25, expand_hops=0, min_relevance=0)
        return hybrid(db, Caller(account_id), request, embedder, BASELINE).hits

    def messages_of(account_id: str, query: str) -> list[Hit]:
        request = SearchRequest(query, limit=25, labels=("Message",), expand_hops=0, min_relevance=0)
        return hybrid(db, Caller(account_id), request, embedder, MESSAGE_SEARCH).hits

    asked: list[Asked] = []
    ids = [q for q in data.qrels if q in data.queries]
    for i, qid in enumerate(ids, start=1):
        hits = scifact(data.queries[qid])
        asked.append(
            _asked("scifact", "", data.queries[qid], hits, [[_document(h)] for h in hits], data.qrels[qid], embedder)
        )
        tick("scifact", i, len(ids))
    for i, q in enumerate(questions, start=1):
        hits = facts_of(fact_accounts[str(q["conversation"])].account_id, q["question"])
        evidence = [[str(e) for e in h.properties.get("evidence") or []] for h in hits]
        asked.append(_asked("memory", "", q["question"], hits, evidence, dict.fromkeys(q["evidence"], 1), embedder))
        tick("memory", i, len(questions))
    for i, q in enumerate(message_questions, start=1):
        account = message_accounts.get(str(q["conversation"]))
        if account is None:
            raise ValidationError("questions.jsonl", f"conversation {q['conversation']!r} has no messages")
        hits = messages_of(account.account_id, q["question"])
        ids_ = [[str(h.properties.get("messageId") or h.node_id)] for h in hits]
        asked.append(_asked("messages", "", q["question"], hits, ids_, dict.fromkeys(q["evidence"], 1), embedder))
        tick("messages", i, len(message_questions))

    locomo_texts = [m.content for msgs in by_conv.values() for m in msgs if isinstance(m.content, str)]
    noise_for_scifact = noise.build([q["question"] for q in questions], locomo_texts)
    noise_for_locomo = noise.build(list(data.queries.values()), [d.get("text", "") for d in data.corpus])
    conv_ids = sorted(fact_accounts)
    msg_ids = sorted(message_accounts)
    for i, n in enumerate(noise_for_scifact, start=1):
        hits = scifact(n.text)[:TOP]
        asked.append(_asked("noise:scifact", n.kind, n.text, hits, [[] for _ in hits], {}, embedder))
        tick("noise scifact", i, len(noise_for_scifact))
    for i, n in enumerate(noise_for_locomo, start=1):
        hits = facts_of(fact_accounts[conv_ids[i % len(conv_ids)]].account_id, n.text)[:TOP]
        asked.append(_asked("noise:memory", n.kind, n.text, hits, [[] for _ in hits], {}, embedder))
        hits = messages_of(message_accounts[msg_ids[i % len(msg_ids)]].account_id, n.text)[:TOP]
        asked.append(_asked("noise:messages", n.kind, n.text, hits, [[] for _ in hits], {}, embedder))
        tick("noise locomo", i, len(noise_for_locomo))
    return asked


def _document(hit: Hit) -> str:
    attachment = hit.properties.get("attachmentId")
    return attachment[len(beir.ATTACHMENT_PREFIX) :] if isinstance(attachment, str) else ""


def _first_per_document(hits: list[Hit]) -> list[Hit]:
    """A document's best chunk stands for it (the ranking ``maxy eval beir`` scores)."""
    seen: set[str] = set()
    kept = []
    for h in hits:
        doc = _document(h)
        if doc and doc not in seen:
            seen.add(doc)
            kept.append(h)
    return kept


# ---------------------------------------------------------------------------------------
def fit(asked: Sequence[Asked], model: str, *, l2: float = 1e-3) -> Calibration:
    """The logistic model, its cut, and the bias moved so that the cut reads 0.5.

    First every relevant top-10 hit against every noise top-10 hit, the two sides weighted
    equally; then, as the gate decides per query, each development query's first relevant hit
    against each noise query's most relevant hit (the one that would open the gate), the noise
    side weighted ``NOISE_WEIGHT`` times, refitted ``HARD_ROUNDS`` times as that hit moves.
    """
    import numpy as np

    def solve(pos: Sequence[Sequence[float]], neg: Sequence[Sequence[float]], neg_weight: float, w: Any) -> Any:
        if not pos or not neg:
            raise ValueError("calibration needs relevant hits and noise hits")
        x = np.hstack([np.array([*pos, *neg], dtype=float), np.ones((len(pos) + len(neg), 1))])
        y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
        weight = np.where(y > 0, len(y) / (2 * len(pos)), neg_weight * len(y) / (2 * len(neg)))
        penalty = l2 * np.r_[np.ones(len(FEATURES)), 0.0]
        return newton(x, y, weight, penalty, w, 50)

    development = [a for a in asked if not a.split.startswith("noise")]
    noise_queries = [a for a in asked if a.split.startswith("noise") and a.signals]
    pos = [s for a in development for s, r in zip(a.signals[:TOP], a.relevant, strict=False) if r]
    neg = [s for a in noise_queries for s in a.signals[:TOP]]
    w = solve(pos, neg, 1.0, np.zeros(len(FEATURES) + 1))
    firsts = [a.signals[a.relevant.index(True)] for a in development if True in a.relevant[:TOP]]
    for _ in range(HARD_ROUNDS):
        scores = [np.array(a.signals[:TOP], dtype=float) @ w[:-1] for a in noise_queries]
        opening = [a.signals[int(np.argmax(z))] for a, z in zip(noise_queries, scores, strict=True)]
        w = solve(firsts, opening, NOISE_WEIGHT, w)
    fitted = Calibration(model, tuple(float(v) for v in w[:-1]), float(w[-1]), 0.5)
    return replace(fitted, cut=choose_cut(asked, fitted)).centred()


def choose_cut(asked: Sequence[Asked], calibration: Calibration) -> float:
    """The highest cut (in hundredths) that, on every split, the first relevant hit clears in at
    least ``CLEAR_TARGET`` of the queries and that costs at most ``MAX_LOSS`` of Recall@10 (and
    of nDCG@10 where the split has graded documents)."""
    best = 0.01
    for hundredths in range(1, 100):
        cut = hundredths / 100
        if all(clear_share(asked, calibration, split, cut) >= CLEAR_TARGET for split in SPLITS) and all(
            loss <= MAX_LOSS for loss in cut_losses(asked, calibration, cut).values()
        ):
            best = cut
    return best


def cut_losses(asked: Sequence[Asked], calibration: Calibration, cut: float) -> dict[str, float]:
    """What the gate at ``cut`` costs each split: Recall@10, and nDCG@10 on SciFact."""
    losses: dict[str, float] = {}
    for split in SPLITS:
        rows = [a for a in asked if a.split == split]
        closed = [a for a in rows if _closed(a, calibration, cut)]
        losses[f"{split}:recall@10"] = sum(_recall(_top(a, None, calibration), a) for a in closed) / max(len(rows), 1)
        if split == "scifact":
            losses[f"{split}:ndcg@10"] = sum(
                ndcg_at_k(_top(a, None, calibration), a.judged, TOP) for a in closed
            ) / max(len(rows), 1)
    return losses


def _closed(a: Asked, calibration: Calibration, cut: float) -> bool:
    """The gate closes: no top-10 hit clears the cut."""
    return all(r < cut for r in _relevances(a, calibration)[:TOP])


def _recall(ranked: list[str], a: Asked) -> float:
    return recall_at_k(ranked, a.judged, len(ranked)) if ranked else 0.0


def _relevances(a: Asked, calibration: Calibration) -> list[float]:
    return [calibration.relevance(s) for s in a.signals]


def clear_share(asked: Sequence[Asked], calibration: Calibration, split: str, cut: float) -> float:
    """Of the split's queries with a relevant hit in the top 10, the share whose first one clears ``cut``."""
    cleared = total = 0
    for a in asked:
        if a.split != split:
            continue
        first = next((i for i, r in enumerate(a.relevant[:TOP]) if r), None)
        if first is None:
            continue
        total += 1
        cleared += calibration.relevance(a.signals[first]) >= cut
    return cleared / total if total else 0.0


def measure(asked: Sequence[Asked], calibration: Calibration) -> dict[str, Any]:
    """The figures ``maxy eval relevance`` prints."""
    cut = calibration.cut
    report: dict[str, Any] = {"model": calibration.model, "cut": cut, "splits": {}, "noise": {}}
    for split in SPLITS:
        rows = [a for a in asked if a.split == split]
        before = [_top(a, None, calibration) for a in rows]
        after = [_top(a, cut, calibration) for a in rows]
        figures = {
            "queries": len(rows),
            "answered": sum(any(a.relevant[:TOP]) for a in rows),
            "first_relevant_clears": round(clear_share(asked, calibration, split, cut), 4),
            "recall@10": round(_mean(recall_at_k(r, a.judged, len(r)) for r, a in zip(before, rows, strict=True)), 4),
            "recall@10_cut": round(
                _mean(recall_at_k(r, a.judged, len(r)) for r, a in zip(after, rows, strict=True)), 4
            ),
        }
        if split == "scifact":
            figures["ndcg@10"] = round(_mean(ndcg_at_k(r, a.judged, 10) for r, a in zip(before, rows, strict=True)), 4)
            figures["ndcg@10_cut"] = round(
                _mean(ndcg_at_k(r, a.judged, 10) for r, a in zip(after, rows, strict=True)), 4
            )
        report["splits"][split] = figures
    for split in SPLITS:
        rows = [a for a in asked if a.split == f"noise:{split}"]
        silent = [all(r < cut for r in _relevances(a, calibration)[:TOP]) for a in rows]
        kinds = {k: [s for s, a in zip(silent, rows, strict=True) if a.kind == k] for k in noise.KINDS}
        report["noise"][split] = {
            "queries": len(rows),
            "no_relevant_results": round(_mean(silent), 4),
            "by_kind": {k: round(_mean(v), 4) for k, v in kinds.items() if v},
        }
    log_line(
        "eval:relevance",
        model=calibration.model,
        cut=cut,
        **{f"{s}_clears": report["splits"][s]["first_relevant_clears"] for s in SPLITS},
        **{f"noise_{s}": report["noise"][s]["no_relevant_results"] for s in SPLITS},
    )
    return report


def halves(asked: Sequence[Asked], model: str, draws: int) -> list[dict[str, Any]]:
    """Fit on a random half of the queries (noise included), measure on the other half; per draw,
    the figures of ``measure`` for the held-out half."""
    import random

    reports = []
    for draw in range(draws):
        order = list(range(len(asked)))
        random.Random(draw).shuffle(order)
        fitted_on = [asked[i] for i in order[: len(order) // 2]]
        held_out = [asked[i] for i in order[len(order) // 2 :]]
        reports.append(measure(held_out, fit(fitted_on, model)))
    return reports


def _top(a: Asked, cut: float | None, calibration: Calibration) -> list[str]:
    """The ranked ids of the top 10 hits, or none when the cut's gate closes (None: no gate)."""
    if cut is not None and _closed(a, calibration, cut):
        return []
    ids: list[str] = []
    for ranked in a.ranked[:TOP]:
        ids.extend(i for i in ranked if i not in ids)
    return ids


def _mean(values: Any) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def write_calibration(calibration: Calibration, path: Path, answer: AnswerCalibration | None = None) -> Path:
    """Add (or replace) the model's entry of a calibration file (with its answer calibration)."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"models": {}}
    entry = calibration.to_json()
    if answer is not None:
        entry[ANSWER_KEY] = answer.to_json()
    data.setdefault("models", {})[calibration.model] = entry
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
