"""The agent-facing search text: document levels collapsed, bookkeeping left out, multi-line
values indented, the relevance header and the nearest miss. Pure: no database."""

from __future__ import annotations

from maxy.graph.allowlist import BOOKKEEPING_PROPERTIES, RESERVED_PROPERTIES, bookkeeping_properties
from maxy.search.collapse import DocumentHit, collapse_documents, document_path
from maxy.search.format import NO_RELEVANT_RESULTS, OUTPUT_BUDGET, project, render, render_hit, to_json
from maxy.search.hits import Hit, Related
from maxy.secrets import redact_text

STAMPS = {
    "createdAt": "2026-11-23T09:50:46.218757+00:00",
    "updatedAt": "2026-11-23T09:50:46.218757+00:00",
    "createdBy": "ingest",
}
PASSAGE = "Handbook › Boilers\n\nBoilers are serviced every year.\nGas boilers need a certified fitter."


def doc(attachment: str = "file:a", title: str = "Handbook", score: float = 0.9, **extra) -> Hit:
    props = {
        "attachmentId": attachment,
        "title": title,
        "summary": "All about the house.",
        "contentHash": "ab" * 32,
        "mediaType": "text/markdown",
        "source": "file",
        "sectionCount": 2,
        "chunkCount": 3,
        "nodeId": f"kdoc-{attachment}",
        **STAMPS,
        **extra,
    }
    return Hit(f"kdoc-{attachment}", ["KnowledgeDocument"], score=score, properties=props)


def section(attachment: str = "file:a", heading: str = "Boilers", score: float = 0.8) -> Hit:
    props = {
        "attachmentId": attachment,
        "title": heading,
        "summary": "Boilers are serviced every year.",
        "position": 1,
        "documentTitle": "Handbook",
        "nodeId": f"ksec-{attachment}-{heading}",
        **STAMPS,
    }
    return Hit(f"ksec-{attachment}-{heading}", ["Section"], score=score, properties=props)


def chunk(
    attachment: str = "file:a", n: int = 0, score: float = 0.7, content: str = PASSAGE, heading: str = "Boilers"
) -> Hit:
    props = {
        "attachmentId": attachment,
        "content": content,
        "summary": "Boilers are serviced every year.",
        "position": n,
        "documentTitle": "Handbook",
        "sectionTitle": heading,
        "nodeId": f"kchk-{attachment}-{n}",
        **STAMPS,
    }
    related = [
        Related("HAS_CHUNK", "incoming", ["Section"], {"attachmentId": attachment, "title": heading, "nodeId": "ksec"}),
        Related("MENTIONS", "incoming", ["Person"], {"name": "Ada", "nodeId": "p-ada", **STAMPS}),
    ]
    return Hit(f"kchk-{attachment}-{n}", ["Chunk"], score=score, properties=props, related=related)


def fact(node_id: str, score: float) -> Hit:
    return Hit(node_id, ["Fact"], score=score, properties={"text": f"fact {node_id}", "nodeId": node_id, **STAMPS})


# ---------------------------------------------------------------------------------------
# collapse
def test_levels_of_one_document_fold_into_one_hit_at_the_best_rank():
    hits = [doc(score=0.95), fact("f1", 0.9), section(score=0.85), chunk(n=1, score=0.8), chunk(n=0, score=0.7)]
    out = collapse_documents(hits)
    assert [h.node_id for h in out] == ["kchk-file:a-1", "f1"]
    folded = out[0]
    assert isinstance(folded, DocumentHit)
    assert folded.score == 0.95 and folded.labels == ["Chunk"], "the best member's rank, the best chunk's node"
    assert folded.properties["content"] == PASSAGE, "the passage's text is kept whole"
    assert folded.path == "Handbook › Boilers"
    assert [m.node_id for m in folded.folded] == ["kdoc-file:a", "ksec-file:a-Boilers", "kchk-file:a-0"]
    assert out[1] is hits[1]


