"""Text embedders behind one interface.

``EMBED_MODEL`` picks the embedder: one of :data:`ONNX_MODEL_NAMES` (any case; the
default ``all-MiniLM-L6-v2``) runs the embedded int8 ONNX model in-process; any other
value names an Ollama model served at ``OLLAMA_URL`` (an ``ollama:`` prefix is allowed).

    from maxy.embeddings import get_embedder
    vectors = get_embedder().embed(["some text"])
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from maxy.embeddings.base import Embedder, EmbeddingError
from maxy.embeddings.minilm import DIMENSIONS as MINILM_DIMENSIONS
from maxy.embeddings.ollama_embedder import OLLAMA_DIMENSIONS, lookup_ollama_dimensions, strip_ollama_prefix

if TYPE_CHECKING:  # pragma: no cover
    from maxy.config import Settings

__all__ = [
    "Embedder",
    "EmbeddingError",
    "ONNX_MODEL_NAMES",
    "OLLAMA_DIMENSIONS",
    "clear_embedder_cache",
    "get_embedder",
    "is_onnx_model",
    "resolve_dimensions",
]

_ONNX_ALIASES = ("all-MiniLM-L6-v2", "minilm", "all-MiniLM-L6-v2-int8")

#: EMBED_MODEL values that select the embedded ONNX model. Matching is
#: case-insensitive (use :func:`is_onnx_model`); the set holds the canonical spellings
#: and their lower-case forms so a plain ``in`` test also works for those.
ONNX_MODEL_NAMES: frozenset[str] = frozenset(_ONNX_ALIASES) | frozenset(a.lower() for a in _ONNX_ALIASES)
_ONNX_LOWER = frozenset(a.lower() for a in _ONNX_ALIASES)


def is_onnx_model(model: str) -> bool:
    """True when ``model`` (an EMBED_MODEL value) selects the embedded ONNX model."""
    return model.strip().lower() in _ONNX_LOWER


def resolve_dimensions(model: str, explicit: int | None) -> int:
    """Vector length for ``model``: ``explicit`` (EMBED_DIMENSIONS) if given, else the table.

    Raises ValueError for an unknown model without ``explicit``, for a non-positive
    ``explicit``, and for an ``explicit`` other than 384 with the embedded model (whose
    size is fixed).
    """
    if explicit is not None:
        explicit = int(explicit)
        if explicit <= 0:
            raise ValueError(f"EMBED_DIMENSIONS must be a positive integer, got {explicit}")
    if is_onnx_model(model):
        if explicit is not None and explicit != MINILM_DIMENSIONS:
            raise ValueError(
                f"EMBED_MODEL={model} is the embedded all-MiniLM-L6-v2, which always gives "
                f"{MINILM_DIMENSIONS} dimensions, but EMBED_DIMENSIONS={explicit}; "
                f"unset EMBED_DIMENSIONS (or set it to {MINILM_DIMENSIONS})"
            )
        return MINILM_DIMENSIONS
    if explicit is not None:
        return explicit
    known = lookup_ollama_dimensions(model)
    if known is None:
        raise ValueError(
            f"unknown embedding dimensions for EMBED_MODEL={model!r}: it is not in the built-in "
            f"table ({', '.join(sorted(OLLAMA_DIMENSIONS))}); set EMBED_DIMENSIONS to the "
            "length of the vectors this model returns"
        )
    return known


_cache: dict[tuple[str, str, int], Embedder] = {}
_cache_lock = threading.Lock()


def get_embedder(settings: Settings | None = None) -> Embedder:
    """The embedder for ``settings`` (default: the process settings), one per (model, url, dims).

    Building it is cheap: the ONNX model and tokenizer load on the first ``embed``.
    Raises ValueError when the dimensions cannot be resolved (see :func:`resolve_dimensions`).
    """
    if settings is None:
        from maxy.config import get_settings

        settings = get_settings()
    model = (settings.EMBED_MODEL or "").strip()
    if not model:
        raise ValueError(
            "EMBED_MODEL is empty; unset it for the embedded all-MiniLM-L6-v2 or name an Ollama model"
        )
    dims = resolve_dimensions(model, settings.EMBED_DIMENSIONS)
    if is_onnx_model(model):
        key = ("onnx:all-MiniLM-L6-v2", "", dims)  # every alias shares one session
    else:
        key = (strip_ollama_prefix(model), settings.OLLAMA_URL.rstrip("/"), dims)
    with _cache_lock:
        embedder = _cache.get(key)
        if embedder is None:
            if key[0].startswith("onnx:"):
                from maxy.embeddings.minilm import MiniLMEmbedder

                embedder = MiniLMEmbedder()
            else:
                from maxy.embeddings.ollama_embedder import OllamaEmbedder

                embedder = OllamaEmbedder(
                    model=key[0],
                    url=settings.OLLAMA_URL,
                    dimensions=dims,
                    timeout_s=settings.EMBED_TIMEOUT_S,
                )
            _cache[key] = embedder
        return embedder


def clear_embedder_cache() -> None:
    """Forget every cached embedder (tests; after settings change)."""
    with _cache_lock:
        _cache.clear()
