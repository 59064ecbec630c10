"""Candidate search inside the scope: the source member's networks that the candidate shares.

Per lens, the nodes of its corpus (``profiles``: MemberProfile and ProfileHyde; ``intents``:
active Intents assigned to a scope network) are searched inside the scope, with the member guard
and the scope AND-ed to the account guards: exactly (cosine over the scope's own nodes) when the
scope holds at most ``EXACT_MEMBERS`` members, so members outside it can never crowd a candidate
out; else through the vector indexes (``maxy.search.vector``) with ``K`` raised by how much larger
the account is than the scope. Each hit becomes one candidate per scope network its member (or
its intent) is in. The direct path
names the candidate: one candidate per shared scope network, its similarity the best of the
target's profile and visible intents against the source text."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...db import Database
from ...graph.guards import Guard, both, node_guard
from ...search.hyde import Lens
from ...search.vector import vector_search
from ..view import MemberView, active_member, visible_member_clause
from .ranking import Candidate

CORPUS_LABELS = {"profiles": ("MemberProfile", "ProfileHyde"), "intents": ("Intent",)}
VIA = {"MemberProfile": "profile", "ProfileHyde": "profile-hyde", "Intent": "intent"}
K = 50  # hits per lens
EXACT_MEMBERS = 2000  # a scope of at most this many members is searched exactly
MAX_K = 1000  # hits asked of a vector index for a larger scope (before the scope's filter)
_Hit = tuple[str, list[str], float]  # node id, labels, cosine similarity


def _scope_rule(corpus: str, source: str, scope: Sequence[str]) -> Guard:
    if corpus == "intents":
        rule = (
            "n.memberId <> $d_source AND n.status = 'active' AND EXISTS { MATCH (n)-[d_r:IN_NETWORK]->(d_net:Network) "
            f"WHERE d_net.nodeId IN $d_scope AND d_r.unassignedAt IS NULL AND d_net.deletedAt IS NULL "
            f"AND {active_member('n.memberId', 'd_net')} }}"
        )
    else:
        rule = (
            "n.memberId <> $d_source AND EXISTS { MATCH (d_mm:NetworkMembership {accountId: $g_accountId, "
            "memberId: n.memberId, status: 'active'}) WHERE d_mm.networkId IN $d_scope AND d_mm.deletedAt IS NULL }"
        )
    return Guard(rule, {"d_source": source, "d_scope": list(scope)})


def _resolve(db: Database, view: MemberView, ids: list[str], scope: Sequence[str]) -> dict[str, dict]:
    """For each hit: its member, its intent's type, and the scope networks it counts in."""
    guard = node_guard(view.caller, "n")
    rows = db.read(
        f"""
        UNWIND $ids AS id
        MATCH (n:Node {{nodeId: id}}) WHERE {guard.clause}
        RETURN n.nodeId AS id, n.memberId AS memberId, n:Intent AS isIntent, n.type AS type,
          CASE WHEN n:Intent THEN COLLECT {{
            MATCH (n)-[r:IN_NETWORK]->(net:Network) WHERE net.nodeId IN $scope AND r.unassignedAt IS NULL
              AND net.deletedAt IS NULL AND {active_member("n.memberId", "net")}
            RETURN net.nodeId }}
          ELSE COLLECT {{
            MATCH (mm:NetworkMembership {{accountId: $g_accountId, memberId: n.memberId, status: 'active'}})
            WHERE mm.networkId IN $scope AND mm.deletedAt IS NULL RETURN mm.networkId }} END AS networks
        """,
        ids=ids,
        scope=list(scope),
        **guard.params,
    )
    return {r["id"]: dict(r) for r in rows}


def _scope_members(db: Database, view: MemberView, source: str, scope: Sequence[str]) -> tuple[list[str], int]:
    """The scope's active members other than the source, and how many profiles the account holds."""
    mm, p = node_guard(view.caller, "s_mm"), node_guard(view.caller, "s_p")
    rows = db.read(
        f"""
        OPTIONAL MATCH (s_mm:NetworkMembership {{accountId: $g_accountId, status: 'active'}})
        WHERE s_mm.networkId IN $s_scope AND s_mm.memberId <> $s_source AND {mm.clause}
        WITH collect(DISTINCT s_mm.memberId) AS members
        RETURN members, COUNT {{ MATCH (s_p:MemberProfile {{accountId: $g_accountId}}) WHERE {p.clause} }} AS total
        """,
        s_scope=list(scope),
        s_source=source,
        **{**mm.params, **p.params},
    )
    return (list(rows[0]["members"]), int(rows[0]["total"])) if rows else ([], 0)


