"""Every format through the real ``maxy`` command line into the real Neo4j: the file ingests, its
text is found by ``maxy memory search`` with the file's name as the hit's source; a type Maxy
does not read names --as-text, --as-text reads it; a scanned PDF is refused, not ingested empty."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli_inprocess import maxy as run_maxy
from tests.integration.test_file_faults import one_error

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "formats"

RST = """\
Harbour Manual
==============

Mooring
-------

Double the stern lines with a spring when the swell comes from the northwest quarter.
"""
ADOC = """\
= Harbour Manual

== Anchoring

Let out chain five times the depth of water before the windlass brake is set.
"""
PYTHON = '''\
"""Boiler control."""

import math


def read_pressure(sensor):
    """The boiler pressure in bar, from the sensor's reading."""
    if sensor.calibrated:
        return math.floor(sensor.raw * 1.5)
    return 0.0
'''


def _write(tmp_path: Path, name: str) -> Path:
    f = tmp_path / name
    if (FIXTURES / name).is_file():
        shutil.copy(FIXTURES / name, f)
    elif name == "mooring.rst":
        f.write_text(RST)
    elif name == "anchoring.adoc":
        f.write_text(ADOC)
    elif name == "boiler.py":
        f.write_text(PYTHON)
    elif name == "winter-utf16.txt":
        f.write_text("Winter notes\n\nDrain the outside tap before the first frost.\n", encoding="utf-16")
    elif name == "recettes-latin1.txt":
        f.write_bytes("Recettes\n\nLa crème brûlée se caramélise au chalumeau.\n".encode("latin-1"))
    return f


def maxy(*args: str, account, data_root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_") and k != "MAXY_DEBUG"}
    env.update(ACCOUNT_ID=account.account_id, DATA_ROOT=str(data_root))
    return run_maxy(args, env, cwd=REPO)


def documents(db, account) -> list[dict]:
    return db.read(
        "MATCH (d:KnowledgeDocument {accountId: $acc}) RETURN d.relativePath AS path, d.mediaType AS media",
        acc=account.account_id,
    )


CASES = [
    ("handbook.pdf", "diaphone horn in fog", "sound the diaphone horn", "application/pdf"),
    ("handbook-chromium.pdf", "paraffin wick Fresnel lens", "Trim the paraffin wick", "application/pdf"),
    ("handbook.docx", "gallery storm shutters", "close the gallery storm shutters", "wordprocessingml"),
    ("deck.pptx", "frayed manrope stop condition", "frayed manrope is a stop condition", "presentationml"),
    ("mooring.rst", "stern lines spring swell", "Double the stern lines", "text/x-rst"),
    ("anchoring.adoc", "windlass brake chain", "before the windlass brake is set", "text/asciidoc"),
    ("boiler.py", "boiler pressure sensor reading", "    if sensor.calibrated:\n", "text/x-python"),
    ("winter-utf16.txt", "drain outside tap frost", "Drain the outside tap", "text/plain"),
    ("recettes-latin1.txt", "crème brûlée caramélise", "La crème brûlée se caramélise", "text/plain"),
]


@pytest.mark.parametrize(("name", "query", "content", "media"), CASES, ids=[c[0] for c in CASES])
def test_each_format_ingests_and_is_found_by_memory_search(
    db, account, data_root, tmp_path, name, query, content, media
):
    f = _write(tmp_path, name)
    done = maxy("ingest", str(f), account=account, data_root=data_root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{f}: file:") and " 0 sections" not in done.stdout
    [doc] = documents(db, account)
    assert doc["path"] == name and media in doc["media"]
    found = maxy("memory", "search", query, "--json", account=account, data_root=data_root)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["results"]
    assert hits and hits[0]["properties"]["relativePath"] == name
    assert any(content in (h["properties"].get("content") or "") for h in hits), hits[0]
    text = maxy("memory", "search", query, account=account, data_root=data_root)
    assert f"source: {name}" in text.stdout.split("---")[0]


def test_a_scanned_pdf_is_refused_and_nothing_is_written(db, account, data_root, tmp_path):
    f = _write(tmp_path, "scanned.pdf")
    proc = maxy("ingest", str(f), account=account, data_root=data_root)
    one_error(proc, str(f), "has no text layer (scanned?)", "OCR")
    assert documents(db, account) == []


def test_an_encrypted_pdf_is_refused_with_the_way_out(db, account, data_root, tmp_path):
    f = _write(tmp_path, "encrypted.pdf")
    one_error(maxy("ingest", str(f), account=account, data_root=data_root), "is encrypted", "decrypt it first")
    assert documents(db, account) == []


def test_an_unsupported_type_names_as_text_which_reads_it(db, account, data_root, tmp_path):
    f = tmp_path / "tides.log"
    f.write_text("High water at Dover was 11:42 with a coefficient of ninety-four.\n")
    refused = maxy("ingest", str(f), account=account, data_root=data_root)
    line = one_error(refused, str(f), "unsupported file type '.log'", ".pdf", ".docx")
    assert line.endswith("; to read it as plain text, add --as-text")
    assert documents(db, account) == []
    done = maxy("ingest", "--as-text", str(f), account=account, data_root=data_root)
    assert done.returncode == 0, done.stderr
    assert documents(db, account) == [{"path": "tides.log", "media": "text/plain"}]
    found = maxy("memory", "search", "Dover high water coefficient", account=account, data_root=data_root)
    assert "source: tides.log" in found.stdout.split("---")[0]


def test_a_folder_as_text_takes_every_text_file_and_skips_binary_ones(db, account, data_root, tmp_path):
    folder = tmp_path / "mixed"
    (folder / "sub").mkdir(parents=True)
    (folder / "Makefile").write_text("build:\n\tcc -o lamp lamp.c\n")
    (folder / "sub" / "settings.yaml").write_text("keeper: Grace Darling\nlight: Longstone\n")
    (folder / "guide.md").write_text("# Guide\n\nThe lamp room is on the top floor.\n")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (folder / ".env").write_text("SECRET=1\n")  # hidden: left out as always
    plain = json.loads(maxy("ingest", str(folder), "--json", account=account, data_root=data_root).stdout)
    assert plain["ingested"] == 1 and {d["reason"] for d in plain["documents"] if d["skipped"]} == {"unsupported"}
    proc = maxy("ingest", "--as-text", str(folder), "--json", account=account, data_root=data_root)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    skipped = [(Path(d["path"]).name, d["reason"]) for d in data["documents"] if d["skipped"]]
    assert ("photo.png", "binary") in skipped and data["failed"] == 0
    paths = sorted(d["path"] for d in documents(db, account))
    assert paths == ["Makefile", "guide.md", "sub/settings.yaml"]


def test_the_python_api_reads_the_same_formats_and_as_text(account, settings, embedder, tmp_path):
    from maxy import Memory
    from maxy.errors import ValidationError

    deck = _write(tmp_path, "deck.pptx")
    log = tmp_path / "watch.log"
    log.write_text("The relief keeper arrives on the supply tender every second Tuesday.\n")
    local = settings.model_copy(update={"DATA_ROOT": account.data_root})
    with Memory(account.account_id, settings=local, embedder=embedder) as memory:
        [slides] = memory.ingest(deck)
        assert slides["error"] is None and slides["sections"] == 2 and slides["title"] == "Harbour Pilots Briefing"
        with pytest.raises(ValidationError, match="add --as-text"):
            memory.ingest(log)
        [read] = memory.ingest(log, as_text=True)
        assert read["error"] is None and read["sections"] == 1
        hits = memory.search("relief keeper supply tender", limit=3)
        assert "supply tender" in str(hits[0]["properties"])
        pictures = tmp_path / "pictures"
        pictures.mkdir()
        (pictures / "a.png").write_bytes(b"\x89PNG")
        with pytest.raises(
            ValidationError, match=r"no supported file found in .*pictures \(skipped 1: unsupported 1\)"
        ):
            memory.ingest(pictures)  # nothing read is said, not answered with an empty list
