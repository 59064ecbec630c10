"""The console's graph library: cytoscape.js, vendored from npm's registry and checked against pins.

cytoscape 3.34.4 (MIT, the Cytoscape Consortium) draws the console's graph view on a canvas. Its
prebuilt ``dist/cytoscape.min.js`` and its ``LICENSE`` are taken out of the package tarball that
``npm pack`` fetches, after the tarball's sha256 and each file's are checked against the values
pinned here, and written into ``resources/console/static/vendor/`` of this package (as
``cytoscape.min.js`` and ``cytoscape.LICENSE``), where the console serves them from its own
origin. Nothing is loaded from a CDN, and nothing of the package runs: no install scripts.

``python -m maxy.webconsole.vendor`` fetches ahead of time (an installer step) and does nothing
when the files are there with the pinned sha256. Without them the console's graph view falls
back to a table.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from maxy.embeddings.files import pin_problem, sha256_file, write_atomic
from maxy.errors import MaxyError
from maxy.logs import configure, log_line

PACKAGE = "cytoscape"
VERSION = "3.34.4"
TARBALL_SHA256 = "0d02363d99d805ce8d91fdecab7b2a8cb91ee280d67f309ce44c161d117b4679"
#: tarball member -> (file name in the vendor dir, sha256)
MEMBERS = {
    "package/dist/cytoscape.min.js": (
        "cytoscape.min.js",
        "081591ab735b2b6a3b31a3c60f8f3a3e2fee8c92939e0c7820ad1208571b6cd8",
    ),
    "package/LICENSE": (
        "cytoscape.LICENSE",
        "eb319c6e6f233607f71e8e2f450391751883cfc0eeb3ca7ef574c13d1d9c2203",
    ),
}
#: The library's path relative to the static directory (what the console's pages link to).
CYTOSCAPE_FILE = "vendor/cytoscape.min.js"
VENDOR_DIR = "vendor"
NPM_TIMEOUT_S = 300.0

_WHAT = f"cannot fetch the console's graph library {PACKAGE} {VERSION}"
_RUN = "run `python -m maxy.webconsole.vendor`"


class VendorError(MaxyError):
    """The graph library could not be fetched or does not match its pins (one line: what, why, fix)."""


def static_dir() -> Path:
    """The console's static directory inside the installed package (``maxy/resources/console/static``)."""
    return Path(__file__).resolve().parent.parent / "resources" / "console" / "static"


def _vendor_dir(static: Path | None) -> Path:
    return (static if static is not None else static_dir()) / VENDOR_DIR


def _problem(static: Path | None = None) -> str | None:
    """What is wrong with the vendored files under ``static``, or None when every one matches its pin."""
    return pin_problem(_vendor_dir(static), MEMBERS)


#: vendor dir -> (the files' stat signature, the answer for it)
_READY: dict[Path, tuple[tuple[tuple[int, int, int], ...], bool]] = {}


def _signature(directory: Path) -> tuple[tuple[int, int, int], ...] | None:
    stamps = []
    for name, _digest in MEMBERS.values():
        try:
            st = os.stat(directory / name)
        except OSError:
            return None
        stamps.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(stamps)


def graph_library_ready(static: Path | None = None) -> bool:
    """True when the library and its licence are present with their pinned sha256.

    The answer is kept per directory until a file's inode, size or modification time changes,
    so a page can ask on every request without hashing the library each time."""
    directory = _vendor_dir(static)
    signature = _signature(directory)
    if signature is None:
        return False
    cached = _READY.get(directory)
    if cached is not None and cached[0] == signature:
        return cached[1]
    try:
        ready = _problem(static) is None
    except OSError:
        return False
    _READY[directory] = (signature, ready)
    return ready


