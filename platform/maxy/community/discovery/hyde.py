"""HyDE per lens for discovery, cached in the graph: infer lenses -> check the cache -> write
the missing documents -> embed -> cache.

The lenses of a source text are a HydeLens node and each lens's document a HydeDocument node
(embedded on write), both keyed by the member and the text, so the same source asks the model
nothing the second time. ``maxy.search.hyde``'s Lens (label, corpus) is the unit here too; its
corpora are the community's: ``profiles`` and ``intents``. Without a model nothing is cached:
one lens per corpus, labelled by the source text, whose document is the text itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...config import Settings
from ...embeddings.base import EmbeddingError
from ...graph.guards import node_guard
from ...graph.write import GraphWriter, NodeSpec
from ...llm import LLMUnavailable
from ...search.hyde import Lens
from .. import trace
from ..intents.model import ask
from ..view import MemberView
from .lenses import fallback_lenses, lenses_from
from .prompts import HYDE_SYSTEM, HYDE_TOOL, LENS_SYSTEM, LENS_TOOL, hyde_prompt, lens_prompt

HYDE_LENS, HYDE_DOCUMENT = "HydeLens", "HydeDocument"
MAX_DOCUMENT = 3000


@dataclass
class LensDocument:
    lens: Lens
    text: str
    vector: list[float] | None
    cached: bool


@dataclass
class HydeResult:
    documents: list[LensDocument]
    lenses_cached: bool
    degraded: list[str]  # "step: reason"


def source_key(member_id: str, source_text: str) -> str:
    normalized = " ".join(source_text.split()).lower()
    return hashlib.sha256(f"{member_id}\n{normalized}".encode()).hexdigest()[:40]


def _doc_id(key: str, lens: Lens) -> str:
    return "hyde-doc-" + hashlib.sha256(f"{key}\n{lens.corpus}\n{lens.label}".encode()).hexdigest()[:40]


def _cached(writer: GraphWriter, view: MemberView, member_id: str, key: str) -> tuple[tuple[Lens, ...] | None, dict]:
    guard = node_guard(view.caller, "n")
    rows = writer.db.read(
        f"""
        MATCH (n:{HYDE_LENS} {{nodeId: $id}}) WHERE {guard.clause} AND n.memberId = $member
        RETURN n.lenses AS lenses
        """,
        id=f"hyde-lens-{key}",
        member=member_id,
        **guard.params,
    )
    if not rows:
        return None, {}
    lenses = tuple(Lens(x["label"], x["corpus"]) for x in json.loads(rows[0]["lenses"]))
    docs = writer.db.read(
        f"""
        MATCH (n:{HYDE_DOCUMENT}) WHERE n.nodeId IN $ids AND {guard.clause} AND n.memberId = $member
        RETURN n.nodeId AS id, n.text AS text, n.embedding AS vector
        """,
        ids=[_doc_id(key, lens) for lens in lenses],
        member=member_id,
        **guard.params,
    )
    by_id = {r["id"]: r for r in docs}
    return lenses, {lens: by_id[_doc_id(key, lens)] for lens in lenses if _doc_id(key, lens) in by_id}


def _infer(settings: Settings, text: str, profile: Mapping[str, Any] | None) -> tuple[Lens, ...]:
    return lenses_from(
        ask(settings, "lens-inferrer", system=LENS_SYSTEM, prompt=lens_prompt(text, profile), tool=LENS_TOOL)
    )


def _generate(settings: Settings, text: str, lens: Lens) -> str:
    answer = ask(
        settings,
        "hyde-generator",
        system=HYDE_SYSTEM,
        prompt=hyde_prompt(text, lens.label, lens.corpus),
        tool=HYDE_TOOL,
    )
    doc = answer.get("document")
    if not isinstance(doc, str) or not doc.strip():
        raise LLMUnavailable("the HyDE generator wrote no document")
    return doc.strip()[:MAX_DOCUMENT]


def _embed(writer: GraphWriter, docs: list[LensDocument], degraded: list[str]) -> None:
    todo = [d for d in docs if d.vector is None]
    if not todo:
        return
    if writer.embedder is None:
        degraded.append("embedding: no-embedder")
        return
    texts = list(dict.fromkeys(d.text for d in todo))
    try:
        vectors = dict(zip(texts, writer.embedder.embed(texts), strict=True))
    except EmbeddingError as err:
        degraded.append(f"embedding: {str(err)[:80]}")
        return
    for d in todo:
        d.vector = [float(x) for x in vectors[d.text]]


def hyde_documents(
    writer: GraphWriter,
    view: MemberView,
    settings: Settings,
    member_id: str,
    source_text: str,
    profile: Mapping[str, Any] | None,
) -> HydeResult:
    """One embedded hypothetical document per lens of ``source_text`` for ``member_id``."""
    key = source_key(member_id, source_text)
    degraded: list[str] = []
    with trace.graph("hyde"):
        lenses, cached = _cached(writer, view, member_id, key)
        lenses_cached = lenses is not None
        if lenses is None:
            try:
                lenses = _infer(settings, source_text, profile)
            except LLMUnavailable as err:
                degraded.append(f"lenses: {err.reason}")
                docs = [LensDocument(lens, source_text, None, False) for lens in fallback_lenses(source_text)]
                _embed(writer, docs, degraded)
                return HydeResult(docs, False, degraded)
            writer.write(
                NodeSpec(
                    [HYDE_LENS],
                    {
                        "memberId": member_id,
                        "sourceKey": key,
                        "sourceText": source_text[:4000],
                        "lenses": json.dumps([{"label": x.label, "corpus": x.corpus} for x in lenses]),
                    },
                    node_id=f"hyde-lens-{key}",
                )
            )
        docs = []
        for lens in lenses:
            hit = cached.get(lens)
            if hit is not None:
                docs.append(LensDocument(lens, hit["text"], hit["vector"], True))
                continue
            try:
                text = _generate(settings, source_text, lens)
            except LLMUnavailable as err:  # this lens searches with the source text; nothing cached
                degraded.append(f"hyde: {err.reason}")
                docs.append(LensDocument(lens, source_text, None, False))
                continue
            props = {"memberId": member_id, "sourceKey": key, "lens": lens.label, "corpus": lens.corpus, "text": text}
            writer.write(NodeSpec([HYDE_DOCUMENT], props, node_id=_doc_id(key, lens)))
            docs.append(LensDocument(lens, text, None, False))
        _embed(writer, docs, degraded)
    return HydeResult(docs, lenses_cached, degraded)