def _exact(
    db: Database,
    view: MemberView,
    corpus: str,
    members: list[str],
    scope: Sequence[str],
    vector: list[float],
    when: Guard,
) -> list[_Hit]:
    """The ``K`` nodes of the corpus inside the scope nearest to ``vector`` (exact cosine)."""
    guard = both(node_guard(view.caller, "n"), when)
    if corpus == "intents":
        nodes = """
        MATCH (s_net:Network {accountId: $g_accountId}) WHERE s_net.nodeId IN $s_scope
        MATCH (n:Intent)-[:IN_NETWORK]->(s_net)"""
    else:
        nodes = """
        UNWIND $s_members AS s_member
        MATCH (s_p:MemberProfile {accountId: $g_accountId, memberId: s_member})
        CALL (s_p) { WITH s_p AS n RETURN n UNION MATCH (s_p)-[:HAS_HYDE]-(n:ProfileHyde) RETURN n }"""
    rows = db.read(
        f"""{nodes}
        WITH DISTINCT n WHERE n.embedding IS NOT NULL AND {guard.clause}
        WITH n, vector.similarity.cosine(n.embedding, $s_vec) AS score ORDER BY score DESC LIMIT $s_k
        RETURN n.nodeId AS id, labels(n) AS labels, score
        """,
        s_members=members,
        s_scope=list(scope),
        s_vec=vector,
        s_k=K,
        **guard.params,
    )
    # Neo4j's cosine similarity is (1 + cos) / 2; candidates carry cos itself, like the index path
    return [(r["id"], list(r["labels"]), max(0.0, 2.0 * float(r["score"]) - 1.0)) for r in rows]


def _hits(
    db: Database, view: MemberView, source: str, scope: Sequence[str], corpus: str, vector: list[float], when: Guard
) -> list[_Hit]:
    members, total = _scope_members(db, view, source, scope)
    if not members:
        return []
    if len(members) <= EXACT_MEMBERS:
        return _exact(db, view, corpus, members, scope, vector, when)
    k = min(MAX_K, math.ceil(K * max(total, 1) / len(members)))
    lists = vector_search(db, view.caller, [vector], list(CORPUS_LABELS[corpus]), k, when=when, community=True)
    return [(h.node_id, h.labels, h.vector_score) for h in (lists[0] if lists else [])]


def search_lens(
    db: Database,
    view: MemberView,
    source: str,
    scope: Sequence[str],
    lens: Lens,
    vector: list[float],
    relevancy: dict[str, float],
) -> list[Candidate]:
    """The candidates one lens's document finds in its corpus, inside the scope."""
    visible = visible_member_clause(view, "n", kind="intent" if lens.corpus == "intents" else "member")
    when = both(visible, _scope_rule(lens.corpus, source, scope))
    hits = _hits(db, view, source, scope, lens.corpus, vector, when)
    if not hits:
        return []
    resolved = _resolve(db, view, [h[0] for h in hits], scope)
    out = []
    for node_id, labels, score in hits:
        r = resolved.get(node_id)
        if r is None or r["memberId"] is None:
            continue
        label = next((x for x in labels if x in VIA), "MemberProfile")
        for network in r["networks"]:
            out.append(
                Candidate(
                    source,
                    r["memberId"],
                    network,
                    score,
                    VIA[label],
                    lens.label,
                    node_id if r["isIntent"] else None,
                    r["type"] if r["isIntent"] else None,
                    relevancy.get(network, 0.0),
                )
            )
    return out


def direct_candidates(
    db: Database,
    view: MemberView,
    source: str,
    target: str,
    scope: Sequence[str],
    vector: list[float] | None,
    relevancy: dict[str, float],
) -> list[Candidate]:
    """The named target in each scope network both are active members of (no vector search)."""
    net_guard, profile_guard = node_guard(view.caller, "net"), node_guard(view.caller, "p")
    intent_guard = visible_member_clause(view, "i", kind="intent")
    rows = db.read(
        f"""
        MATCH (net:Network) WHERE net.nodeId IN $scope AND {net_guard.clause}
          AND {active_member("$d_source", "net")} AND {active_member("$d_target", "net")}
        WITH collect(net.nodeId) AS networks
        OPTIONAL MATCH (p:MemberProfile {{accountId: $g_accountId, memberId: $d_target}}) WHERE {profile_guard.clause}
        WITH networks, p, COLLECT {{
            MATCH (i:Intent {{accountId: $g_accountId, memberId: $d_target, status: 'active'}})
            WHERE {intent_guard.clause} RETURN i }} AS intents
        RETURN networks,
          CASE WHEN $vec IS NULL THEN 0.0 ELSE reduce(best = 0.0, x IN
            [v IN [p.embedding] + [i IN intents | i.embedding] WHERE v IS NOT NULL | vector.similarity.cosine(v, $vec)] |
            CASE WHEN x > best THEN x ELSE best END) END AS similarity,
          [i IN intents | [i.intentId, i.type]][0] AS firstIntent
        """,
        scope=list(scope),
        d_source=source,
        d_target=target,
        vec=vector,
        **{**net_guard.params, **profile_guard.params, **intent_guard.params},
    )
    if not rows:
        return []
    row = rows[0]
    # Neo4j's cosine similarity is (1 + cos) / 2; candidates carry cos itself, like the vector path
    similarity = max(0.0, 2.0 * float(row["similarity"]) - 1.0) if vector is not None else 0.0
    intent = row["firstIntent"] or [None, None]
    return [
        Candidate(source, target, n, similarity, "direct", None, intent[0], intent[1], relevancy.get(n, 0.0))
        for n in row["networks"]
    ]
