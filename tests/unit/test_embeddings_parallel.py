"""A list of texts runs one text per core at once (``workers``): the real bge-small-en-v1.5 int8
model gives every text the vector it gets alone and the vector the previous way (one run after
another on a session with a thread per core) gave it, in input order; a failing run is one
clear error and leaves no thread behind."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maxy.embeddings import EmbeddingError
from maxy.embeddings.bge import BgeSmallEmbedder
from maxy.embeddings.minilm import MiniLMEmbedder

from tests.hypothesis_profile import examples

#: Word pieces of one token each, so a text's length in words is about its length in tokens.
WORDS = "memory graph agent search vector boiler invoice meeting report chunk summary protein cell gene".split()

# Built once for the module: the model loads on first use (fetched once into the cache dir).
CURRENT = BgeSmallEmbedder(workers=2)  # two runs at once even on a one-core machine
PREVIOUS = BgeSmallEmbedder(threads=2, workers=1)  # the previous way: one run at a time, two threads
ALONE = BgeSmallEmbedder(workers=1)  # each text on its own call: its lone vector (kept in its cache)
for _embedder in (CURRENT, PREVIOUS):
    _embedder.set_cache_size(0)  # every call runs the model
ALONE.set_cache_size(100_000)


def _cosines(a: Any, b: Any) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _alone(texts: list[str]) -> np.ndarray:
    return np.asarray([ALONE.embed([t])[0] for t in texts])


texts_strategy = st.lists(
    st.one_of(
        st.lists(st.sampled_from(WORDS), max_size=60).map(" ".join),  # a sentence or a short chunk
        st.lists(st.sampled_from(WORDS), min_size=100, max_size=400).map(" ".join),  # a chunk
        st.text(max_size=40),  # any characters, the empty text included
    ),
    max_size=7,
)


@settings(max_examples=examples(15), suppress_health_check=[HealthCheck.too_slow])
@given(texts=texts_strategy, dup=st.data())
def test_a_list_gives_each_text_its_lone_vector_in_order(texts: list[str], dup: st.DataObject) -> None:
    if texts:  # a text given twice: both places get the same vector
        texts = [*texts, dup.draw(st.sampled_from(texts))]
    got = CURRENT.embed(texts)
    assert len(got) == len(texts)
    if not texts:
        return
    alone = _alone(texts)
    assert _cosines(got, alone).min() >= 0.999
    assert np.allclose(got, alone, atol=1e-5)  # in fact the same computation, run for run
    assert got[-1] == got[texts.index(texts[-1])]
    # and the previous way gave the same vectors (within the bound the cache promises)
    assert _cosines(got, PREVIOUS.embed(texts)).min() >= 0.999


def test_long_texts_are_cut_at_512_word_pieces_as_before() -> None:
    far = " ".join(["graph"] * 700)
    texts = [far + " apples", "short", far + " submarines", " ".join(["memory"] * 510) + " tail"]
    got = CURRENT.embed(texts)
    assert np.allclose(got[0], got[2], atol=1e-6)  # past the limit nothing counts
    assert _cosines(got, PREVIOUS.embed(texts)).min() >= 0.999
    assert _cosines(got, _alone(texts)).min() >= 0.999


def test_an_empty_list_runs_nothing() -> None:
    assert CURRENT.embed([]) == []


class _Spy:
    """Wraps an embedder's ``_run_batch``: which threads ran, and the most runs at once."""

    def __init__(
        self, embedder: BgeSmallEmbedder | MiniLMEmbedder, fail_on: str | None = None, company_s: float = 0.05
    ) -> None:
        self.threads: set[str] = set()
        self.company_s = company_s  # how long a run waits for a second one to start
        self.running = self.most = 0
        self._lock = threading.Lock()
        together = threading.Event()
        inner = embedder._run_batch

        def run(session: Any, encodings: Any) -> Any:
            with self._lock:
                self.threads.add(threading.current_thread().name)
                self.running += 1
                self.most = max(self.most, self.running)
                if self.running > 1:
                    together.set()
            try:
                if fail_on is not None and any(fail_on in e.tokens for e in encodings):
                    raise RuntimeError("bad input")
                together.wait(self.company_s)  # another worker starts its run, on a busy machine too
                return inner(session, encodings)
            finally:
                with self._lock:
                    self.running -= 1

        embedder._run_batch = run  # type: ignore[method-assign]


def test_runs_at_once_and_a_single_text_stays_on_the_calling_thread() -> None:
    embedder = BgeSmallEmbedder(workers=2)
    embedder.set_cache_size(0)
    spy = _Spy(embedder, company_s=0.0)
    embedder.embed(["a search query"])
    assert spy.threads == {threading.current_thread().name}  # a query makes no thread
    spy.company_s = 5.0  # the first run waits (at most 5 s) until a second one starts
    embedder.embed([f"text number {i}" for i in range(6)])
    assert spy.most == 2 and len(spy.threads) == 2
    one = BgeSmallEmbedder(workers=1)
    one.set_cache_size(0)
    serial = _Spy(one)
    one.embed([f"text number {i}" for i in range(4)])
    assert serial.most == 1 and serial.threads == {threading.current_thread().name}


def test_a_failing_run_is_one_error_and_leaves_no_thread() -> None:
    embedder = BgeSmallEmbedder(workers=2)
    embedder.set_cache_size(0)
    _Spy(embedder, fail_on="poison")
    before = threading.active_count()
    with pytest.raises(EmbeddingError, match=r"onnxruntime failed on a batch of 1 \(bad input\)"):
        embedder.embed(["one", "two", "poison", "three", "four"])
    assert threading.active_count() == before
    assert len(embedder.embed(["one", "two"])) == 2  # the embedder still works


def test_minilm_batches_run_at_once_with_the_same_vectors() -> None:
    texts = [" ".join(WORDS[: 1 + i % len(WORDS)]) * (1 + i % 5) for i in range(20)]
    parallel, serial = MiniLMEmbedder(batch_size=4, workers=2), MiniLMEmbedder(batch_size=4, threads=2, workers=1)
    for embedder in (parallel, serial):
        embedder.set_cache_size(0)
    assert np.allclose(parallel.embed(texts), serial.embed(texts), atol=2e-4)


@pytest.mark.parametrize(("field", "value"), [("threads", 0), ("workers", 0), ("workers", -2)])
def test_threads_and_workers_must_be_positive(field: str, value: int) -> None:
    with pytest.raises(ValueError, match=f"{field} must be >= 1, got {value}"):
        BgeSmallEmbedder(**{field: value})
