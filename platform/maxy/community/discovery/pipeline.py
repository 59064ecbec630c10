"""Opportunity discovery as a plain state machine: prep -> scope -> source -> (lenses + HyDE ->
vector search per lens | the direct path) -> merge -> evaluation -> ranking -> persist ->
negotiate (when asked: ``negotiate``).

The scope is the source member's networks (one of them when ``network_id`` names it), and a
candidate is only ever a member who shares one of them: the searches carry the member guard and
the scope, so nobody outside a shared network can appear. Each kept candidate is handed to
``maxy.community.opportunities.create_opportunity`` (``latent``; ``negotiating`` when each is then
negotiated between the two members' agents: ``negotiate``). One ``[discovery] op=discover`` line per call; the
steps are trace events (graphs opportunity and hyde, the agents they ask).
"""

from __future__ import annotations

import time
from typing import Any

from ...config import Settings
from ...embeddings.base import EmbeddingError
from ...errors import ValidationError
from ...graph.write import GraphWriter
from ...logs import log_line
from .. import trace
from ..intents.assignment import member_networks
from ..intents.store import get_intent, read_intents, unknown_intent
from ..members import get_profile, list_profiles, profile_text, require_member
from ..opportunities import create_opportunity
from ..view import MemberView, unknown_network
from .evaluation import evaluate
from .hyde import hyde_documents
from .negotiate import negotiate_kept
from .ranking import Candidate, Ranked, merge, rank
from .search import direct_candidates, search_lens

MAX_LIMIT = 50
MAX_QUERY = 2000
MAX_EVALUATED = 20  # candidate members the evaluator is asked about, best similarity first
TRIGGERS = ("ambient", "orchestrator")


def _source(writer: GraphWriter, view: MemberView, member: str, query: str | None, intent_id: str | None) -> dict:
    """The source text, its intent (type and network relevancy) when it is one."""
    if intent_id is not None:
        intent = get_intent(writer.db, view, intent_id, own=member)
        if intent["status"] != "active":
            raise unknown_intent(intent_id)
        relevancy = {n["networkId"]: float(n.get("score") or 0.0) for n in intent.get("networks") or []}
        return {"text": intent["description"], "type": intent["type"], "intentId": intent_id, "relevancy": relevancy}
    if query is not None:
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY:
            raise ValidationError("query", f"say what to look for in 1-{MAX_QUERY} characters")
        return {"text": " ".join(query.split()), "type": None, "intentId": None, "relevancy": {}}
    own = read_intents(writer.db, view, member, limit=10)
    profile = get_profile(writer.db, view, member) or {}
    text = "\n".join([profile_text(profile), *(f"{i['type']}: {i['description']}" for i in own)])
    return {"text": text.strip() or member, "type": None, "intentId": None, "relevancy": {}}


def _embed_one(writer: GraphWriter, text: str, degraded: list[str]) -> list[float] | None:
    if writer.embedder is None:
        degraded.append("embedding: no-embedder")
        return None
    try:
        return [float(x) for x in writer.embedder.embed([text])[0]]
    except EmbeddingError as err:
        degraded.append(f"embedding: {str(err)[:80]}")
        return None


def _contexts(writer: GraphWriter, view: MemberView, members: list[str]) -> dict[str, dict[str, Any]]:
    """What the evaluator sees of each candidate: the profile and intents the viewer may see."""
    profiles = {p["memberId"]: p for p in list_profiles(writer.db, view, members)}
    return {m: {"profile": profiles.get(m), "intents": read_intents(writer.db, view, m, limit=10)} for m in members}


def _persist(writer: GraphWriter, ranked: list[Ranked], trigger: str, status: str) -> dict[str, dict[str, Any]]:
    """Each kept candidate handed to the opportunities package (which reports an existing one
    instead of a duplicate)."""
    return {
        r.candidate.candidate_member_id: create_opportunity(
            writer,
            source_member_id=r.candidate.source_member_id,
            candidate_member_id=r.candidate.candidate_member_id,
            network_id=r.candidate.network_id,
            score=r.evaluation.score,
            reasoning=r.evaluation.reasoning,
            source_role=r.source_role,
            candidate_role=r.evaluation.candidate_role,
            trigger=trigger,
            status=status,
        )
        for r in ranked
    }


def _public(r: Ranked, persisted: dict[str, Any] | None) -> dict[str, Any]:
    e, c = r.evaluation, r.candidate
    out: dict[str, Any] = {
        "candidateMemberId": c.candidate_member_id,
        "networkId": c.network_id,
        "score": e.score,
        "band": e.band,
        "reasoning": e.reasoning,
        "sourceRole": r.source_role,
        "candidateRole": e.candidate_role,
        "candidateIntentId": c.candidate_intent_id,
        "explain": r.explain,
    }
    return out | (persisted or {})


