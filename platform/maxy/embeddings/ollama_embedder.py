"""Embeddings from an Ollama server through the official ``ollama`` client (``/api/embed``).

Every failure becomes an :class:`EmbeddingError` whose message names ``OLLAMA_URL`` and
the fix (start Ollama, ``ollama pull <model>``, raise ``EMBED_TIMEOUT_S``, set
``EMBED_DIMENSIONS``), never a raw httpx traceback. After ``breaker_failures`` failed calls in
a row the embedder stops calling the server for ``cooldown_s`` (:mod:`maxy.embeddings.breaker`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from maxy.embeddings.base import EmbeddingError, check_texts, log_embedded
from maxy.embeddings.breaker import CircuitBreaker

DEFAULT_BATCH_SIZE = 64

#: Output dimensions of common Ollama embedding models. A tagged entry
#: (``name:tag``) wins over the bare name; a bare name means its ``latest`` tag.
OLLAMA_DIMENSIONS: dict[str, int] = {
    "nomic-embed-text": 768,
    "nomic-embed-text-v2-moe": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "all-minilm:l6-v2": 384,
    "all-minilm:l12-v2": 384,
    "all-minilm:22m": 384,
    "all-minilm:33m": 384,
    "snowflake-arctic-embed": 1024,
    "snowflake-arctic-embed:335m": 1024,
    "snowflake-arctic-embed:137m": 768,
    "snowflake-arctic-embed:110m": 768,
    "snowflake-arctic-embed:33m": 384,
    "snowflake-arctic-embed:22m": 384,
    "snowflake-arctic-embed2": 1024,
    "bge-m3": 1024,
    "bge-large": 1024,
    "embeddinggemma": 768,
    "paraphrase-multilingual": 768,
    "granite-embedding:30m": 384,
    "granite-embedding:278m": 768,
    "qwen3-embedding:0.6b": 1024,
    "qwen3-embedding:4b": 2560,
    "qwen3-embedding:8b": 4096,
}


def strip_ollama_prefix(model: str) -> str:
    """``"ollama:nomic-embed-text"`` -> ``"nomic-embed-text"``; other names unchanged."""
    model = model.strip()
    if model.lower().startswith("ollama:"):
        return model[len("ollama:") :].strip()
    return model


def lookup_ollama_dimensions(model: str) -> int | None:
    """Table dimensions for an Ollama model name (tag and namespace aware), or None."""
    name = strip_ollama_prefix(model).lower()
    name = name.rsplit("/", 1)[-1]  # registry.ollama.ai/library/x -> x
    if name.endswith(":latest"):
        name = name[: -len(":latest")]
    if name in OLLAMA_DIMENSIONS:
        return OLLAMA_DIMENSIONS[name]
    base, _, tag = name.partition(":")
    if tag:
        # Quantisation-only tags (e.g. "v1.5", "f16", "q8_0") keep the base's size; a size tag
        # that is not in the table must not silently fall back to another size.
        for key in OLLAMA_DIMENSIONS:
            if key.startswith(base + ":"):
                return None
    return OLLAMA_DIMENSIONS.get(base)


class OllamaEmbedder:
    """Vectors from ``model`` on the Ollama server at ``url``."""

    def __init__(
        self,
        model: str,
        url: str,
        dimensions: int,
        timeout_s: float = 30.0,
        batch_size: int = DEFAULT_BATCH_SIZE,
        breaker_failures: int = 3,
        cooldown_s: float = 60.0,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model = strip_ollama_prefix(model)
        self.url = url
        self.dimensions = int(dimensions)
        self.timeout_s = float(timeout_s)
        self.batch_size = batch_size
        self.name = f"ollama:{self.model}"
        self.breaker = CircuitBreaker(self.name, breaker_failures, cooldown_s)
        self._client: Any = None

    def _get_client(self) -> Any:
        if self._client is None:
            try:
                import ollama
            except ImportError:
                raise EmbeddingError(
                    f"EMBED_MODEL={self.model} needs the ollama client: pip install 'ollama>=0.4' "
                    "(or unset EMBED_MODEL to use the embedded bge-small-en-v1.5)"
                ) from None
            # httpx.Client is thread-safe, so one client per embedder is shared.
            self._client = ollama.Client(host=self.url, timeout=self.timeout_s)
        return self._client

    def _call(self, chunk: list[str]) -> list[list[float]]:
        import httpx
        import ollama

        where = f"Ollama at OLLAMA_URL={self.url}"
        try:
            response = self._get_client().embed(model=self.model, input=chunk)
        except ollama.ResponseError as exc:
            status = getattr(exc, "status_code", -1)
            detail = str(getattr(exc, "error", exc))[:300]
            if status == 404 or "not found" in detail.lower():
                raise EmbeddingError(
                    f"{where} does not have model {self.model!r} ({detail}); "
                    f"run `ollama pull {self.model}` on that server, or set EMBED_MODEL to a model it has"
                ) from None
            raise EmbeddingError(
                f"{where} answered HTTP {status} for model {self.model!r}: {detail}; "
                f"check the Ollama server's log, and that `ollama pull {self.model}` succeeded"
            ) from None
        except httpx.TimeoutException:
            raise EmbeddingError(
                f"{where} did not answer within EMBED_TIMEOUT_S={self.timeout_s:g}s "
                f"(batch of {len(chunk)}, model {self.model!r}); the first call may be loading the model: "
                "raise EMBED_TIMEOUT_S or check the server's load"
            ) from None
        except (ConnectionError, httpx.ConnectError, httpx.NetworkError):
            raise EmbeddingError(
                f"cannot connect to {where}; start Ollama (`ollama serve`) or set OLLAMA_URL to where it "
                "runs, or unset EMBED_MODEL to use the embedded bge-small-en-v1.5"
            ) from None
        except httpx.HTTPError as exc:
            raise EmbeddingError(
                f"request to {where} failed ({type(exc).__name__}: {exc}); check OLLAMA_URL and the server"
            ) from None
        except (ValueError, TypeError) as exc:  # malformed JSON / response schema
            raise EmbeddingError(
                f"{where} sent a response that is not an /api/embed answer ({exc}); "
                "check that OLLAMA_URL points at Ollama (>= 0.3.4) and not at another service"
            ) from None

        vectors = getattr(response, "embeddings", None)
        if vectors is None and isinstance(response, dict):
            vectors = response.get("embeddings")
        vectors = [list(map(float, v)) for v in (vectors or [])]
        if len(vectors) != len(chunk):
            raise EmbeddingError(
                f"{where} returned {len(vectors)} vectors for {len(chunk)} texts (model {self.model!r}); "
                "upgrade Ollama (batch input needs /api/embed, Ollama >= 0.3.4)"
            )
        for vec in vectors:
            if len(vec) != self.dimensions:
                raise EmbeddingError(
                    f"model {self.model!r} at {self.url} returns {len(vec)}-dimensional vectors but "
                    f"{self.dimensions} were expected; set EMBED_DIMENSIONS={len(vec)} and run "
                    "`maxy schema apply --recreate-vector-indexes` (existing vectors must be re-embedded)"
                )
        return vectors

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        items = check_texts(texts, self.name)
        if not items:
            return []
        self.breaker.check()
        started = time.monotonic()
        out: list[list[float]] = []
        try:
            for start in range(0, len(items), self.batch_size):
                out.extend(self._call(items[start : start + self.batch_size]))
        except EmbeddingError as err:
            self.breaker.failed(err)
            raise
        self.breaker.succeeded()
        log_embedded(self.name, len(items), started)
        return out