def _npm_failure(stderr: str) -> str:
    """npm's own reason in one line: its first ``npm error`` line, else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    chosen = next((line for line in lines if line.startswith(("npm error", "npm ERR!"))), lines[-1] if lines else "")
    return " ".join(chosen.split())[:300] or "no message"


def _npm_pack(dest: Path) -> Path:
    """``npm pack`` the pinned release into ``dest`` (no scripts run) and return the tarball."""
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError(f"{_WHAT}, npm is not installed, run `apt-get install npm` then {_RUN}")
    command = [npm, "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", str(dest), "--ignore-scripts"]
    try:
        done = subprocess.run(
            command, cwd=dest, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise VendorError(
            f"{_WHAT}, `npm pack` took over {NPM_TIMEOUT_S:.0f}s, "
            f"check that npm reaches its registry (`npm ping`) then {_RUN}"
        ) from None
    except OSError as exc:
        raise VendorError(
            f"{_WHAT}, {npm} did not start ({exc}), reinstall it with `apt-get install npm` then {_RUN}"
        ) from None
    if done.returncode != 0:
        raise VendorError(
            f"{_WHAT}, `npm pack` exited {done.returncode} ({_npm_failure(done.stderr)}), "
            f"check that npm reaches its registry (`npm ping`; a mirror goes in `npm config set registry`) then {_RUN}"
        )
    tarballs = sorted(dest.glob("*.tgz"))
    if len(tarballs) != 1:
        raise VendorError(f"{_WHAT}, `npm pack` left {len(tarballs)} tarballs in {dest}, expected one, {_RUN}")
    return tarballs[0]


def extract_tarball(tarball: Path, static: Path | None = None) -> Path:
    """Check ``tarball`` and each wanted member against their pins, then write the members into
    the vendor directory. Returns the library's path."""
    got = sha256_file(tarball)
    if got != TARBALL_SHA256:
        raise VendorError(
            f"{_WHAT}, {tarball.name} has sha256 {got}, expected {TARBALL_SHA256} "
            f"(the download was altered or npm's registry serves another build), {_RUN}"
        )
    blobs: dict[str, bytes] = {}
    try:
        with tarfile.open(tarball, "r:gz") as tar:
            for member, (name, digest) in MEMBERS.items():
                try:
                    handle = tar.extractfile(member)
                except KeyError:
                    handle = None
                if handle is None:
                    raise VendorError(f"{_WHAT}, {tarball.name} has no file {member}, {_RUN}")
                data = handle.read()
                got = hashlib.sha256(data).hexdigest()
                if got != digest:
                    raise VendorError(f"{_WHAT}, {member} has sha256 {got}, expected {digest}, {_RUN}")
                blobs[name] = data
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise VendorError(f"{_WHAT}, {tarball.name} is not a readable tarball ({exc}), {_RUN}") from None
    directory = _vendor_dir(static)
    for name, data in blobs.items():
        write_atomic(directory / name, data)
    return directory / MEMBERS["package/dist/cytoscape.min.js"][0]


def fetch_graph_library(static: Path | None = None) -> Path:
    """The path of a verified ``cytoscape.min.js`` under ``static`` (default the package's static
    directory), fetched with npm once; nothing happens when the files already match their pins."""
    directory = _vendor_dir(static)
    library = directory / MEMBERS["package/dist/cytoscape.min.js"][0]
    try:
        if _problem(static) is None:
            return library
        directory.mkdir(parents=True, exist_ok=True)
        with open(directory / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if _problem(static) is None:  # another process finished while this one waited
                return library
            started = time.monotonic()
            with tempfile.TemporaryDirectory(prefix="maxy-npm-", dir=directory) as tmp:
                extract_tarball(_npm_pack(Path(tmp)), static)
            log_line(
                "console",
                "vendor-fetched",
                package=f"{PACKAGE}@{VERSION}",
                path=library,
                fetch_ms=int((time.monotonic() - started) * 1000),
            )
            return library
    except OSError as exc:  # an unwritable or full package directory: one clear error, never a traceback
        raise VendorError(
            f"{_WHAT}, cannot write into {directory} ({exc}), "
            "run the installer as the user who owns the virtualenv, with 2 MB free"
        ) from None


def main(argv: list[str] | None = None) -> int:
    """Fetch the library. With ``--optional`` a failure is a warning and the exit status 0
    (the installer's mode: the console then shows its graph as a table)."""
    configure()
    args = sys.argv[1:] if argv is None else argv
    optional = "--optional" in args
    try:
        path = fetch_graph_library()
    except VendorError as exc:
        if optional:
            sys.stderr.write(f"warning: {exc}; until then the console's graph view falls back to a table\n")
            return 0
        sys.stderr.write(f"error: {exc}\n")
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
