"""Cases that used to pass without a word, through the real ``maxy`` command line against the
real Neo4j: each is now a clear refusal or an outcome the command reports (and ``--json``
carries). Also the recovery from an embedder outage: nodes left unembedded make ``maxy
reindex`` fail, and documents chunked by size while it was down are re-chunked by topic.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from maxy.graph.write import GraphWriter
from maxy.ingest import ingest_paths, soft_delete_attachment
from maxy.ingest.identity import attachment_id_for_path
from maxy.ingest.specs import SIZE_ONLY
from maxy.ingest.summarize import ExtractiveSummarizer

from tests.cli_inprocess import maxy as run_maxy
from tests.fake_ollama import FakeOllama
from tests.integration.test_file_faults import one_error
from tests.integration.test_graph_write import BrokenEmbedder

REPO = Path(__file__).resolve().parents[2]
EXTRACTIVE = ExtractiveSummarizer()
# Three topics, each longer than a chunk: the cuts fall between topics.
CATS = " ".join(f"The cat number {i} sleeps in the warm sun." for i in range(30))
ROCKETS = " ".join(f"The rocket stage {i} burns liquid fuel to reach orbit." for i in range(30))
PIGS = " ".join(f"A farm keeps pig {i} in a muddy pen all year." for i in range(30))


def maxy(*args: str, account, data_root: Path, cwd: Path = REPO, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_") and k != "MAXY_DEBUG"}
    env.update(ACCOUNT_ID=account.account_id, DATA_ROOT=str(data_root), **extra)
    return run_maxy(args, env, cwd=cwd)


def refused(proc: subprocess.CompletedProcess[str], *needles: str, codes: tuple[int, ...] = (1, 2)) -> str:
    """The command failed (exit 1 or 2) with one ``error:`` line holding every needle."""
    return one_error(proc, *needles, codes=codes)


def count(db, account, label: str) -> int:
    return db.read(f"MATCH (n:{label} {{accountId: $acc}}) RETURN count(n) AS c", acc=account.account_id)[0]["c"]


def write_doc(path: Path, title: str, *sections: tuple[str, str]) -> Path:
    path.write_text(f"# {title}\n\n" + "\n\n".join(f"## {h}\n\n{t}" for h, t in sections) + "\n")
    return path


# -- ingest -------------------------------------------------------------------------------
def test_ingest_of_an_empty_argument_is_refused_not_the_current_folder(db, account, data_root, tmp_path):
    write_doc(tmp_path / "here.md", "Here", ("S", "Text in the current folder."))
    line = refused(maxy("ingest", "", account=account, data_root=data_root, cwd=tmp_path), "''", "is empty")
    assert "PATHS" in line or "path" in line
    assert count(db, account, "KnowledgeDocument") == 0


def test_folder_ingest_names_every_unsupported_file(db, account, data_root, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    write_doc(folder / "a.md", "A", ("S", "Alpha text."))
    (folder / "scan.xyz").write_bytes(b"%PDF-1.4")
    (folder / "photo.png").write_bytes(b"\x89PNG")
    (folder / ".notes.pdf").write_bytes(b"%PDF")  # hidden: left out, as the docs say
    text = maxy("ingest", str(folder), account=account, data_root=data_root)
    assert text.returncode == 0, text.stderr
    skipped = [ln for ln in text.stderr.splitlines() if ln.startswith("skipped")]
    assert skipped == ["skipped 2 files of unsupported type (.png 1, .xyz 1); maxy --verbose ingest lists them"]
    assert "skipped 2" in text.stdout
    listed = maxy("--verbose", "ingest", str(folder), account=account, data_root=data_root)
    for f in (folder / "scan.xyz", folder / "photo.png"):
        assert f"[ingest] skip reason=unsupported path={f} " in listed.stderr
    data = json.loads(maxy("ingest", str(folder), "--json", account=account, data_root=data_root).stdout)
    unsupported = sorted(Path(d["path"]).name for d in data["documents"] if d["reason"] == "unsupported")
    assert unsupported == ["photo.png", "scan.xyz"]
    assert count(db, account, "KnowledgeDocument") == 1


# -- search -------------------------------------------------------------------------------
@pytest.fixture()
def searchable(db, account, embedder, tmp_path):
    writer = GraphWriter(db, account, embedder, created_by="ingest")
    doc = write_doc(tmp_path / "boiler.md", "Boiler care", ("Pressure", "Check the boiler pressure every month."))
    ingest_paths([doc], writer, summarizer=EXTRACTIVE)
    return doc


def test_search_with_a_bad_agent_slug_is_a_usage_error(account, data_root, searchable):
    proc = maxy("search", "boiler", "--agent", "Bad Slug!", account=account, data_root=data_root)
    refused(proc, "--agent", "'Bad Slug!'", "lower-case letters", codes=(2,))
    assert "No results" not in proc.stdout


def test_a_mistyped_label_is_refused_with_the_closest_labels(account, data_root, searchable):
    for command in (("search", "boiler"), ("memory", "search", "boiler")):
        proc = maxy(*command, "--label", "Chunks", account=account, data_root=data_root)
        line = refused(proc, "--label", "'Chunks'", codes=(2,))
        assert line == "error: --label: unknown label 'Chunks'; did you mean Chunk?", line
        assert proc.stdout == ""
    proc = maxy("search", "boiler", "-l", "chunk", account=account, data_root=data_root)
    assert refused(proc, codes=(2,)).endswith("did you mean Chunk?")
    far = refused(maxy("search", "boiler", "-l", "Gadget", account=account, data_root=data_root), codes=(2,))
    assert "'Gadget'; allowed labels: " in far and "Chunk" in far
    kept = refused(maxy("search", "boiler", "-l", "MemorySpace", account=account, data_root=data_root), codes=(2,))
    assert "not searchable: MemorySpace; searchable labels: " in kept and "Chunk" in kept
    fine = maxy("search", "boiler pressure", "-l", "Chunk", account=account, data_root=data_root)
    assert fine.returncode == 0 and "boiler" in fine.stdout.lower(), fine.stderr


def test_search_fields_no_result_has_is_named(account, data_root, searchable):
    proc = maxy("search", "boiler pressure", "--fields", "title,bogusProp", account=account, data_root=data_root)
    assert proc.returncode == 0, proc.stderr
    warning = [ln for ln in proc.stderr.splitlines() if "--fields" in ln]
    assert len(warning) == 1 and "'bogusProp'" in warning[0] and "title" in warning[0]
    data = json.loads(
        maxy(
            "search", "boiler pressure", "--fields", "bogusProp", "--json", account=account, data_root=data_root
        ).stdout
    )
    assert data["results"] and any("'bogusProp'" in w for w in data["warnings"])
    fine = maxy("search", "boiler pressure", "--fields", "title", "--json", account=account, data_root=data_root)
    assert not any("--fields" in w for w in json.loads(fine.stdout)["warnings"])


# -- conversations ------------------------------------------------------------------------
def test_conversation_line_with_a_bad_timestamp_is_refused_with_its_line(db, account, data_root, tmp_path):
    base = {"conversation": "c1", "session": "s1", "speaker": "Ana", "role": "user"}
    rows = [
        {**base, "id": "m1", "content": "Hello", "timestamp": "2024-03-01T09:00:00Z"},
        {**base, "id": "m2", "content": "Again", "timestamp": "not-a-date"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    refused(
        maxy("conversation", "import", str(path), account=account, data_root=data_root),
        "chat.jsonl:2",
        "'not-a-date'",
        "ISO 8601",
    )
    assert count(db, account, "Message") == 0  # the good line is not written alone either


# -- purge --------------------------------------------------------------------------------
def test_purge_with_no_grace_lists_first_and_needs_yes(db, account, data_root, searchable):
    att = attachment_id_for_path(searchable)
    soft_delete_attachment(db, account.account_id, att)
    before = count(db, account, "Node")
    dry = maxy("purge", "--dry-run", "--grace-days", "0", "--json", account=account, data_root=data_root)
    assert dry.returncode == 0, dry.stderr
    listed = json.loads(dry.stdout)
    assert listed["dryRun"] and listed["wouldDelete"]["KnowledgeDocument"] == 1 and listed["total"] == before
    assert [d["attachmentId"] for d in listed["documents"]] == [att]
    unconfirmed = maxy("purge", "--grace-days", "0", account=account, data_root=data_root)
    refused(unconfirmed, "--grace-days", "--yes")
    assert att in unconfirmed.stdout and f"would purge {before} node(s) from {account.label()}:" in unconfirmed.stdout
    assert count(db, account, "Node") == before  # nothing went
    kept = maxy("purge", account=account, data_root=data_root)  # the default grace keeps a fresh deletion
    assert kept.returncode == 0 and kept.stdout.startswith(
        f"nothing to purge in {account.label()} (grace period 7 days)"
    )
    done = maxy("purge", "--grace-days", "0", "--yes", "--json", account=account, data_root=data_root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total"] == before and count(db, account, "Node") == 0
    assert json.loads(done.stdout)["account"] == account.ref() and account.ref()["name"].startswith("test-")


# -- reindex ------------------------------------------------------------------------------
def test_reindex_batch_size_zero_is_a_usage_error(account, data_root):
    refused(maxy("reindex", "--batch-size", "0", account=account, data_root=data_root), "--batch-size", codes=(2,))


def test_reindex_fails_while_nodes_stay_unembedded_and_succeeds_after(db, account, embedder, data_root, tmp_path):
    no_vectors = GraphWriter(db, account, None, created_by="ingest")
    doc = write_doc(tmp_path / "notes.md", "Notes", ("One", "First note."), ("Two", "Second note."))
    ingest_paths([doc], no_vectors, summarizer=EXTRACTIVE)
    missing = db.read(
        "MATCH (n:Node {accountId: $acc}) WHERE n.embedding IS NULL RETURN count(n) AS c", acc=account.account_id
    )[0]["c"]
    assert missing >= 3
    with FakeOllama(dims=embedder.dimensions, mode="error500") as fake:
        down = maxy(
            "reindex",
            account=account,
            data_root=data_root,
            EMBED_MODEL="fake-embed",
            EMBED_DIMENSIONS=str(embedder.dimensions),
            OLLAMA_URL=fake.url,
        )
    line = refused(down, f"{missing} node(s) left without an embedding", "maxy reindex` again", codes=(1,))
    assert "the embedder failed" in line
    up = maxy("reindex", "--json", account=account, data_root=data_root)
    assert up.returncode == 0, up.stderr
    summary = json.loads(up.stdout)
    assert summary["embedded"] == missing and summary["left"] == 0


# -- documents chunked by size during an outage -------------------------------------------
def _chunking(db, account, att: str) -> tuple[str | None, int]:
    row = db.read(
        "MATCH (d:KnowledgeDocument {accountId: $acc, attachmentId: $att}) RETURN d.chunking AS c, d.chunkCount AS n",
        acc=account.account_id,
        att=att,
    )[0]
    return row["c"], row["n"]


def _size_only(db, account, path: Path) -> str:
    """Ingest ``path`` while the embedder is down: its topic breaks are found without the
    embedder, so it is chunked by topic (nothing is embedded); then mark it size-only, as
    earlier versions left a document they cut by size during an outage."""
    down = GraphWriter(db, account, BrokenEmbedder(), created_by="ingest")
    [result] = ingest_paths([path], down, summarizer=EXTRACTIVE)
    assert result.chunking == "semantic" and result.embedded == 0
    att = attachment_id_for_path(path)
    assert _chunking(db, account, att)[0] is None
    db.write(
        "MATCH (d:KnowledgeDocument {accountId: $acc, attachmentId: $att}) SET d.chunking = $mark",
        acc=account.account_id,
        att=att,
        mark=SIZE_ONLY,
    )
    return att


def test_size_only_document_is_rechunked_by_the_next_ingest_even_unchanged(db, account, data_root, tmp_path):
    doc = write_doc(tmp_path / "mixed.md", "Mixed", ("Everything", f"{CATS} {ROCKETS} {PIGS}"))
    att = _size_only(db, account, doc)
    again = maxy("ingest", str(doc), "--json", account=account, data_root=data_root)
    assert again.returncode == 0, again.stderr
    [result] = json.loads(again.stdout)["documents"]
    assert not result["skipped"] and result["rechunked"] and result["chunking"] == "semantic"
    assert _chunking(db, account, att)[0] is None
    assert result["embedded"] == result["sections"] + result["chunks"] + 1
    third = json.loads(maxy("ingest", str(doc), "--json", account=account, data_root=data_root).stdout)
    assert third["documents"][0]["reason"] == "unchanged"  # once cut by topic, unchanged means skipped again


def test_reindex_rechunks_size_only_documents_from_their_files(db, account, data_root, tmp_path):
    doc = write_doc(tmp_path / "mixed.md", "Mixed", ("Everything", f"{CATS} {ROCKETS} {PIGS}"))
    att = _size_only(db, account, doc)
    gone = write_doc(tmp_path / "gone.md", "Gone", ("Everything", f"{PIGS} {CATS} {ROCKETS}"))
    gone_att = _size_only(db, account, gone)
    gone.unlink()  # its file is gone: it is listed, not lost
    proc = maxy("reindex", "--json", account=account, data_root=data_root)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["rechunked"] == 1 and summary["left"] == 0
    assert [d["attachmentId"] for d in summary["sizeOnlyLeft"]] == [gone_att]
    assert _chunking(db, account, att)[0] is None and _chunking(db, account, gone_att)[0] == SIZE_ONLY
    text = maxy("reindex", account=account, data_root=data_root)
    assert text.returncode == 0 and f"{gone}: still chunked by size" in text.stderr