def test_collapse_keeps_ranking_fields_of_the_best_member():
    best = doc(score=0.95)
    best.relevance, best.ranks = 0.83, {"vector": 1}
    folded = collapse_documents([best, chunk(score=0.5)])[0]
    assert (folded.score, folded.relevance, folded.ranks) == (0.95, 0.83, {"vector": 1})


def test_other_documents_and_views_stay_apart():
    a, b = chunk("file:a", score=0.9), chunk("file:b", score=0.8)
    other_view = chunk("file:a", n=2, score=0.7)
    other_view.properties["scope"] = "private"
    out = collapse_documents([a, b, other_view])
    assert [h.node_id for h in out] == [a.node_id, b.node_id, other_view.node_id]
    assert all(isinstance(h, DocumentHit) and not h.folded for h in out)


def test_non_document_hits_are_untouched():
    hits = [fact("f1", 0.9), fact("f2", 0.5), Hit("c", ["Chunk"], score=0.4, properties={"content": "no attachment"})]
    out = collapse_documents(hits)
    assert out == hits and all(type(h) is Hit for h in out)
    assert collapse_documents([]) == []


def test_without_a_chunk_the_best_member_is_the_passage():
    folded = collapse_documents([section(score=0.9), doc(score=0.8)])[0]
    assert isinstance(folded, DocumentHit) and folded.labels == ["Section"]
    assert folded.path == "Handbook › Boilers"
    assert document_path([doc()], doc()) == "Handbook"
    intro = chunk(heading="Handbook")
    assert document_path([intro], intro) == "Handbook", "an untitled introduction is the document itself"


# ---------------------------------------------------------------------------------------
# bookkeeping
def test_bookkeeping_is_defined_once_from_the_reserved_properties():
    assert {"createdAt", "updatedAt", "createdBy", "nodeId", "accountId", "embedding"} <= BOOKKEEPING_PROPERTIES
    assert {"attachmentId", "contentHash"} <= BOOKKEEPING_PROPERTIES
    assert "scope" in RESERVED_PROPERTIES and "scope" not in BOOKKEEPING_PROPERTIES
    assert "position" in bookkeeping_properties(["Chunk"]) and "position" not in bookkeeping_properties(["Person"])


def test_default_text_leaves_out_bookkeeping_everywhere():
    person = Hit(
        "p1",
        ["Person"],
        score=0.9,
        properties={"name": "Ada", "position": "CTO", "scope": "shared", "nodeId": "p1", **STAMPS},
        related=[Related("WORKS_FOR", "outgoing", ["Organization"], {"name": "Globex", "nodeId": "o1", **STAMPS})],
    )
    text = render([person])
    for key in (*STAMPS, "nodeId"):
        assert f"{key}:" not in text
    assert "  name: Ada" in text and "  position: CTO" in text and "  scope: shared" in text
    assert "    --[WORKS_FOR]--> [Organization] (id: o1) {name: Globex}" in text, "a related node keeps its id"


def test_fields_reach_bookkeeping_and_related_nodes_when_asked():
    hits = [chunk()]
    project(hits, ["content", "createdAt", "related.name"])
    text = render(hits, fields=["content", "createdAt", "related.name"])
    assert "  createdAt: 2026-11-23" in text and "  content: Handbook" in text and "position" not in text
    assert "    <--[MENTIONS]-- [Person] (id: p-ada) {name: Ada}" in text
    assert "    <--[HAS_CHUNK]-- [Section] (id: ksec) {}" in text
    plain = [chunk()]
    project(plain, ["content"])
    assert plain[0].related[1].properties["createdAt"], "without related.* entries related nodes are not projected"
    assert "createdAt" not in render(plain, fields=["content"]), "... and show their default text"
    only_related = [chunk()]
    project(only_related, ["related.name"])
    assert only_related[0].properties["content"] == PASSAGE, "only related.* entries: the hits stay whole"


