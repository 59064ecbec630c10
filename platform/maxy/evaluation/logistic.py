"""Weighted, L2-penalised logistic regression by Newton's method: the fit behind both relevance
readings (the cut's, ``relevance.fit``, and the answers', ``reliability.fit_answers``)."""

from __future__ import annotations

from typing import Any


def newton(design: Any, target: Any, weight: Any, penalty: Any, w: Any, rounds: int) -> Any:
    """The weights (the last one the bias, a column of ones in ``design``) that minimise the
    weighted log loss plus ``penalty * w**2 / 2``, from ``w``, in at most ``rounds`` steps."""
    import numpy as np

    for _ in range(rounds):
        p = 1.0 / (1.0 + np.exp(-design @ w))
        grad = design.T @ ((p - target) * weight) / len(target) + penalty * w
        hess = (design * (p * (1 - p) * weight)[:, None]).T @ design / len(target) + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w = w - step
        if float(np.abs(step).max()) < 1e-10:
            break
    return w
