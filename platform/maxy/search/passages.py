"""The passage a document hit shows: the text that matched, not a summary, within a budget.

A document found by its KnowledgeDocument or a Section would otherwise show that node's summary
(sentences picked from the whole), and a chunk only its own slice. :func:`attach_passages`
gives every folded document hit (``collapse.DocumentHit``) its best-matching passage:

1. the chunk: the best-ranked chunk among the document's hits, else the chunk of the document
   (of the matched section, when a Section was its best member) closest to the query's vector,
   read through the caller's guards; without a vector, the first one;
2. its text, without the heading path the hit's ``path`` already shows, followed (then
   preceded) by the text of its section around it, within the hit's budget, each edge at a
   sentence boundary, and ``[…]`` where the section goes on: a chunk longer than its budget is
   cut at its last sentence end inside it; a passage that starts inside its section comes after
   the section's first sentence, so the reader knows what the section is about;
3. the budget: ``PASSAGE_CHARS`` a document hit on average over the answer, ``PASSAGE_MIN`` for
   every hit and the rest shared in proportion to the hits' relevance (up to what a hit needs, at
   most ``PASSAGE_MAX``), so the likelier hits read on and an answer of five stays under 1,500
   tokens. The relevance is the answer's (``relevance.shown``), so passages are attached last.

The text replaces the hit's ``content`` (its ``summary`` goes: the passage says it);
``passage_chunks`` lists the chunks it is made of, in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..db import Database
from ..graph.guards import Caller, node_guard
from .collapse import PATH_SEPARATOR, DocumentHit
from .hits import Hit

PASSAGE_CHARS = 1_000  # what one document hit shows, on average over an answer's document hits
PASSAGE_MAX = 2_000  # the most one hit shows (a chunk is at most 1,500 characters by default)
PASSAGE_MIN = 400  # what every hit shows (its whole section, when shorter) before the rest is shared
NEIGHBOURS = 3  # chunks either side of the passage's own that may fill its budget
LEAD_CHARS = 150  # the most of a section's opening shown before a passage that starts further in
MORE = "[…]"  # where the passage leaves text of its section out
_SENTENCE_END = re.compile(r"[.!?…:;][\"')\]]*(?=\s)|\n")


def heading_path(props: dict[str, Any]) -> str:
    """The heading path ingest puts in front of a chunk's text (``Title`` or ``Title › Heading``)."""
    title = str(props.get("documentTitle") or "")
    heading = str(props.get("sectionTitle") or "")
    return title if not heading or heading == title else f"{title}{PATH_SEPARATOR}{heading}"


def body(props: dict[str, Any]) -> str:
    """A chunk's own text, without the heading path line(s) it starts with."""
    content = str(props.get("content") or "")
    prefix = heading_path(props)
    if prefix and content.startswith(prefix):
        rest = content[len(prefix) :]
        if rest.startswith("\n\n") or not rest.strip():
            return rest.strip()
    return content.strip()


