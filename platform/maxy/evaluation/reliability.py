"""The relevance an answer shows, fitted and checked against what is relevant.

Every development question (SciFact claims, LoCoMo questions of the facts and of the messages,
asked as ``relevance.ask_all`` asks them) whose answer clears the gate gives the top ``TOP``
hits an agent would read, each judged relevant or not. :func:`fit_answers` fits
``maxy.search.relevance.AnswerCalibration`` on them; :func:`reliability` bins the shown
probabilities (monotone down each answer) against the share of hits that are relevant, per
split and over all, with the expected calibration error (ECE: the bins' gaps weighted by their
hits); :func:`cross_validated` does it for each of ``folds`` held-out folds of questions, with
the model fitted on the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..search.relevance import ANSWER_FEATURES, AnswerCalibration, Calibration, answer_signals
from .logistic import newton
from .relevance import SPLITS, TOP, Asked

BINS = 10
ECE_TARGET = 0.05


def answered(asked: Sequence[Asked], gate: Calibration) -> list[Asked]:
    """The development questions an agent gets hits for: their top hits clear the gate's cut."""
    return [
        a
        for a in asked
        if a.split in SPLITS and a.signals and any(gate.relevance(s) >= gate.cut for s in a.signals[:TOP])
    ]


def _rows(a: Asked, gate: Calibration) -> tuple[list[tuple[float, ...]], list[int], list[float]]:
    readings = [gate.relevance(s) for s in a.signals[:TOP]]
    scores = [h.score for h in a.hits[:TOP]]
    return answer_signals(readings, scores), [int(r) for r in a.relevant[:TOP]], readings


def fit_answers(asked: Sequence[Asked], gate: Calibration, *, l2: float = 1e-3) -> AnswerCalibration:
    """The logistic model over ANSWER_FEATURES, fitted on every top hit of the answered questions,
    each split weighing the same."""
    import numpy as np

    xs: list[tuple[float, ...]] = []
    ys: list[int] = []
    weights: list[float] = []
    chosen = answered(asked, gate)
    for split in SPLITS:
        rows = [_rows(a, gate) for a in chosen if a.split == split]
        hits = sum(len(y) for _, y, _ in rows)
        for x, y, _ in rows:
            xs.extend(x)
            ys.extend(y)
            weights.extend([1.0 / max(hits, 1)] * len(y))
    if not xs or not any(ys) or all(ys):
        raise ValueError("the answer calibration needs relevant and other hits")
    design = np.hstack([np.array(xs, dtype=float), np.ones((len(xs), 1))])
    target = np.array(ys, dtype=float)
    w_obs = np.array(weights) * len(weights) / sum(weights)
    penalty = l2 * np.r_[np.ones(len(ANSWER_FEATURES)), 0.0]
    w = newton(design, target, w_obs, penalty, np.zeros(design.shape[1]), 100)
    return AnswerCalibration(gate.model, tuple(float(v) for v in w[:-1]), float(w[-1]))


def shown_pairs(
    asked: Sequence[Asked], gate: Calibration, answer: AnswerCalibration
) -> dict[str, list[tuple[float, int]]]:
    """Per split, (the probability shown, relevant or not) of every top hit of every answer."""
    out: dict[str, list[tuple[float, int]]] = {split: [] for split in SPLITS}
    for a in answered(asked, gate):
        _, ys, readings = _rows(a, gate)
        shown = answer.probabilities(readings, [h.score for h in a.hits[:TOP]])
        out[a.split].extend(zip(shown, ys, strict=True))
    return out


def table(pairs: Sequence[tuple[float, int]], bins: int = BINS) -> dict[str, Any]:
    """The reliability table of (probability, outcome) pairs, in ``bins`` equal-width bins, and the ECE."""
    rows = []
    ece = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(p, y) for p, y in pairs if lo <= p < hi or (b == bins - 1 and p == 1.0)]
        if not inside:
            continue
        mean = sum(p for p, _ in inside) / len(inside)
        share = sum(y for _, y in inside) / len(inside)
        ece += len(inside) / len(pairs) * abs(mean - share)
        rows.append(
            {"bin": f"{lo:.1f}-{hi:.1f}", "hits": len(inside), "shown": round(mean, 3), "relevant": round(share, 3)}
        )
    return {"hits": len(pairs), "ece": round(ece, 4), "rows": rows}


def reliability(asked: Sequence[Asked], gate: Calibration, answer: AnswerCalibration) -> dict[str, Any]:
    """The reliability tables of the shown relevance: over all splits, and per split."""
    pairs = shown_pairs(asked, gate, answer)
    report = {"all": table([p for split in SPLITS for p in pairs[split]])}
    report.update({split: table(pairs[split]) for split in SPLITS})
    return report


def cross_validated(asked: Sequence[Asked], gate: Calibration, folds: int = 5) -> dict[str, Any]:
    """Each fold of questions measured with the model fitted on the other folds: the pooled
    held-out reliability tables, and each fold's ECE over all splits (a fold whose other folds
    hold no relevant hit, or nothing else, is left out)."""
    development = [a for a in asked if a.split in SPLITS]
    pooled: dict[str, list[tuple[float, int]]] = {split: [] for split in SPLITS}
    per_fold = []
    for k in range(folds):
        held = [a for i, a in enumerate(development) if i % folds == k]
        try:
            fitted = fit_answers([a for i, a in enumerate(development) if i % folds != k], gate)
        except ValueError:  # too few questions to fit without this fold: it is left out
            continue
        pairs = shown_pairs(held, gate, fitted)
        per_fold.append(table([p for split in SPLITS for p in pairs[split]])["ece"])
        for split in SPLITS:
            pooled[split].extend(pairs[split])
    report = {"folds": per_fold, "all": table([p for split in SPLITS for p in pooled[split]])}
    report.update({split: table(pooled[split]) for split in SPLITS})
    return report
