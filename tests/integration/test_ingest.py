"""Ingestion: parsing, semantic chunking, summaries, the document hierarchy against the real
Neo4j, soft delete / purge, the CLI, and a SIGKILL in the middle of a folder ingest."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from maxy.errors import GraphWriteError, ValidationError
from maxy.graph.write import GraphWriter
from maxy.ingest import (
    ChunkBounds,
    ClaudeSummarizer,
    ExtractiveSummarizer,
    attachment_id_for_path,
    chunk_text,
    content_hash,
    document_node_id,
    extractive_summary,
    get_summarizer,
    ingest_document,
    ingest_paths,
    ingest_record,
    ingest_records,
    parse_file,
    parse_html,
    parse_markdown,
    parse_text,
    purge,
    soft_delete_attachment,
    split_units,
)
from maxy.ingest import summarize as summarize_mod
from maxy.ingest.identity import section_node_id

from tests.fake_anthropic import FakeAnthropic

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_llm(monkeypatch):
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "MAXY_SUMMARY_MODEL"):
        monkeypatch.delenv(key, raising=False)
    summarize_mod._cache.clear()


@pytest.fixture()
def writer(db, account, embedder):
    return GraphWriter(db, account, embedder, created_by="ingest")


EXTRACTIVE = ExtractiveSummarizer()


def rows(db, query: str, **params):
    return db.read(query, **params)


def hierarchy(db, account_id: str, attachment_id: str) -> dict:
    doc = rows(
        db,
        "MATCH (d:KnowledgeDocument {accountId: $acc, attachmentId: $att}) RETURN d",
        acc=account_id,
        att=attachment_id,
    )
    sections = rows(
        db,
        """MATCH (d:KnowledgeDocument {accountId: $acc, attachmentId: $att})-[:HAS_SECTION]->(s:Section)
           RETURN s ORDER BY s.position""",
        acc=account_id,
        att=attachment_id,
    )
    chunks = rows(
        db,
        """MATCH (d:KnowledgeDocument {accountId: $acc, attachmentId: $att})-[:HAS_SECTION]->(s)-[:HAS_CHUNK]->(c:Chunk)
           RETURN s.position AS section, c ORDER BY s.position, c.position""",
        acc=account_id,
        att=attachment_id,
    )
    loose = rows(
        db,
        "MATCH (n:Node {accountId: $acc}) WHERE n.attachmentId = $att RETURN count(n) AS c",
        acc=account_id,
        att=attachment_id,
    )[0]["c"]
    return {
        "docs": [r["d"] for r in doc],
        "sections": [r["s"] for r in sections],
        "chunks": [(r["section"], r["c"]) for r in chunks],
        "all": loose,
    }


# =======================================================================================
# Parsing
MARKDOWN = """---
title: Boiler Handbook
tags: [heating]
---
Everything about boilers.

# Installing

Mount the boiler on a solid wall. Connect the gas line and test for leaks.

```bash
# this is a comment, not a heading
make install
```

## Servicing

Service the boiler every year.

#### Pressure (a level-4 heading stays in the text)

Keep the pressure between 1 and 1.5 bar.

Troubleshooting
---------------