def _end_before(text: str, lo: int, hi: int) -> int:
    """The last sentence end in ``text[lo:hi]`` (else its last space, else ``hi``): a position
    ``p`` with ``lo < p <= hi``."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text, lo, min(len(text), hi + 1)) if m.end() <= hi]
    if ends and ends[-1] > lo:
        return ends[-1]
    space = text.rfind(" ", lo, hi)
    return space if space > lo else hi


def _start_after(text: str, lo: int, hi: int) -> int:
    """The first sentence start in ``text[lo:hi]`` (``hi`` when none starts there)."""
    found = _SENTENCE_END.search(text, lo, hi)
    return found.end() if found else hi


def _lead(text: str, limit: int) -> int:
    """Where a section's opening shown before a passage ends: its first sentence when that ends
    within ``limit`` characters, else its last whole word within them; 0 when nothing fits."""
    if limit <= 0:
        return 0
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, min(len(text), limit + 1)) if m.end() <= limit]
    if ends:
        return ends[0]
    space = text.rfind(" ", 0, limit)
    return max(space, 0)


def assemble(
    chunks: Sequence[tuple[str, str]], at: int, budget: int, opening: tuple[str, str] | None = None
) -> tuple[str, list[str], int]:
    """The passage around ``chunks[at]`` (``(nodeId, text)`` of one section, in order) in at most
    ``budget`` characters: the whole section when it fits; else from the section's start when the
    chunk ends within the budget of it, or to its end when the chunk starts within the budget of
    it; else the chunk, then the text after it, then the text before it; each edge at a sentence
    boundary. A chunk longer than the budget is cut at its last sentence end inside it. A passage
    that starts further in comes after the section's opening (its first sentence, else its first
    words, at most ``LEAD_CHARS`` and a quarter of the budget, taken from the budget), read from
    ``opening`` (the section's first chunk) when ``chunks`` starts later. ``[…]`` marks each place
    where the section's text is left out. Returns the text, the chunks it draws on, in order, and
    how many characters of the chunks read it leaves out."""
    bodies = [text for _, text in chunks]
    text = " ".join(bodies)
    starts = [sum(len(b) + 1 for b in bodies[:i]) for i in range(len(bodies))]
    first = opening[1] if opening else text
    lo, hi = _span(text, starts[at], starts[at] + len(bodies[at]), budget)
    lead = 0
    if lo > 0 or opening:  # it starts further in: the section's opening first
        wanted = _lead(first, min(LEAD_CHARS, budget // 4))
        rest = budget - wanted - len(MORE) - 2
        if wanted:
            lo, hi = _span(text, starts[at], starts[at] + len(bodies[at]), rest)
            if lo <= wanted and not opening:  # it reaches back to the opening: read on from it
                lo = 0
            else:
                lead = wanted
    used = [
        node_id for (node_id, body), start in zip(chunks, starts, strict=True) if start < hi and start + len(body) > lo
    ]
    shown, opened = text[lo:hi].strip(), first[:lead].strip()
    if opened:
        source = opening[0] if opening else chunks[0][0]
        used = used if source in used else [source, *used]
    head = f"{opened} {MORE} " if opened else f"{MORE} " if lo > 0 or opening else ""
    marked = head + shown + (f" {MORE}" if hi < len(text) else "")
    read = len(text) + (len(opening[1]) if opening and opened else 0)
    return marked, used, read - len(shown) - len(opened)


def _span(text: str, lo: int, hi: int, budget: int) -> tuple[int, int]:
    """The span of ``text`` shown around the chunk ``text[lo:hi]`` in ``budget`` characters (see
    :func:`assemble`)."""
    if len(text) <= budget:
        return 0, len(text)
    if hi - lo > budget:
        return lo, _end_before(text, lo, lo + budget)
    if hi <= budget:  # the section's start is within reach: read from it
        return 0, _end_before(text, hi, budget)
    if len(text) - lo <= budget:  # its end is: read to it
        return _start_after(text, len(text) - budget, lo), len(text)
    hi = _end_before(text, hi, lo + budget)  # the chunk, the text after it, then the text before it
    room = budget - (hi - lo)
    if room > 1:
        lo = _start_after(text, lo - room, lo)
    return lo, hi


def budgets(needs: Sequence[int], weights: Sequence[float], mean: int = PASSAGE_CHARS) -> list[int]:
    """Each document hit's passage budget: ``PASSAGE_MIN`` each (what it needs, when less), then
    the rest of ``mean`` times their number shared in proportion to ``weights`` (the hits'
    relevance; equal shares when they are all 0), none above what it needs or ``PASSAGE_MAX``;
    what a hit cannot use goes to the others."""
    caps = [max(0, min(need, PASSAGE_MAX)) for need in needs]
    given = [min(PASSAGE_MIN, cap) for cap in caps]
    left = mean * len(needs) - sum(given)
    open_ = [i for i, cap in enumerate(caps) if given[i] < cap]
    while left >= 1 and open_:
        total = sum(max(weights[i], 0.0) for i in open_)
        shares = {i: (max(weights[i], 0.0) / total if total > 0 else 1 / len(open_)) for i in open_}
        spent = 0
        for i in open_:
            add = min(int(left * shares[i]), caps[i] - given[i])
            given[i] += add
            spent += add
        left -= spent
        open_ = [i for i in open_ if given[i] < caps[i]]
        if spent == 0:
            break
    return given


def attach_passages(
    db: Database,
    caller: Caller,
    hits: Sequence[Hit],
    vector: Sequence[float] | None,
    mean: int = PASSAGE_CHARS,
) -> None:
    """Give each document hit its best-matching passage (see the module's description)."""
    docs = [h for h in hits if isinstance(h, DocumentHit) and h.attachment_id]
    if not docs:
        return
    chosen = _best_chunks(db, caller, [h for h in docs if "Chunk" not in h.labels], vector)
    anchors = {id(h): (h.node_id if "Chunk" in h.labels else chosen.get(id(h))) for h in docs}
    sections = _sections(db, caller, sorted({a for a in anchors.values() if a}))
    found = [(hit, *sections[anchors[id(hit)] or ""]) for hit in docs if anchors[id(hit)] in sections]
    texts = [[(node_id, body(props)) for node_id, props in chunks] for _, chunks, _ in found]
    needs = [sum(len(t) + 1 for _, t in section) for section in texts]
    weights = [hit.relevance if hit.relevance is not None else 1 / (1 + rank) for rank, (hit, _, _) in enumerate(found)]
    for (hit, chunks, first), section, budget in zip(found, texts, budgets(needs, weights, mean), strict=True):
        anchor = anchors[id(hit)]
        at = next(i for i, (node_id, _props) in enumerate(chunks) if node_id == anchor)
        opening = (first[0], body(first[1])) if first else None
        text, used, left = assemble(section, at, budget, opening)
        own = chunks[at][1]
        if "Chunk" not in hit.labels:  # the passage node stands for the hit: its id, labels and properties
            hit.folded = [m for m in [_as_member(hit), *hit.folded] if m.node_id != anchor]
            hit.node_id, hit.labels, hit.properties = anchor or hit.node_id, ["Chunk"], dict(own)
        hit.properties = {k: v for k, v in hit.properties.items() if k not in ("summary", "embedding")}
        hit.properties["content"] = text
        hit.path = heading_path(own) or hit.path
        hit.passage_chunks = used
        hit.passage_cut = left


def _as_member(hit: DocumentHit) -> Hit:
    """The document hit's own node (a KnowledgeDocument or Section), kept among its folded members."""
    return Hit(node_id=hit.node_id, labels=list(hit.labels), score=hit.score, properties=dict(hit.properties))


def _best_chunks(
    db: Database, caller: Caller, hits: Sequence[DocumentHit], vector: Sequence[float] | None
) -> dict[int, str]:
    """For each hit found by its document or a section: the id of its chunk closest to ``vector``."""
    if not hits:
        return {}
    targets = [
        {"key": i, "attachment": h.attachment_id, "section": h.node_id if "Section" in h.labels else None}
        for i, h in enumerate(hits)
    ]
    guard = node_guard(caller, "c")
    rows = db.read(
        f"""
        UNWIND $targets AS t
        MATCH (c:Chunk) WHERE c.attachmentId = t.attachment AND {guard.clause}
          AND (t.section IS NULL OR EXISTS {{ MATCH (:Section {{nodeId: t.section}})-[:HAS_CHUNK]->(c) }})
        WITH t, c, CASE WHEN $v IS NOT NULL AND c.embedding IS NOT NULL AND size(c.embedding) = size($v)
                        THEN vector.similarity.cosine(c.embedding, $v) ELSE 0.0 END AS closeness
        ORDER BY t.key, closeness DESC, c.position
        WITH t, collect(c.nodeId)[0] AS best
        RETURN t.key AS key, best
        """,
        targets=targets,
        v=list(vector) if vector else None,
        **guard.params,
    )
    return {id(hits[row["key"]]): row["best"] for row in rows if row["best"]}


Chunks = list[tuple[str, dict[str, Any]]]


def _sections(
    db: Database, caller: Caller, anchors: Sequence[str]
) -> dict[str, tuple[Chunks, tuple[str, dict[str, Any]] | None]]:
    """For each anchor chunk: the readable chunks of its section around it, in order, and the
    section's first readable chunk when it is not among them (else None)."""
    if not anchors:
        return {}
    guard = node_guard(caller, "n")
    rows = db.read(
        f"""
        UNWIND $anchors AS anchor
        MATCH (c:Chunk {{nodeId: anchor}})<-[:HAS_CHUNK]-(s:Section)
        MATCH (s)-[:HAS_CHUNK]->(n:Chunk) WHERE {guard.clause}
        WITH anchor, c, n ORDER BY n.position
        WITH anchor, c, collect(n) AS readable
        WITH anchor, readable[0] AS first, [n IN readable WHERE abs(n.position - c.position) <= $around] AS near
        RETURN anchor, [n IN near | [n.nodeId, n {{.*, embedding: null}}]] AS chunks,
               CASE WHEN first IN near THEN null ELSE [first.nodeId, first {{.*, embedding: null}}] END AS opening
        """,
        anchors=list(anchors),
        around=NEIGHBOURS,
        **guard.params,
    )
    out: dict[str, tuple[Chunks, tuple[str, dict[str, Any]] | None]] = {}
    for row in rows:
        chunks = [(str(node_id), _props(props)) for node_id, props in row["chunks"]]
        opening = (str(row["opening"][0]), _props(row["opening"][1])) if row["opening"] else None
        if any(node_id == row["anchor"] for node_id, _ in chunks):
            out[row["anchor"]] = (chunks, opening)
    return out


def _props(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if v is not None}
