"""Search lenses: what the lens inferrer's answer is taken to mean, and the lenses used when no
model can be asked (one per corpus, the source text itself)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...llm import LLMUnavailable
from ...search.hyde import Lens
from .prompts import CORPORA, MAX_LENSES

MAX_LABEL = 200


def lenses_from(answer: Mapping[str, Any]) -> tuple[Lens, ...]:
    """1-5 distinct lenses from the inferrer's tool input (an unknown corpus is an unreadable
    answer, extra lenses are cut)."""
    raw = answer.get("lenses")
    if not isinstance(raw, list):
        raise LLMUnavailable("the lens inferrer's lenses are not a list")
    out: list[Lens] = []
    for item in raw:
        if not isinstance(item, Mapping) or not isinstance(item.get("label"), str) or not item["label"].strip():
            continue
        if item.get("corpus") not in CORPORA:
            raise LLMUnavailable(f"the lens corpus {str(item.get('corpus'))[:40]!r} is not one of {CORPORA}")
        lens = Lens(" ".join(item["label"].split())[:MAX_LABEL], str(item["corpus"]))
        if lens not in out:
            out.append(lens)
    if not out:
        raise LLMUnavailable("the lens inferrer gave no usable lens")
    return tuple(out[:MAX_LENSES])


def fallback_lenses(source_text: str) -> tuple[Lens, ...]:
    """Without the model: one lens per corpus, labelled by the source text itself."""
    label = " ".join(source_text.split())[:MAX_LABEL]
    return tuple(Lens(label, corpus) for corpus in CORPORA)
