"""memory-search shows the passage that matched a document, not a summary: a document found by
a Section shows the section's chunk closest to the query, without its heading path, within its
budget, with its source."""

from __future__ import annotations

from maxy.search.passages import MORE, PASSAGE_MAX
from maxy_plugins import memory as mem

from tests.integration.test_plugin_tools import make_ctx

TIMEOUTS = (
    "Timeouts guard every request. The default timeout is five seconds of network inactivity. "
    "You can set a connect timeout, a read timeout, a write timeout and a pool timeout separately. "
    "A timeout of None disables it entirely, which is rarely what a production client wants. "
) * 3
PROXIES = (
    "Proxies route requests through another server. Set the proxy argument on the client, or rely on "
    "the HTTP_PROXY and HTTPS_PROXY environment variables, which the client reads by default. "
    "A SOCKS proxy needs the optional socks extra installed. "
) * 3
LOGGING = (
    "To see debug logs of every request, call logging.basicConfig(level=logging.DEBUG) before the "
    "first request; the client logs the request line, the response status and the connection events. "
)


def test_a_document_found_by_its_section_shows_the_chunk_that_matched(settings, db, account, embedder, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "client.md").write_text(f"# Client guide\n\n## Usage\n\n{TIMEOUTS}\n\n{PROXIES}\n\n{LOGGING}\n")
    ctx = make_ctx(settings, db, account, embedder)
    mem.memory_ingest(ctx, paths=[str(folder)])

    found = mem.memory_search(
        ctx, "How do I see the debug logs of requests?", limit=3, labels=["Section"], minRelevance=0
    )
    assert len(found.data["hits"]) == 1, str(found)
    (hit,) = found.data["hits"]
    text = str(found)
    assert "logging.basicConfig(level=logging.DEBUG)" in text  # the passage, not the section's summary
    assert "summary:" not in text and hit["labels"] == ["Chunk"]
    assert "  source: client.md" in text and "  path: Client guide › Usage" in text
    content = hit["properties"]["content"]
    assert not content.startswith("Client guide")  # the path line says it once
    assert len(content.replace(MORE, "").strip()) <= PASSAGE_MAX
    assert hit["passage"]["chunks"] and hit["nodeId"] in hit["passage"]["chunks"]
    assert hit["nodeId"].startswith("kchk-") and {"KnowledgeDocument", "Section"} & {
        label for m in hit["folded"] for label in m["labels"]
    }


def test_a_passage_deep_in_a_long_section_comes_after_the_sections_first_sentence(
    settings, db, account, embedder, tmp_path
):
    topics = ["retries", "cookies", "redirects", "streaming", "encodings", "authentication", "hooks", "transports"]
    paragraphs = [
        " ".join(
            f"Note {n} on {topic}: the client handles {topic} in step {n} of its {topic} routine." for n in range(14)
        )
        for topic in topics
    ]
    opening = "This guide walks through every advanced feature of the client."
    deep = (
        "To pin a certificate bundle, set the SSL_CERT_FILE environment variable to the path of a PEM file; "
        "the client then verifies every server against those roots instead of the default ones. "
    ) * 4
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "advanced.md").write_text(
        "# Advanced\n\n## Features\n\n" + opening + " " + "\n\n".join([*paragraphs, deep]) + "\n"
    )
    ctx = make_ctx(settings, db, account, embedder)
    mem.memory_ingest(ctx, paths=[str(tmp_path / "docs")])

    found = mem.memory_search(ctx, "Which environment variable pins a certificate bundle?", limit=1, minRelevance=0)
    (hit,) = found.data["hits"]
    content = hit["properties"]["content"]
    assert "SSL_CERT_FILE" in content, content
    assert content.startswith(f"{opening} {MORE} "), content[:200]  # what the section is about, then the match
    first = db.read(
        "MATCH (s:Section)-[:HAS_CHUNK]->(c:Chunk {nodeId: $id}) MATCH (s)-[:HAS_CHUNK]->(f:Chunk) "
        "RETURN f.nodeId AS id ORDER BY f.position LIMIT 1",
        id=hit["nodeId"],
    )[0]["id"]
    assert hit["passage"]["chunks"][0] == first and hit["nodeId"] in hit["passage"]["chunks"]
    assert len(content) <= PASSAGE_MAX + 2 * len(MORE) + 4