If the pilot light goes out, relight it.
"""


def test_markdown_sections_front_matter_and_code(tmp_path):
    f = tmp_path / "guide.md"
    f.write_text(MARKDOWN)
    doc = parse_file(f)
    assert doc.title == "Boiler Handbook" and doc.media_type == "text/markdown"
    assert doc.source_path == str(f.resolve())
    assert [s.heading for s in doc.sections] == ["Boiler Handbook", "Installing", "Servicing", "Troubleshooting"]
    assert doc.sections[0].text == "Everything about boilers."
    assert "tags:" not in doc.text
    installing = doc.sections[1].text
    assert "# this is a comment, not a heading" in installing and "```bash" in installing
    assert "#### Pressure" in doc.sections[2].text
    assert doc.sections[3].text == "If the pilot light goes out, relight it."


def test_markdown_title_falls_back_to_h1_then_filename(tmp_path):
    assert parse_markdown("# Title One\n\nBody.\n\n## Sub\n\nMore.").title == "Title One"
    f = tmp_path / "notes-2024.md"
    f.write_text("Just a paragraph.\n")
    doc = parse_file(f)
    assert doc.title == "notes-2024" and [s.heading for s in doc.sections] == ["notes-2024"]


def test_plain_text_one_section_or_obvious_headings():
    doc = parse_text("First paragraph, with a comma.\n\nSecond paragraph.\n", default_title="plain")
    assert doc.title == "plain" and len(doc.sections) == 1
    assert [s.text for s in parse_text("WARNING").sections] == ["WARNING"], "a heading needs text after it"
    assert doc.sections[0].text == "First paragraph, with a comma.\n\nSecond paragraph."
    doc = parse_text(
        "Heating Notes\n\nIntro text here.\n\nINSTALLATION\n\nMount it.\n\n2.1 Gas supply\n\nUse copper pipe.\n\n"
        "Maintenance\n===========\n\nYearly service.\n"
    )
    assert doc.title == "Heating Notes"
    assert [(s.heading, s.text) for s in doc.sections] == [
        ("Heating Notes", "Intro text here."),
        ("INSTALLATION", "Mount it."),
        ("2.1 Gas supply", "Use copper pipe."),
        ("Maintenance", "Yearly service."),
    ]


def test_html_drops_script_style_nav_and_splits_on_h1_to_h3():
    html = """<!doctype html><html><head><title>Boilers &amp; Heat</title>
    <style>body { color: red }</style><script>var secret = "x";</script></head>
    <body><nav><a href="/">Home</a> menu</nav>
    <h1>Boilers</h1><p>A boiler heats <b>water</b>.</p>
    <ul><li>gas</li><li>oil</li></ul>
    <h2>Safety</h2><p>Fit a CO alarm.</p><pre>line 1
    indented</pre>
    <h4>Minor</h4><p>Details.</p>
    <h3>Costs</h3><table><tr><td>Item</td><td>Price</td></tr></table>
    <noscript>enable js</noscript></body></html>"""
    doc = parse_html(html)
    assert doc.title == "Boilers & Heat" and doc.media_type == "text/html"
    assert [s.heading for s in doc.sections] == ["Boilers", "Safety", "Costs"]
    assert doc.sections[0].text == "A boiler heats water.\n\n- gas\n- oil"
    assert "line 1\n    indented" in doc.sections[1].text and "Minor" in doc.sections[1].text
    assert doc.sections[2].text == "Item | Price"
    everything = doc.text
    for dropped in ("secret", "color: red", "menu", "enable js"):
        assert dropped not in everything
    assert parse_html("<h1>Only H1</h1><p>x</p>").title == "Only H1"
    unclosed = parse_html("<h1>Broken<p>body text</p><h2>Next</h2><p>more</p>")
    assert [(s.heading, s.text) for s in unclosed.sections] == [("Broken", "body text"), ("Next", "more")]


def test_unknown_extension_binary_and_empty_files(tmp_path):
    unknown = tmp_path / "report.xyz"
    unknown.write_bytes(b"%XYZ-1.4")
    with pytest.raises(ValidationError) as exc:
        parse_file(unknown)
    assert str(unknown) in str(exc.value) and "unsupported" in str(exc.value) and "--as-text" in str(exc.value)
    binary = tmp_path / "data.txt"
    binary.write_bytes(b"abc\x00\x01\x02" * 100)
    with pytest.raises(ValidationError) as exc:
        parse_file(binary)
    assert str(binary) in str(exc.value) and "binary" in str(exc.value)
    empty = tmp_path / "empty.md"
    empty.write_text("---\ntitle: Nothing\n---\n\n# Heading only\n")
    doc = parse_file(empty)
    assert doc.is_empty and doc.sections == []


# =======================================================================================
# Chunking (pure; deterministic fake embeddings)
def topic_embed(texts):
    """Unit vectors by topic word, so similarity drops exactly at a topic change."""
    out = []
    for t in texts:
        v = np.zeros(4)
        v[0 if "cat" in t else 1 if "rocket" in t else 2] = 1.0
        v[3] = 0.05
        out.append(v / np.linalg.norm(v))
    return out


CATS = " ".join(f"The cat number {i} sleeps in the warm sun." for i in range(14))  # ~600 chars
ROCKETS = " ".join(f"The rocket stage {i} burns liquid fuel to reach orbit." for i in range(14))
PIGS = " ".join(f"A farm keeps pig {i} in a muddy pen all year." for i in range(14))


def test_short_section_is_one_chunk_without_embedding():
    calls = []
    text = "A short section. It fits in one chunk."
    assert chunk_text(text, lambda t: calls.append(t) or topic_embed(t)) == [text]
    assert calls == []


def test_chunks_cut_at_topic_boundaries_within_bounds():
    text = f"{CATS} {ROCKETS} {PIGS}"
    calls = []

    def embed(units):
        calls.append(len(units))
        return topic_embed(units)

    bounds = ChunkBounds(min_chars=300, target_chars=1200, max_chars=1500)
    chunks = chunk_text(text, embed, bounds)
    assert calls, "a long section embeds its units"
    assert chunks == [CATS, ROCKETS, PIGS]
    assert all(bounds.min_chars <= len(c) <= bounds.max_chars for c in chunks)


def test_size_bounds_hold_without_topic_signal_and_sentences_stay_whole():
    sentences = [f"Sentence number {i} says something fairly ordinary about nothing much." for i in range(120)]
    text = " ".join(sentences)
    bounds = ChunkBounds()
    for embed in (None, lambda units: [np.ones(3) for _ in units]):
        chunks = chunk_text(text, embed, bounds)
        assert len(chunks) > 1
        assert all(len(c) <= bounds.max_chars for c in chunks)
        assert all(len(c) >= bounds.min_chars for c in chunks)
        for c in chunks:  # every chunk starts and ends on a sentence boundary
            assert c.startswith("Sentence number") and c.endswith("much.")
        assert " ".join(chunks) == text  # raw text, nothing lost


def test_paragraph_breaks_are_preferred_cut_points_and_raw_text_is_kept():
    paras = [" ".join(f"Paragraph {p} sentence {i} has some words in it." for i in range(8)) for p in range(8)]
    text = "\n\n".join(paras)
    chunks = chunk_text(text, None)
    assert all(c.startswith("Paragraph") and c.endswith("in it.") for c in chunks)
    assert all(any(c.startswith(p) for p in paras) for c in chunks), "cuts fall on paragraph starts"
    assert "\n\n".join(chunks) == text


def test_an_overlong_sentence_is_split_and_code_blocks_stay_whole():
    huge = "word " * 700  # 3,500 chars, one "sentence"
    chunks = chunk_text(huge.strip(), None)
    assert len(chunks) >= 3 and all(len(c) <= 1500 for c in chunks)
    code = "```python\n" + "\n\n".join(f"x{i} = compute(value_{i}).strip()" for i in range(20)) + "\n```"
    units = split_units(f"Intro sentence here. Another one.\n\n{code}\n\nAfter the code.")
    texts = [u.code for u in units]
    assert texts.count(True) == 1, "the fenced block is one unit, blank lines included"


def test_bounds_are_validated():
    with pytest.raises(ValidationError):
        ChunkBounds(min_chars=800, target_chars=500, max_chars=1500)


# =======================================================================================
# Summaries
LONG_TEXT = " ".join(
    [
        "Boilers heat water for radiators and taps in most homes.",
        *[f"Filler sentence {i} mentions the weather and unrelated trivia today." for i in range(15)],
        "A condensing boiler recovers heat from exhaust gases, so a condensing boiler saves gas.",
        "Boiler servicing every year keeps the boiler safe and the boiler efficient.",
    ]
)


def test_extractive_summary_lead_plus_central_sentences_within_limit():
    summary = extractive_summary(LONG_TEXT, 500)
    assert len(summary) <= 500
    assert summary.startswith("Boilers heat water")
    assert "boiler" in summary.lower()
    assert extractive_summary("Short text.") == "Short text."


def test_short_chunks_are_their_own_summary():
    s = ExtractiveSummarizer()
    chunk = "x " * 450
    assert s.summarize("chunk", chunk) == chunk.strip()
    assert len(s.summarize("chunk", LONG_TEXT * 2)) <= 500
    assert len(s.summarize("section", LONG_TEXT)) <= 500


def test_claude_path_and_every_failure_falls_back(caplog):
    with FakeAnthropic() as fake:
        claude = ClaudeSummarizer("sk-test", base_url=fake.url, model="claude-test", timeout=0.5, max_retries=0)
        summary = claude.summarize("document", LONG_TEXT, "Boilers")
        assert summary.startswith("Summary: Boilers heat water")
        req = fake.requests[-1]
        assert req["path"] == "/v1/messages"
        assert req["body"]["model"] == "claude-test" and req["body"]["max_tokens"] <= 300
        headers = {k.lower(): v for k, v in req["headers"].items()}
        assert headers.get("x-api-key") == "sk-test" or headers.get("authorization") == "Bearer sk-test"
        # short texts never reach the LLM
        assert claude.summarize("chunk", "tiny chunk") == "tiny chunk"
        assert len(fake.requests) == 1

        expected = extractive_summary(LONG_TEXT, 500)
        for mode in ("slow", "500", "401", "malformed"):
            fake.mode = mode
            caplog.clear()
            s = ClaudeSummarizer("sk-test", base_url=fake.url, timeout=0.5, max_retries=0)
            with caplog.at_level(logging.WARNING, logger="maxy"):
                started = time.monotonic()
                assert s.summarize("section", LONG_TEXT, "Boilers") == expected, mode
                assert time.monotonic() - started < 3
            lines = [r.getMessage() for r in caplog.records]
            assert any(line.startswith("[ingest] warn reason=llm-summary-failed") for line in lines), (mode, lines)


def test_breaker_stops_calling_after_auth_error_or_repeated_failures(caplog):
    with FakeAnthropic(mode="401") as fake, caplog.at_level(logging.WARNING, logger="maxy"):
        s = ClaudeSummarizer("bad", base_url=fake.url, timeout=1, max_retries=0)
        for _ in range(3):
            s.summarize("document", LONG_TEXT)
        assert len(fake.requests) == 1
        assert any("reason=llm-summary-disabled cause=auth" in r.getMessage() for r in caplog.records)
        fake.mode = "500"
        s = ClaudeSummarizer("k", base_url=fake.url, timeout=1, max_retries=0, breaker_failures=2)
        results = s.summarize_many([summarize_mod.SummaryJob("section", LONG_TEXT)] * 5)
        assert all(r == extractive_summary(LONG_TEXT, 500) for r in results)
        # one request per failure (no retries); in-flight calls may finish before the breaker trips
        assert len(fake.requests) <= 1 + 2 + s.concurrency
        assert any("reason=llm-summary-disabled cause=2-failures-in-a-row" in r.getMessage() for r in caplog.records)


def test_get_summarizer_picks_claude_only_with_a_key(monkeypatch):
    assert get_summarizer().name == "extractive"
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("MAXY_SUMMARY_MODEL", "claude-custom")
        s = get_summarizer()
        assert isinstance(s, ClaudeSummarizer) and s.model == "claude-custom"
        assert s.summarize("document", LONG_TEXT).startswith("Summary:")
        assert fake.requests[-1]["body"]["model"] == "claude-custom"


# =======================================================================================
# Hierarchy against Neo4j
def write_md(path: Path, title: str, sections: list[tuple[str, str]]) -> Path:
    body = f"# {title}\n\n" + "\n\n".join(f"## {h}\n\n{t}" for h, t in sections)
    path.write_text(body + "\n")
    return path


def test_hierarchy_counts_edges_titles_and_embeddings(db, writer, account, embedder, tmp_path):
    long_section = f"{CATS}\n\n{ROCKETS}\n\n{PIGS}"
    f = write_md(tmp_path / "guide.md", "Guide", [("Animals and rockets", long_section), ("Short", "One line.")])
    result = ingest_document(
        writer, parse_file(f), "att-1", scope="public", agents=["alpha", "beta"], summarizer=EXTRACTIVE
    )
    assert not result.skipped and result.sections == 2 and result.chunks >= 3
    h = hierarchy(db, account.account_id, "att-1")
    assert len(h["docs"]) == 1
    doc = h["docs"][0]
    assert doc["nodeId"] == document_node_id(account.account_id, "att-1") == result.document_id
    assert doc["title"] == "Guide" and doc["mediaType"] == "text/markdown" and doc["source"] == "file"
    assert doc["sectionCount"] == 2 and doc["chunkCount"] == result.chunks == len(h["chunks"])
    assert doc["contentHash"] == content_hash(parse_file(f)) and doc["sourcePath"] == str(f.resolve())
    assert len(doc["summary"]) <= 500 and doc["summary"]
    assert [s["title"] for s in h["sections"]] == ["Animals and rockets", "Short"]
    assert [s["position"] for s in h["sections"]] == [0, 1]
    assert h["all"] == 1 + 2 + result.chunks, "no node of this attachment outside the hierarchy"
    first_section_chunks = [c for s, c in h["chunks"] if s == 0]
    heading = "Guide › Animals and rockets\n\n"
    assert all(c["content"].startswith(heading) for c in first_section_chunks)
    raw = "".join(c["content"][len(heading) :] for c in first_section_chunks)
    assert raw.replace("\n", "").replace(" ", "") == long_section.replace("\n", "").replace(" ", "")
    for _, c in h["chunks"]:
        assert c["documentTitle"] == "Guide" and c["attachmentId"] == "att-1"
        assert c["sectionTitle"] in ("Animals and rockets", "Short") and "title" not in c
        body = c["content"].split("\n\n", 1)[1]
        assert len(body) <= 1500
        assert "summary" not in c, "a chunk this short is its own summary: no copy is stored"
    all_nodes = rows(
        db,
        "MATCH (n:Node {accountId: $acc}) RETURN n.embedding AS e, n.scope AS scope, n.agents AS agents, "
        "n.createdBy AS by",
        acc=account.account_id,
    )
    assert all(r["e"] is not None and len(r["e"]) == embedder.dimensions for r in all_nodes), "every level embedded"
    assert all(r["scope"] == "public" and r["agents"] == ["alpha", "beta"] and r["by"] == "ingest" for r in all_nodes)
    # NEXT links consecutive chunks of a section, and nothing else
    nexts = rows(
        db,
        """MATCH (a:Chunk {accountId: $acc})-[:NEXT]->(b:Chunk)
           MATCH (s:Section)-[:HAS_CHUNK]->(a), (s)-[:HAS_CHUNK]->(b)
           RETURN a.position AS a, b.position AS b""",
        acc=account.account_id,
    )
    assert sorted((r["a"], r["b"]) for r in nexts) == [(i, i + 1) for i in range(len(first_section_chunks) - 1)]
    total_next = rows(db, "MATCH (:Chunk {accountId: $acc})-[r:NEXT]->() RETURN count(r) AS c", acc=account.account_id)
    assert total_next[0]["c"] == len(nexts)


def test_reingest_replaces_skips_when_unchanged_and_force(db, writer, account, tmp_path):
    f = write_md(tmp_path / "a.md", "Doc", [("One", "Alpha text."), ("Two", "Beta text."), ("Three", "Gamma.")])
    first = ingest_document(writer, parse_file(f), "att", summarizer=EXTRACTIVE)
    assert first.sections == 3
    again = ingest_document(writer, parse_file(f), "att", summarizer=EXTRACTIVE)
    assert again.skipped and again.reason == "unchanged" and again.sections == 3
    forced = ingest_document(writer, parse_file(f), "att", force=True, summarizer=EXTRACTIVE)
    assert not forced.skipped
    rescoped = ingest_document(writer, parse_file(f), "att", scope="admin", summarizer=EXTRACTIVE)
    assert not rescoped.skipped, "a new scope is not 'unchanged'"
    write_md(f, "Doc v2", [("Only", "Completely new text.")])
    replaced = ingest_document(writer, parse_file(f), "att", summarizer=EXTRACTIVE)
    assert not replaced.skipped and replaced.sections == 1
    h = hierarchy(db, account.account_id, "att")
    assert len(h["docs"]) == 1 and h["docs"][0]["title"] == "Doc v2"
    assert [s["title"] for s in h["sections"]] == ["Only"] and len(h["chunks"]) == 1
    assert h["all"] == 3, "old sections and chunks are gone"
    assert rows(db, "MATCH (n:Node {accountId: $acc}) RETURN count(n) AS c", acc=account.account_id)[0]["c"] == 3


def test_empty_document_is_skipped_and_leaves_graph_untouched(db, writer, account, tmp_path):
    f = tmp_path / "e.md"
    f.write_text("# Nothing here\n")
    result = ingest_document(writer, parse_file(f), "empty", summarizer=EXTRACTIVE)
    assert result.skipped and result.reason == "empty"
    assert hierarchy(db, account.account_id, "empty")["all"] == 0


def test_failed_write_leaves_the_old_hierarchy(db, account, embedder, tmp_path, monkeypatch):
    writer = GraphWriter(db, account, embedder, created_by="ingest", batch_size=2)
    f = write_md(tmp_path / "a.md", "Doc", [(f"S{i}", f"Text {i}.") for i in range(4)])
    ingest_document(writer, parse_file(f), "att", summarizer=EXTRACTIVE)
    before = hierarchy(db, account.account_id, "att")
    write_md(f, "Doc v2", [(f"T{i}", f"New text {i}.") for i in range(5)])
    real = GraphWriter._write_in_tx
    calls = []

    def crash_on_second_batch(self, tx, batch, agent, now):
        calls.append(len(batch))
        if len(calls) == 2:
            raise GraphWriteError("test-crash", "simulated crash after the first batch")
        return real(self, tx, batch, agent, now)

    monkeypatch.setattr(GraphWriter, "_write_in_tx", crash_on_second_batch)
    with pytest.raises(GraphWriteError):
        ingest_document(writer, parse_file(f), "att", summarizer=EXTRACTIVE)
    after = hierarchy(db, account.account_id, "att")
    assert [d["contentHash"] for d in after["docs"]] == [d["contentHash"] for d in before["docs"]]
    assert [s["nodeId"] for s in after["sections"]] == [s["nodeId"] for s in before["sections"]]
    assert after["all"] == before["all"] == 9


def test_records_single_and_batched(db, writer, account):
    r = ingest_record(writer, "rec-1", "Heat pumps", "A heat pump moves heat. It is efficient.", summarizer=EXTRACTIVE)
    assert (r.sections, r.chunks) == (1, 1)
    h = hierarchy(db, account.account_id, "rec-1")
    assert h["docs"][0]["source"] == "record" and h["chunks"][0][1]["content"].startswith("Heat pumps\n\n")
    assert h["chunks"][0][1]["content"] == "Heat pumps\n\nA heat pump moves heat. It is efficient."
    results = ingest_records(
        writer,
        [
            ("rec-2", "T2", "Text two."),
            {"_id": "rec-3", "title": "", "text": "Untitled record text."},
            ("rec-1", "Heat pumps", "A heat pump moves heat. It is efficient."),
        ],
        batch_size=2,
        summarizer=EXTRACTIVE,
    )
    assert [x.skipped for x in results] == [False, False, True]
    assert hierarchy(db, account.account_id, "rec-3")["docs"][0]["title"] == "Untitled record text."
    assert (
        rows(db, "MATCH (d:KnowledgeDocument {accountId: $acc}) RETURN count(d) AS c", acc=account.account_id)[0]["c"]
        == 3
    )


def test_ingest_paths_walks_folders(db, writer, account, tmp_path):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / ".hidden").mkdir()
    write_md(root / "a.md", "A", [("S", "Alpha.")])
    (root / "sub" / "b.txt").write_text("Plain text body.\n")
    (root / "sub" / "c.html").write_text("<title>C</title><p>Html body.</p>")
    (root / "sub" / "skip.xyz").write_bytes(b"%XYZ")
    (root / ".hidden" / "d.md").write_text("hidden")
    (root / "bad.txt").write_bytes(b"\x00\x01binary")
    seen = []
    results = ingest_paths(
        [root], writer, progress=lambda done, total, r: seen.append((done, total)), summarizer=EXTRACTIVE
    )
    # the unsupported file is named as skipped, first; hidden folders stay out without a word
    assert [Path(r.path).name for r in results] == ["skip.xyz", "a.md", "bad.txt", "b.txt", "c.html"]
    assert results[0].skipped and results[0].reason == "unsupported" and "'.xyz'" in (results[0].note or "")
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    bad = results[2]
    assert bad.error and "binary" in bad.error
    good = [r for r in results if r.ok and not r.skipped]
    assert all(r.attachment_id == attachment_id_for_path(r.path) for r in good)
    assert (
        attachment_id_for_path(root / "a.md").startswith("file:") and len(attachment_id_for_path(root / "a.md")) == 29
    )
    again = ingest_paths([root / "a.md"], writer, summarizer=EXTRACTIVE)
    assert again[0].skipped
    with pytest.raises(ValidationError):
        ingest_paths([root], writer, attachment_id="x", summarizer=EXTRACTIVE)
    with pytest.raises(ValidationError):
        ingest_paths([root / "sub" / "skip.xyz"], writer, summarizer=EXTRACTIVE)
    one = ingest_paths([root / "sub" / "b.txt"], writer, attachment_id="custom-id", summarizer=EXTRACTIVE)
    assert one[0].attachment_id == "custom-id" and hierarchy(db, account.account_id, "custom-id")["docs"]


# =======================================================================================
# Soft delete and purge
def test_soft_delete_cascades_reingest_clears_and_purge_respects_grace(
    db, writer, account, make_account, embedder, tmp_path
):
    other = make_account("other")
    other_writer = GraphWriter(db, other, embedder, created_by="ingest")
    f = write_md(tmp_path / "a.md", "Doc", [("One", "Alpha."), ("Two", "Beta.")])
    ingest_document(writer, parse_file(f), "shared-att", summarizer=EXTRACTIVE)
    ingest_document(writer, parse_file(f), "keep", summarizer=EXTRACTIVE)
    ingest_document(other_writer, parse_file(f), "shared-att", summarizer=EXTRACTIVE)

    t0 = datetime(2030, 1, 1, tzinfo=UTC)
    assert soft_delete_attachment(db, account.account_id, "shared-att", now=t0) == 5
    stamped = rows(
        db,
        "MATCH (n:Node {accountId: $acc}) WHERE n.attachmentId = $att RETURN n.deletedAt AS d",
        acc=account.account_id,
        att="shared-att",
    )
    assert len(stamped) == 5 and {r["d"] for r in stamped} == {t0.isoformat()}
    assert soft_delete_attachment(db, account.account_id, "shared-att", now=t0 + timedelta(days=3)) == 0
    assert all(
        r["d"] is None
        for r in rows(
            db, "MATCH (n:Node {accountId: $acc, attachmentId: 'keep'}) RETURN n.deletedAt AS d", acc=account.account_id
        )
    )
    assert all(
        r["d"] is None
        for r in rows(db, "MATCH (n:Node {accountId: $acc}) RETURN n.deletedAt AS d", acc=other.account_id)
    )
    with pytest.raises(GraphWriteError) as exc:
        soft_delete_attachment(db, account.account_id, "no-such-attachment")
    assert str(exc.value).startswith("attachmentId: no document 'no-such-attachment' that you can write")

    # a deleted document is not "unchanged": re-ingesting brings it back without deletedAt
    back = ingest_document(writer, parse_file(f), "shared-att", summarizer=EXTRACTIVE)
    assert not back.skipped
    h = hierarchy(db, account.account_id, "shared-att")
    assert h["all"] == 5 and all(n.get("deletedAt") is None for n in [*h["docs"], *h["sections"]])

    soft_delete_attachment(db, account.account_id, "shared-att", now=t0)
    soft_delete_attachment(db, other.account_id, "shared-att", now=t0)
    assert purge(db, account.account_id, grace_days=7, now=t0 + timedelta(days=6)) == {}
    counts = purge(db, account.account_id, grace_days=7, now=t0 + timedelta(days=8))
    assert counts == {"KnowledgeDocument": 1, "Section": 2, "Chunk": 2}
    assert hierarchy(db, account.account_id, "shared-att")["all"] == 0
    assert hierarchy(db, account.account_id, "keep")["all"] == 5
    assert hierarchy(db, other.account_id, "shared-att")["all"] == 5, "other accounts are untouched"
    with pytest.raises(ValidationError):
        purge(db, account.account_id, grace_days=-1)


# =======================================================================================
# CLI (in-process) and the kill test (subprocess)
def cli_env(account, data_root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(
        ACCOUNT_ID=account.account_id,
        DATA_ROOT=str(data_root),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "platform"), env.get("PYTHONPATH")])),
    )
    return env


def test_cli_ingest_delete_purge(db, account, data_root, tmp_path, monkeypatch):
    import json

    from maxy.cli import app
    from typer.testing import CliRunner

    monkeypatch.setenv("ACCOUNT_ID", account.account_id)
    monkeypatch.setenv("DATA_ROOT", str(data_root))
    f = write_md(tmp_path / "cli.md", "CLI doc", [("One", "Alpha."), ("Two", "Beta.")])
    runner = CliRunner()
    res = runner.invoke(
        app, ["ingest", str(f), "--attachment-id", "cli-att", "--scope", "shared", "--agent", "alpha", "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["ingested"] == 1 and data["documents"][0]["attachmentId"] == "cli-att"
    assert data["account"] == {"id": account.account_id, "name": account.ref()["name"]}
    assert data["documents"][0]["sections"] == 2
    assert hierarchy(db, account.account_id, "cli-att")["docs"][0]["scope"] == "shared"

    res = runner.invoke(app, ["ingest", str(tmp_path / "missing.md")])
    assert res.exit_code == 1 and "no such file" in res.output and "Traceback" not in res.output

    res = runner.invoke(app, ["delete", "--attachment", "cli-att", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout) == {
        "attachmentId": "cli-att",
        "deleted": 5,
        "account": account.ref(),
    }
    res = runner.invoke(app, ["delete", "--attachment", "nope"])
    assert res.exit_code == 1 and "attachmentId" in res.output
    res = runner.invoke(app, ["purge", "--grace-days", "0", "--yes", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["deleted"] == {"Chunk": 2, "KnowledgeDocument": 1, "Section": 2}

    monkeypatch.setenv("ACCOUNT_ID", "00000000-0000-0000-0000-000000000000")
    res = runner.invoke(app, ["purge"])
    assert res.exit_code == 1 and "ACCOUNT_ID" in res.output


def version_sections(i: int, version: int) -> list[tuple[str, str]]:
    n = 1 + (i % 3) + version  # v2 has one more section than v1
    return [
        (f"Part {s} v{version}", f"Document {i} version {version} part {s}. " + "Some steady filler text. " * (5 + s))
        for s in range(n)
    ]


def check_hierarchies(db, account_id: str, allowed: dict[str, set[str]]) -> dict[str, str]:
    """Every attachment has exactly one complete hierarchy with an allowed hash; no orphans."""
    docs = rows(
        db,
        """MATCH (d:KnowledgeDocument {accountId: $acc})
           OPTIONAL MATCH (d)-[:HAS_SECTION]->(s:Section)
           OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk)
           RETURN d.attachmentId AS att, d.contentHash AS hash, d.sectionCount AS sc, d.chunkCount AS cc,
                  d.deletedAt AS del, collect(DISTINCT s) AS sections, count(DISTINCT c) AS chunks""",
        acc=account_id,
    )
    atts = [d["att"] for d in docs]
    assert len(atts) == len(set(atts)), "a document appears twice"
    assert set(atts) <= set(allowed)
    found = {}
    for d in docs:
        assert d["del"] is None
        assert d["hash"] in allowed[d["att"]], f"unexpected content for {d['att']}"
        assert len(d["sections"]) == d["sc"] and d["chunks"] == d["cc"], f"incomplete hierarchy for {d['att']}"
        expected_ids = {section_node_id(account_id, d["att"], d["hash"], p) for p in range(d["sc"])}
        assert {s["nodeId"] for s in d["sections"]} == expected_ids, "sections of another version"
        found[d["att"]] = d["hash"]
    totals = rows(
        db,
        """MATCH (n:Node {accountId: $acc}) WHERE n:Section OR n:Chunk
           OPTIONAL MATCH (p)-[r:HAS_SECTION|HAS_CHUNK]->(n)
           WITH n, count(p) AS parents
           RETURN labels(n) AS labels, parents""",
        acc=account_id,
    )
    assert all(t["parents"] == 1 for t in totals), "orphan or doubly-attached section/chunk"
    assert len(totals) == sum(d["sc"] + d["cc"] for d in docs), "stray sections or chunks"
    return found


@pytest.mark.slow
def test_sigkill_during_folder_ingest_leaves_whole_hierarchies(db, writer, account, data_root, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    n_files = 16
    files = [folder / f"doc{i:02d}.md" for i in range(n_files)]
    hashes: dict[str, dict[int, str]] = {}
    for i, f in enumerate(files):
        write_md(f, f"Doc {i}", version_sections(i, 1))
        hashes.setdefault(attachment_id_for_path(f), {})[1] = content_hash(parse_file(f))
    no_vectors = GraphWriter(db, account, None, created_by="ingest")  # v1 quickly: embeddings are not the point
    ingest_paths([folder], no_vectors, summarizer=EXTRACTIVE)
    for i, f in enumerate(files):
        write_md(f, f"Doc {i}", version_sections(i, 2))
        hashes[attachment_id_for_path(f)][2] = content_hash(parse_file(f))
    allowed = {att: set(v.values()) for att, v in hashes.items()}
    v2 = {att: v[2] for att, v in hashes.items()}

    cmd = [sys.executable, "-m", "maxy.cli", "--verbose", "ingest", str(folder)]
    env = cli_env(account, data_root)
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    written = 0
    deadline = time.monotonic() + 60
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "[ingest] op=document" in line and "skipped=false" in line:
                written += 1
                if written >= 4:
                    proc.send_signal(signal.SIGKILL)
                    break
            if time.monotonic() > deadline:
                break
    finally:
        proc.wait(timeout=30)
        if proc.stderr:
            proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, "the ingest finished before it could be killed"

    mid = check_hierarchies(db, account.account_id, allowed)
    assert len(mid) == n_files
    assert 4 <= sum(1 for att, h in mid.items() if h == v2[att]) < n_files, "killed midway"

    done = subprocess.run(cmd + ["--json"], env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    final = check_hierarchies(db, account.account_id, allowed)
    assert final == v2, "every document has exactly its new hierarchy"