def _check(
    writer: GraphWriter,
    view: MemberView,
    member_id: str | None,
    query: str | None,
    intent_id: str | None,
    target_member_id: str | None,
    limit: int,
    trigger: str,
    persist: bool,
    negotiate: bool,
) -> str:
    """The member discovering, once every argument is checked."""
    member = view.resolve(member_id)
    if member is None:
        raise ValidationError("memberId", "the account's admin discovers for one member: name it with memberId")
    require_member(writer.db, view, member)
    if query is not None and intent_id is not None:
        raise ValidationError("query", "give a query or an intentId, not both")
    if query is None and intent_id is None and target_member_id is None:
        raise ValidationError("query", "say what to look for: a query, an intentId or a targetMemberId")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationError("limit", f"between 1 and {MAX_LIMIT}")
    if trigger not in TRIGGERS:
        raise ValidationError("trigger", f"one of {', '.join(TRIGGERS)}")
    if negotiate and not persist:
        raise ValidationError(
            "negotiate", "a negotiation settles a stored opportunity: persist them, or do not negotiate"
        )
    if target_member_id is not None:
        require_member(writer.db, view, target_member_id, "targetMemberId")
        if target_member_id == member:
            raise ValidationError("targetMemberId", "name another member than the one discovering")
    return member


def _shortlist(candidates: list[Candidate]) -> list[Candidate]:
    """The merged candidates of the ``MAX_EVALUATED`` members with the best similarity."""
    merged = merge(candidates)
    best: dict[str, float] = {}
    for c in merged:
        best[c.candidate_member_id] = max(best.get(c.candidate_member_id, 0.0), c.similarity)
    chosen = set(sorted(best, key=lambda m: -best[m])[:MAX_EVALUATED])
    return [c for c in merged if c.candidate_member_id in chosen]


def discover_opportunities(
    writer: GraphWriter,
    view: MemberView,
    settings: Settings,
    *,
    member_id: str | None = None,
    query: str | None = None,
    intent_id: str | None = None,
    target_member_id: str | None = None,
    network_id: str | None = None,
    limit: int = 10,
    trigger: str = "ambient",
    persist: bool = True,
    negotiate: bool = False,
) -> dict[str, Any]:
    """Ranked opportunities for the member from a ``query``, one of their intents
    (``intent_id``), or with one named member (``target_member_id``: the direct path).
    ``negotiate``: each kept one is stored ``negotiating`` and negotiated at once
    (``maxy.community.discovery.negotiate``); each answer entry then carries its ``negotiation``."""
    started = time.monotonic()
    member = _check(writer, view, member_id, query, intent_id, target_member_id, limit, trigger, persist, negotiate)
    degraded: list[str] = []
    answer: dict[str, Any] = {
        "memberId": member,
        "path": "direct" if target_member_id else ("intent" if intent_id else "query"),
    }
    with trace.graph("opportunity"):
        scope = [n["networkId"] for n in member_networks(writer.db, view, member, network_id)]
        if network_id is not None and not scope:
            raise unknown_network(network_id)
        source = _source(writer, view, member, query, intent_id)
        profile = get_profile(writer.db, view, member)
        candidates: list[Candidate] = []
        lenses: list[dict[str, Any]] = []
        if scope and target_member_id is not None:
            vector = _embed_one(writer, source["text"], degraded)
            candidates = direct_candidates(
                writer.db, view, member, target_member_id, scope, vector, source["relevancy"]
            )
        elif scope:
            hyde = hyde_documents(writer, view, settings, member, source["text"], profile)
            degraded += hyde.degraded
            for doc in hyde.documents:
                lenses.append({"label": doc.lens.label, "corpus": doc.lens.corpus, "cached": doc.cached})
                if doc.vector is not None:
                    candidates += search_lens(writer.db, view, member, scope, doc.lens, doc.vector, source["relevancy"])
            answer["lensesCached"] = hyde.lenses_cached
        merged = _shortlist(candidates)
        chosen = sorted({c.candidate_member_id for c in merged})
        evaluated = evaluate(settings, source["text"], profile, source["type"], merged, _contexts(writer, view, chosen))
        fallback = next((e for _, e in evaluated if e.degraded), None)
        if fallback is not None:
            degraded.append(f"evaluation: {fallback.reason}")
        ranked = rank(evaluated, limit)
        opportunities = _persist(writer, ranked, trigger, "negotiating" if negotiate else "latent") if persist else None
        persisted: dict[str, dict[str, Any]] | None = None
        if opportunities is not None and negotiate:
            persisted = negotiate_kept(writer, settings, ranked, opportunities, trigger=trigger, query=source["text"])
        elif opportunities is not None:
            persisted = {m: {"opportunity": o} for m, o in opportunities.items()}
    answer |= {
        "scope": scope,
        "lenses": lenses,
        "considered": len({c.candidate_member_id for c in merged}),
        "opportunities": [
            _public(r, None if persisted is None else persisted.get(r.candidate.candidate_member_id)) for r in ranked
        ],
        "persisted": opportunities is not None,
        "negotiated": negotiate,
        "continuing": [
            p["negotiation"]["negotiationId"]
            for p in (persisted or {}).values()
            if p.get("negotiation") and p["negotiation"].get("continuing")
        ],
        "degraded": fallback is not None,
        "reason": "; ".join(degraded) or (None if scope else "no-networks: the member is in no network"),
    }
    if source["intentId"]:
        answer["intentId"] = source["intentId"]
    log_line(
        "discovery",
        op="discover",
        member=member,
        path=answer["path"],
        networks=len(scope),
        lenses=len(lenses),
        considered=answer["considered"],
        kept=len(ranked),
        negotiated=negotiate,
        continuing=len(answer["continuing"]),
        degraded=answer["degraded"],
        reason=answer["reason"],
        ms=int((time.monotonic() - started) * 1000),
    )
    return answer
