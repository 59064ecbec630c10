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
