"""memory-search's text against the real Neo4j: an ingested document found at several levels
is one block (path + whole passage), bookkeeping stays out unless named in ``fields``."""

from __future__ import annotations

import re

from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter
from maxy.ingest.hierarchy import ingest_paths
from maxy.memory.recall import recall
from maxy.plugins.api import ToolContext
from maxy.search import SearchRequest

HANDBOOK = """# Boiler handbook

How the house's gas boiler is looked after: servicing, safety and who to call.

## Servicing

The gas boiler is serviced every autumn by a certified fitter. Servicing the boiler means
checking the burner, the flue and the pressure gauge, and bleeding the radiators.

## Safety

A carbon monoxide alarm sits next to the boiler. If the alarm sounds, open the windows,
switch the boiler off and call the gas emergency line.
"""


def ctx_for(settings, db, account, embedder) -> ToolContext:
    s = settings.model_copy(update={"ACCOUNT_ID": account.account_id})
    return ToolContext(
        settings=s,
        role="admin",
        caller=Caller.from_settings(s, account.account_id),
        account=account,
        embedder=embedder,
        session_id=None,
        session_node_id=None,
        knowledge_keywords=(),
        plugin="memory",
        _db=db,
    )


def test_memory_search_collapses_a_documents_levels_and_hides_bookkeeping(settings, db, account, embedder, tmp_path):
    from maxy_plugins.memory.search_tools import memory_search

    path = tmp_path / "boiler.md"
    path.write_text(HANDBOOK, encoding="utf-8")
    [result] = ingest_paths([path], GraphWriter(db, account, embedder, created_by="ingest"))
    assert result.ok and result.sections == 3
    query = "boiler servicing by a certified fitter"

    levels = recall(db, Caller(account.account_id), embedder, settings, SearchRequest(query), collapse=False).hits
    assert len(levels) >= 3 and {"KnowledgeDocument", "Section", "Chunk"} <= {lab for h in levels for lab in h.labels}

    text = memory_search(ctx_for(settings, db, account, embedder), query)
    assert "---" not in text, f"one document, one block:\n{text}"
    lines = text.splitlines()
    assert re.fullmatch(r"\[Chunk\] \(id: kchk-\w+\) \(relevance: \d\.\d{2}\)", lines[0]), lines[0]
    assert lines[1] == "  path: Boiler handbook › Servicing"
    assert lines[2] == "  source: boiler.md"  # a file ingested on its own: its name
    chunk = next(h for h in levels if "Chunk" in h.labels).properties["content"]
    assert chunk.startswith("Boiler handbook › Servicing\n\n")  # the heading path, stored for the index
    passage = chunk.removeprefix("Boiler handbook › Servicing\n\n")
    assert lines[3].startswith("  content: ") and passage.replace("\n", "\n    ") in text  # said once, by path
    for key in ("createdAt", "updatedAt", "createdBy", "contentHash", "nodeId:", "attachmentId", "position"):
        assert key not in text, f"{key} in the default text"

    asked = memory_search(ctx_for(settings, db, account, embedder), query, fields=["content", "createdAt"])
    assert "  createdAt: " in asked and "attachmentId" not in asked, "bookkeeping named in fields is shown"

    data = recall(db, Caller(account.account_id), embedder, settings, SearchRequest(query)).hits
    assert len(data) == 1 and data[0].properties["attachmentId"] == result.attachment_id, "the data keep it all"


def test_limit_means_that_many_distinct_results(settings, db, account, embedder, tmp_path):
    """A document found at three levels takes one place, not three: the list is folded before it
    is cut, so ``limit`` distinct results come back whenever that many exist."""
    from maxy.graph.write import NodeSpec

    path = tmp_path / "boiler.md"
    path.write_text(HANDBOOK, encoding="utf-8")
    writer = GraphWriter(db, account, embedder, created_by="ingest")
    ingest_paths([path], writer)
    for text in (
        "The boiler was serviced in October by the certified fitter from Bath",
        "The boiler's pressure gauge read 1.2 bar after the autumn service",
        "A new carbon monoxide alarm was fitted next to the boiler",
        "The fitter recommended bleeding the radiators after each boiler service",
    ):
        writer.write(NodeSpec(labels=["Fact"], properties={"text": text}))
    query = "boiler servicing by a certified fitter"
    levels = recall(db, Caller(account.account_id), embedder, settings, SearchRequest(query, limit=3), collapse=False)
    assert sum(1 for h in levels.hits if "Fact" not in h.labels) >= 2, "the document takes several of the first places"
    for limit in (1, 3, 5):
        hits = recall(db, Caller(account.account_id), embedder, settings, SearchRequest(query, limit=limit)).hits
        assert len(hits) == limit, [h.labels for h in hits]
        documents = [h.properties.get("attachmentId") for h in hits if "Fact" not in h.labels]
        assert len(documents) == len(set(documents)) <= 1


def test_a_document_hit_names_its_file_inside_the_folder_ingested(settings, db, account, embedder, tmp_path):
    """Every document hit says which file it came from, relative to the folder ingested, in the
    tool's text and data; a document ingested before every level carried it is looked up."""
    from maxy_plugins.memory.search_tools import memory_search

    folder = tmp_path / "docs"
    (folder / "advanced").mkdir(parents=True)
    (folder / "advanced" / "timeouts.md").write_text(
        "# Timeouts\n\nHTTPX is careful to enforce timeouts everywhere. The default is five seconds of "
        "network inactivity, after which a TimeoutException is raised.\n",
        encoding="utf-8",
    )
    (folder / "quickstart.md").write_text("# Quickstart\n\nInstall the package and make a first request.\n")
    results = ingest_paths([folder], GraphWriter(db, account, embedder, created_by="ingest"))
    assert sorted(r.ok for r in results) == [True, True]
    query = "how long is the default network timeout"
    ctx = ctx_for(settings, db, account, embedder)
    text = memory_search(ctx, query, limit=1)
    assert "  source: advanced/timeouts.md" in text and str(tmp_path) not in text, text
    [hit] = recall(db, Caller(account.account_id), embedder, settings, SearchRequest(query, limit=1)).hits
    assert hit.source == "advanced/timeouts.md"

    # a document ingested before its levels carried the file: its KnowledgeDocument says it
    db.write("MATCH (n:Node {accountId: $a}) WHERE n:Section OR n:Chunk REMOVE n.relativePath", a=account.account_id)
    [hit] = recall(db, Caller(account.account_id), embedder, settings, SearchRequest(query, limit=1)).hits
    assert hit.source == "advanced/timeouts.md"
