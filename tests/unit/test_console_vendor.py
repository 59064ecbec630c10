"""The console's vendored graph library: the files on disk match their pins, a changed file is
caught, a bad tarball is refused, a missing npm is one clear error, and CI has the library."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from maxy.embeddings.files import sha256_file
from maxy.webconsole import vendor


@pytest.fixture(scope="module")
def static_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package's static directory's vendored files, fetched first if missing
    (setup.sh fetches them; without npm this fails with the installer's one-line error)."""
    vendor.fetch_graph_library()
    static = tmp_path_factory.mktemp("static")
    shutil.copytree(vendor.static_dir() / vendor.VENDOR_DIR, static / vendor.VENDOR_DIR)
    return static


def test_the_fetched_files_match_their_pins(static_copy: Path) -> None:
    directory = vendor.static_dir() / vendor.VENDOR_DIR
    for name, digest in vendor.MEMBERS.values():
        assert sha256_file(directory / name) == digest, name
    assert (vendor.static_dir() / vendor.CYTOSCAPE_FILE).is_file()
    assert vendor.graph_library_ready()
    assert vendor.graph_library_ready(static_copy)
    assert vendor.fetch_graph_library(static_copy) == static_copy / vendor.CYTOSCAPE_FILE  # nothing to fetch
    assert "Permission is hereby granted" in (directory / "cytoscape.LICENSE").read_text(encoding="utf-8")  # MIT


def test_a_changed_or_missing_file_is_not_ready(static_copy: Path, tmp_path: Path) -> None:
    static = tmp_path / "static"
    shutil.copytree(static_copy, static)
    library = static / vendor.CYTOSCAPE_FILE
    assert vendor.graph_library_ready(static)
    with open(library, "ab") as fh:  # the cached answer follows the file's stat
        fh.write(b"\n;alert(1)")
    assert not vendor.graph_library_ready(static)
    problem = vendor._problem(static)
    assert problem is not None and "expected 081591ab" in problem
    shutil.copy(static_copy / vendor.CYTOSCAPE_FILE, library)
    assert vendor.graph_library_ready(static)
    (static / vendor.VENDOR_DIR / "cytoscape.LICENSE").unlink()  # the licence ships with the code
    assert not vendor.graph_library_ready(static)
    assert not vendor.graph_library_ready(tmp_path / "nowhere")


def test_a_tarball_that_is_not_the_pinned_release_is_refused(tmp_path: Path) -> None:
    tarball = tmp_path / "cytoscape-3.34.4.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        for member in vendor.MEMBERS:
            data = b"window.cytoscape = function () {};\n"
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(vendor.VendorError) as caught:
        vendor.extract_tarball(tarball, tmp_path / "static")
    message = str(caught.value)
    assert f"expected {vendor.TARBALL_SHA256}" in message and "\n" not in message
    assert "python -m maxy.webconsole.vendor" in message
    assert not (tmp_path / "static").exists()  # nothing written


def test_without_npm_the_fetch_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(vendor.VendorError) as caught:
        vendor.fetch_graph_library(tmp_path / "static")
    message = str(caught.value)
    assert "npm is not installed" in message and "apt-get install npm" in message and "\n" not in message
    assert not vendor.graph_library_ready(tmp_path / "static")


def test_ci_has_the_vendored_library() -> None:
    """CI cannot pass without the library: setup.sh must have fetched it (this test fetches nothing)."""
    ready = vendor.graph_library_ready()
    assert ready == (vendor._problem() is None)
    if os.environ.get("CI"):
        assert ready, f"CI is set but the console's graph library is not ready: {vendor._problem()}"
