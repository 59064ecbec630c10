"""A BERT-family sentence embedder run in-process by onnxruntime on the CPU.

Each concrete model (``minilm.py``, ``bge.py``) says where its ONNX graph and
``tokenizer.json`` come from, how token vectors become one sentence vector (``mean``
over the kept tokens, or the ``cls`` token) and how many word pieces it reads. The graph
takes ``input_ids``, ``attention_mask`` and (optionally) ``token_type_ids`` and returns
``last_hidden_state``; pooling and L2 normalisation happen here. Inputs are sorted by
length so that each batch pads to a similar width, then returned in input order.

A list of texts runs as several one-thread ONNX runs at once, one per core (``workers``),
rather than one run after another on a session with a thread per core: each run computes
exactly what it would compute alone, so the vectors do not change, and the cores never wait
on each other. On two cores shared with other work, bge-small-en-v1.5 embeds chunk-sized
texts about twice as fast this way (1.8-2.3x, ``benchmarks/embed_throughput.py``): the
two-thread session spent up to three times the CPU per text, its threads spinning and
waiting for each other whenever one of them was not scheduled. On idle cores the gain is
smaller (a two-thread run is already 1.6x a one-thread one there).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from maxy.embeddings.base import EmbeddingError, check_texts, log_embedded
from maxy.logs import log_line

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

DEFAULT_BATCH_SIZE = 32
Pooling = Literal["mean", "cls"]


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class OnnxBertEmbedder:
    """A sentence embedder over one ONNX BERT graph. Subclasses set the class attributes
    and implement :meth:`_model_file` and :meth:`_tokenizer_file`."""

    name: str = "onnx-bert"
    dimensions: int = 384
    max_tokens: int = 256
    pooling: Pooling = "mean"
    #: How the weighted-sum fusion should read this model's cosines: ``cosine`` as they
    #: are, or ``minmax`` (rescaled within each result list) for a model whose cosines
    #: crowd into a narrow band (see docs/search-quality.md).
    fusion_vector_norm: str = "cosine"
    #: Most word pieces (texts x longest) one ONNX run may take; see :meth:`_batches`.
    token_budget: int = 512
    #: Extra text shown in load errors: how to repair the model's files.
    repair_hint: str = ""
    #: The vectors of this many texts embedded last are kept, by text (1.5 KB each): an agent
    #: asks the same question again, a note is written again, an unchanged file re-read.
    cache_size: int = 4096

    def __init__(
        self,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        threads: int = 1,
        workers: int | None = None,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_tokens: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        max_tokens = self.max_tokens if max_tokens is None else max_tokens
        if not 2 < max_tokens <= 512:
            raise ValueError(f"max_tokens must be in 3..512 (the model has 512 positions), got {max_tokens}")
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        #: Threads inside one ONNX run. One by default: see the module docstring.
        self.threads = threads
        #: ONNX runs at once for a list of texts (default: one per core), each on its own thread.
        self.workers = workers or cpu_count()
        self._model_path = Path(model_path) if model_path else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path else None
        self._lock = threading.Lock()
        self._session: Any = None
        # With threads > 1, a second session with one thread, for a call embedding a single text
        # (a search's query, a single write): it runs while Neo4j works on the same cores (the
        # search's full-text query starts beside it), where two threads contend and wait on each other.
        self._single: Any = None
        self._open: Any = None  # threads -> a new session over the loaded model
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._pad_id = 0
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

    # -- where the files come from (per model) ----------------------------------------

    def _model_file(self) -> Path:  # pragma: no cover - abstract
        raise NotImplementedError

    def _tokenizer_file(self) -> Path:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- loading -----------------------------------------------------------------

    def _ensure_loaded(self) -> tuple[Any, Any]:
        session, tokenizer = self._session, self._tokenizer
        if session is not None and tokenizer is not None:
            return session, tokenizer
        with self._lock:
            if self._session is None or self._tokenizer is None:
                self._load()
            return self._session, self._tokenizer

    def _single_session(self, session: Any) -> Any:
        """The one-thread session (made on first use), or ``session`` when that has one thread."""
        if self.threads == 1:
            return session
        if self._single is None:
            with self._lock:
                if self._single is None:
                    self._single = self._open(1)
        return self._single

    def _load(self) -> None:
        started = time.monotonic()
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(
                f"the embedded model needs onnxruntime and tokenizers ({exc}); "
                "pip install 'onnxruntime>=1.18' 'tokenizers>=0.19'"
            ) from None

        if self._model_path is not None:
            model_path = self._model_path
            if not model_path.is_file():
                raise EmbeddingError(f"ONNX model {model_path} does not exist; pass an existing model file")
        else:
            model_path = self._model_file()
        tokenizer_path = self._tokenizer_path if self._tokenizer_path is not None else self._tokenizer_file()

        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise EmbeddingError(f"cannot read tokenizer {tokenizer_path} ({exc}); {self.repair_hint}") from None
        # Shipped tokenizer.json files may carry their own truncation and fixed padding:
        # truncate at this model's limit instead, and pad per batch in _run_batch.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_tokens)
        pad_id = tokenizer.token_to_id("[PAD]")

        def open_session(threads: int) -> Any:
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3  # errors only; onnxruntime logs to stderr
            try:
                return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
            except Exception as exc:
                raise EmbeddingError(f"onnxruntime cannot load {model_path} ({exc}); {self.repair_hint}") from None

        session = open_session(self.threads)

        inputs = {i.name for i in session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - inputs
        outputs = session.get_outputs()
        if missing or not outputs or outputs[0].shape[-1] not in (self.dimensions, "hidden", None):
            raise EmbeddingError(
                f"{model_path} is not the expected BERT graph (inputs {sorted(inputs)}, "
                f"outputs {[(o.name, o.shape) for o in outputs]}); {self.repair_hint}"
            )
        self._input_names = frozenset(inputs)
        self._pad_id = 0 if pad_id is None else int(pad_id)
        self._tokenizer = tokenizer
        self._open = open_session
        self._session = session  # published last: _ensure_loaded checks it without the lock
        log_line(
            "embed",
            "loaded",
            model=self.name,
            threads=self.threads,
            workers=self.workers,
            batch=self.batch_size,
            max_tokens=self.max_tokens,
            pooling=self.pooling,
            load_ms=int((time.monotonic() - started) * 1000),
        )

    # -- embedding ---------------------------------------------------------------

    def _run_batch(self, session: Any, encodings: Sequence[Any]) -> np.ndarray:
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n] = enc.ids
            mask[row, :n] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feed)[0]  # [batch, seq, dims]
        if self.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            summed = (hidden * weights).sum(axis=1)
            counts = np.clip(weights.sum(axis=1), 1e-9, None)
            pooled = summed / counts
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return (pooled / norms).astype(np.float32)

    def _batches(self, order: list[int], lengths: list[int]) -> list[list[int]]:
        """Cut the length-sorted ``order`` into runs of at most ``batch_size`` texts whose
        padded size (count x longest) stays within ``token_budget`` word pieces: short
        texts share a run, long ones go alone. On two CPU cores a padded batch of long
        texts is slower than the same texts one by one (all-MiniLM-L6-v2: 19 vs 31
        abstracts/s), while short ones gain from sharing (117 vs 100 sentence pairs/s)."""
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:  # ascending length: the newest text is the longest of its run
            if current and (len(current) >= self.batch_size or (len(current) + 1) * lengths[i] > self.token_budget):
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text; a text embedded recently comes from the cache, and a
        text given twice is embedded once (the same vector, whichever batch computed it)."""
        items = check_texts(texts, self.name)
        if not items:
            return []
        vectors: dict[str, np.ndarray] = {}
        with self._cache_lock:
            for text in items:
                kept = self._cache.get(text)
                if kept is not None:
                    self._cache.move_to_end(text)
                    vectors[text] = kept
        fresh = list(dict.fromkeys(text for text in items if text not in vectors))
        if fresh:
            computed = self._embed_new(fresh)
            with self._cache_lock:
                for text, row in zip(fresh, computed, strict=True):
                    vectors[text] = row
                    self._cache[text] = row
                self._trim_cache()
        return [vectors[text].tolist() for text in items]

    def set_cache_size(self, size: int) -> None:
        """Keep the vectors of at most ``size`` texts (0: none, each call embeds every text)."""
        with self._cache_lock:
            self.cache_size = size
            self._trim_cache()

    def _trim_cache(self) -> None:
        """Drop the least recently used vectors beyond ``cache_size`` (the caller holds the lock)."""
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _embed_new(self, items: list[str]) -> np.ndarray:
        session, tokenizer = self._ensure_loaded()
        if len(items) == 1:
            session = self._single_session(session)
        import numpy as np

        started = time.monotonic()
        try:
            encodings = tokenizer.encode_batch(items, add_special_tokens=True)
        except Exception as exc:
            raise EmbeddingError(f"{self.name}: tokenizing failed ({exc}); check the input texts") from None
        # Sort by token count so each batch pads to a similar length; restore order after.
        order = sorted(range(len(items)), key=lambda i: len(encodings[i].ids))
        batches = self._batches(order, [len(e.ids) for e in encodings])
        out = np.empty((len(items), self.dimensions), dtype=np.float32)
        self._run_batches(session, encodings, batches, out)
        log_embedded(self.name, len(items), started)
        return out

    def _run_batches(self, session: Any, encodings: Sequence[Any], batches: list[list[int]], out: np.ndarray) -> None:
        """Run every batch, up to ``workers`` at once, each writing its rows of ``out``.

        The calling thread works too, beside ``workers - 1`` helper threads made for this call
        (a few microseconds each, against milliseconds per run; no pool outlives a call or a
        fork). onnxruntime lets one session run on several threads at once and releases the
        GIL while it runs. The longest batches go first, so the last to finish are short.
        """
        pending = list(batches)  # ascending length: pop() takes the longest left
        lock = threading.Lock()
        failures: list[tuple[int, Exception]] = []

        def work() -> None:
            while True:
                with lock:
                    if failures or not pending:
                        return
                    idx = pending.pop()
                try:
                    out[idx] = self._run_batch(session, [encodings[i] for i in idx])
                except Exception as exc:  # raised again in the calling thread below
                    with lock:
                        failures.append((len(idx), exc))
                    return

        helpers = [
            threading.Thread(target=work, name=f"{self.name}-embed", daemon=True)
            for _ in range(min(self.workers, len(batches)) - 1)
        ]
        for thread in helpers:
            thread.start()
        try:
            work()
        finally:  # on an interrupt too: no helper starts another run
            with lock:
                pending.clear()
            for thread in helpers:
                thread.join()
        if failures:
            size, exc = failures[0]
            if isinstance(exc, EmbeddingError):
                raise exc
            raise EmbeddingError(
                f"{self.name}: onnxruntime failed on a batch of {size} ({exc}); "
                "try a smaller batch size or report the input that triggers it"
            ) from None
