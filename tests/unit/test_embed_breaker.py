"""The Ollama embedder's circuit breaker, against a real HTTP server that hangs (tests/fake_ollama.py)."""

from __future__ import annotations

import logging
import time

import pytest
from maxy.embeddings.base import EmbeddingError
from maxy.embeddings.breaker import CircuitBreaker
from maxy.embeddings.ollama_embedder import OllamaEmbedder

from tests.fake_ollama import FakeOllama, fake_vector

TIMEOUT_S = 0.5


def _timed_failure(emb: OllamaEmbedder) -> tuple[float, str]:
    started = time.monotonic()
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["a question"])
    return time.monotonic() - started, str(info.value)


def test_hung_ollama_opens_the_breaker_then_a_recovered_one_closes_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    with FakeOllama(dims=384, mode="hang") as fake:
        emb = OllamaEmbedder("all-minilm", fake.url, 384, timeout_s=TIMEOUT_S, breaker_failures=2, cooldown_s=1.5)
        for _ in range(2):  # each call waits the full EMBED_TIMEOUT_S
            waited, message = _timed_failure(emb)
            assert TIMEOUT_S * 0.9 <= waited < TIMEOUT_S + 1.5
            assert "EMBED_TIMEOUT_S" in message
        assert emb.breaker.state()["breaker"] == "open"
        assert "[embed] breaker-open model=ollama:all-minilm failures=2 cooldown-s=1.5" in caplog.text

        # open: no call reaches the server, the error comes at once and says what happens meanwhile
        asked = len(fake.requests)
        for _ in range(5):
            waited, message = _timed_failure(emb)
            assert waited < 0.05
            assert "paused after 2 failed calls" in message and "BM25-only" in message
            assert "EMBED_BREAKER_COOLDOWN_S" in message and "did not answer" in message
        assert len(fake.requests) == asked
        state = emb.breaker.state()
        assert state["retryInS"] is not None and 0 < state["retryInS"] <= 1.5
        assert "EMBED_TIMEOUT_S" in (state["lastError"] or "")

        # after the cool-down one call tries again: the server answers, the breaker closes
        fake.mode = "normal"
        time.sleep(1.6)
        assert emb.embed(["x"]) == [fake_vector("x", 384)]
        assert emb.breaker.state() == {"breaker": "closed", "failuresInRow": 0, "lastError": None, "retryInS": None}
        assert "[embed] breaker-closed model=ollama:all-minilm" in caplog.text


def test_a_failed_trial_reopens_at_once_and_successes_reset_the_count() -> None:
    breaker = CircuitBreaker("ollama:m", failures=3, cooldown_s=0.2)
    for _ in range(2):
        breaker.failed(EmbeddingError("boom"))
    breaker.succeeded()  # not three in a row: still closed, count reset
    for _ in range(2):
        breaker.failed(EmbeddingError("boom"))
    breaker.check()
    assert breaker.state()["breaker"] == "closed"
    breaker.failed(EmbeddingError("boom"))
    assert breaker.state()["breaker"] == "open"
    time.sleep(0.25)
    assert breaker.state()["breaker"] == "half-open"
    breaker.check()  # the one trial call
    with pytest.raises(EmbeddingError, match="paused"):
        breaker.check()  # a second caller during the trial does not reach the server
    breaker.failed(EmbeddingError("still down"))  # one failed trial is enough to reopen
    assert breaker.state()["breaker"] == "open"
    with pytest.raises(EmbeddingError, match="still down"):
        breaker.check()
