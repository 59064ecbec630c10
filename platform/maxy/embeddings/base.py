"""The one interface every embedder satisfies, and the one error every embedder raises."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from maxy.errors import EmbeddingError
from maxy.logs import log_line

__all__ = ["Embedder", "EmbeddingError", "check_texts", "log_embedded"]  # EmbeddingError: maxy.errors


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of a fixed length.

    ``name`` identifies the model the vectors came from (for example
    ``"all-MiniLM-L6-v2-int8"`` or ``"ollama:nomic-embed-text"``) and ``dimensions`` is
    the length of every vector. ``embed`` returns one vector per input text, in input
    order, and raises :class:`EmbeddingError` on any failure.
    """

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def check_texts(texts: Sequence[str], embedder_name: str) -> list[str]:
    """Validate the input of ``embed`` and return it as a list."""
    if isinstance(texts, str):
        raise EmbeddingError(
            f"{embedder_name}: embed() takes a sequence of strings, got a single str; wrap it in a list: embed([text])"
        )
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise EmbeddingError(
                f"{embedder_name}: text #{i} is {type(text).__name__}, not str; convert inputs to str before embedding"
            )
    return out


def log_embedded(embedder_name: str, texts: int, started: float) -> None:
    """The one debug line per ``embed`` call, the same for every embedder."""
    log_line(
        "embed",
        "batch",
        level=logging.DEBUG,
        model=embedder_name,
        texts=texts,
        embed_ms=int((time.monotonic() - started) * 1000),
    )