def test_document_hit_text_shows_path_and_passage_once():
    hits = collapse_documents([doc(score=0.95), section(score=0.85), chunk(n=1, score=0.8), chunk(n=0, score=0.7)])
    text = render(hits)
    lines = text.splitlines()
    assert lines[0] == "[Chunk] (id: kchk-file:a-1) (score: 0.950)"
    assert lines[1] == "  path: Handbook › Boilers"
    assert lines[2] == "  also matched: KnowledgeDocument, Section, Chunk"
    assert "  content: Handbook › Boilers\n    \n    Boilers are serviced every year.\n    Gas boilers" in text
    for hidden in ("documentTitle", "sectionTitle", "summary", "attachmentId", "position", "HAS_CHUNK"):
        assert hidden not in text
    assert "<--[MENTIONS]-- [Person] (id: p-ada) {name: Ada}" in text, "other related nodes stay"
    assert text.count("Boilers are serviced every year.") == 1
    rows = to_json(hits)
    assert rows[0]["path"] == "Handbook › Boilers" and len(rows[0]["folded"]) == 3
    assert rows[0]["properties"]["attachmentId"] == "file:a", "the data keep every property"


# ---------------------------------------------------------------------------------------
# layout
def test_multi_line_values_stay_indented_in_related_lines():
    hit = Hit(
        "n1",
        ["Note"],
        score=0.5,
        properties={"text": "one\ntwo"},
        related=[Related("ABOUT", "outgoing", ["Fact"], {"text": "first line\nsecond line\nthird"})],
    )
    text = render_hit(hit)
    assert "  text: one\n    two" in text
    assert "    --[ABOUT]--> [Fact] {text: first line\n        second line\n        third}" in text
    for line in text.splitlines()[1:]:
        assert line.startswith("  "), f"unindented line {line!r}"


def test_header_shows_relevance_when_known_else_score():
    hit = fact("f1", 0.8766)
    assert render([hit]).splitlines()[0] == "[Fact] (id: f1) (score: 0.877)"
    hit.relevance = 0.8349
    assert render([hit]).splitlines()[0] == "[Fact] (id: f1) (relevance: 0.83)"


def test_empty_results_and_the_nearest_miss():
    assert render([]) == "No results."
    miss = chunk()
    miss.relevance = 0.12
    text = render([], nearest_miss=miss)
    first, second, *rest = text.splitlines()
    assert first == NO_RELEVANT_RESULTS == "No relevant results (nothing cleared the relevance cut). Nearest miss:"
    assert second == "[Chunk] (id: kchk-file:a-0) (relevance: 0.12)"
    assert "Related" not in text and "createdAt" not in text, "the compact block"
    assert "  content: Handbook › Boilers" in text
    huge = Hit("n", ["Note"], properties={"text": "x" * (OUTPUT_BUDGET * 2)})
    assert len(render([], nearest_miss=huge)) <= OUTPUT_BUDGET


def test_budget_still_holds_with_document_hits():
    hits = collapse_documents(
        [chunk(f"file:{i}", score=1 - i / 100, content="x" * 3_000 + f" #{i}") for i in range(40)]
    )
    out = render(hits)
    assert len(out) <= OUTPUT_BUDGET and "left out to fit" in out
    assert "x" * 3_000 + " #0" in out, "the top passage is whole"


def test_a_secret_in_a_related_nodes_multi_line_value_is_redacted_whole():
    hit = Hit(
        "n1",
        ["Note"],
        properties={"name": "deploy"},
        related=[Related("HAS", "outgoing", ["Note"], {"name": "db", "password": "first-half\nsecond-half"})],
    )
    out = redact_text(render([hit]))
    assert "first-half" not in out and "second-half" not in out, out
    assert "  name: deploy" in out and "    --[HAS]--> [Note] {name: db, password:" in out
