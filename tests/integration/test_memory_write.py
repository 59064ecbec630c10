"""Writing memories (``maxy.memory.remember``) against the real Neo4j: writes mean what they say,
entities resolve by canonical name inside the caller's view, facts supersede one another
without being deleted, searches see what was true (now, as of an instant, or all history) and
an exact name puts its node first."""

from __future__ import annotations

import pytest
from maxy.errors import GraphWriteError, ValidationError
from maxy.graph.guards import Caller
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.memory.remember import MAX_NODE_CHARS, MAX_VALUE_CHARS, MemoryWrite, remember
from maxy.search import SearchRequest, hybrid


@pytest.fixture()
def writer(db, account, embedder) -> GraphWriter:
    return GraphWriter(db, account, embedder, created_by="test")


def write(w: GraphWriter, labels, props, **kw) -> dict:
    return remember(w, MemoryWrite(labels, props, **kw))


def node(db, node_id: str) -> dict:
    rows = db.read("MATCH (n:Node {nodeId: $id}) RETURN properties(n) AS p, labels(n) AS l", id=node_id)
    return {**rows[0]["p"], "_labels": rows[0]["l"]}


def ids(db, account, query: str, *, embedder=None, limit: int = 10, **kw) -> list[str]:
    request = SearchRequest(query, limit=limit, expand_hops=0, **kw)
    return [h.node_id for h in hybrid(db, Caller(account.account_id), request, embedder).hits]


# -- writes mean what they say ------------------------------------------------------------
def test_a_missing_node_id_is_refused_not_created(db, writer):
    with pytest.raises(ValidationError, match=r"^nodeId: no node 'no-such-node' that you can write"):
        write(writer, ["Note"], {"text": "x"}, node_id="no-such-node")
    assert not db.read("MATCH (n:Node {nodeId: 'no-such-node'}) RETURN n")


@pytest.mark.parametrize("props", [{}, {"name": ""}, {"name": "  ", "tags": []}, {"validFrom": "2024-01-01"}])
def test_a_node_with_nothing_meaningful_is_refused(writer, props):
    with pytest.raises(ValidationError, match=r"^properties: nothing to remember"):
        write(writer, ["Note"], props)


def test_size_limits_name_the_field(db, writer, account):
    with pytest.raises(ValidationError, match=r"^properties\.body: 20,001 characters; at most 20,000 per value"):
        write(writer, ["Note"], {"name": "big", "body": "x" * (MAX_VALUE_CHARS + 1)})
    many = {f"p{i}": "y" * MAX_VALUE_CHARS for i in range(MAX_NODE_CHARS // MAX_VALUE_CHARS + 1)}
    with pytest.raises(ValidationError, match=r"^properties: .* at most 100,000 per node"):
        write(writer, ["Note"], many)
    assert not db.read("MATCH (n:Node {accountId: $a}) RETURN n", a=account.account_id)


def test_validity_times_are_checked_and_stored_as_utc(db, writer):
    with pytest.raises(ValidationError, match=r"^properties\.validFrom: 'last tuesday' is not an ISO 8601"):
        write(writer, ["Fact"], {"text": "x", "validFrom": "last tuesday"})
    with pytest.raises(ValidationError, match=r"^properties\.validUntil: must be later than validFrom"):
        write(writer, ["Fact"], {"text": "x", "validFrom": "2024-02-01", "validUntil": "2024-01-01"})
    out = write(writer, ["Fact"], {"text": "Ada joined Initech", "validFrom": "2024-03-01T10:00:00+02:00"})
    stored = node(db, out["nodeId"])
    assert stored["validFrom"] == "2024-03-01T08:00:00+00:00"
    assert stored["dateText"] == "1 March 2024"


# -- entity resolution ------------------------------------------------------------------------
def test_the_same_organisation_written_twice_resolves_to_one_node(db, writer, account):
    first = write(writer, ["Organization"], {"name": "Globex Corporation", "description": "Maker of widgets"})
    again = write(writer, ["Organization"], {"name": "globex  corporation!", "url": "https://globex.example"})
    short = write(writer, ["Organization"], {"name": "Globex Corp."})
    assert first["created"] and first["resolved"] is None
    assert again["resolved"] == short["resolved"] == first["nodeId"]
    assert not again["created"]
    stored = node(db, first["nodeId"])
    assert stored["name"] == "Globex Corporation", "the first name stays"
    assert stored["alternateName"] == ["globex  corporation!", "Globex Corp."], "other spellings become aliases"
    assert stored["description"] == "Maker of widgets" and stored["url"] == "https://globex.example"
    count = db.read("MATCH (n:Organization {accountId: $a}) RETURN count(n) AS c", a=account.account_id)
    assert count[0]["c"] == 1


def test_merge_rules_for_values_lists_labels_and_edges(db, writer):
    target = write(writer, ["Project"], {"name": "Phoenix"})["nodeId"]
    ada = write(writer, ["Person"], {"name": "Ada Lovelace", "jobTitle": "analyst", "skills": ["maths"]})["nodeId"]
    merged = write(
        writer,
        ["Person"],
        {"name": "ADA LOVELACE", "jobTitle": "engineer", "skills": ["poetry", "maths"]},
        edges=[Edge("MEMBER_OF", target)],
    )
    assert merged["resolved"] == ada
    stored = node(db, ada)
    assert stored["jobTitle"] == "engineer", "a newer value replaces the stored one"
    assert stored["skills"] == ["maths", "poetry"], "lists are united"
    edges = db.read(
        "MATCH (:Node {nodeId: $a})-[r:MEMBER_OF]->(:Node {nodeId: $t}) RETURN count(r) AS c", a=ada, t=target
    )
    assert edges[0]["c"] == 1
    write(writer, ["Person"], {"name": "Ada Lovelace"}, edges=[Edge("MEMBER_OF", target)])
    edges = db.read("MATCH (:Node {nodeId: $a})-[r:MEMBER_OF]->() RETURN count(r) AS c", a=ada)
    assert edges[0]["c"] == 1, "an edge that already exists is not doubled"


def test_aliases_resolve_and_resolve_false_always_creates(writer):
    first = write(writer, ["Person"], {"name": "Robert Tables", "alternateName": "Bobby"})
    assert write(writer, ["Person"], {"name": "bobby"})["resolved"] == first["nodeId"]
    assert write(writer, ["Person"], {"name": "Bob", "aliases": ["Robert Tables"]})["resolved"] == first["nodeId"]
    separate = write(writer, ["Person"], {"name": "Robert Tables"}, resolve=False)
    assert separate["created"] and separate["resolved"] is None and separate["nodeId"] != first["nodeId"]


def test_resolution_needs_the_same_entity_label(writer):
    project = write(writer, ["Project"], {"name": "Phoenix"})
    place = write(writer, ["Place"], {"name": "Phoenix"})
    note = write(writer, ["Note"], {"name": "Phoenix"})
    assert place["resolved"] is None and place["nodeId"] != project["nodeId"]
    assert note["resolved"] is None, "notes are not entities: they never merge"
    assert write(writer, ["Note"], {"name": "Phoenix"})["nodeId"] != note["nodeId"]


def test_resolution_stays_inside_the_callers_view(db, account, embedder):
    admin = GraphWriter(db, account, embedder, created_by="test")
    hidden = write(admin, ["Person"], {"name": "Grace Hopper"}, scope="admin")
    public = GraphWriter(db, account, embedder, caller=Caller(account.account_id, ("public",)), created_by="test")
    mine = write(public, ["Person"], {"name": "Grace Hopper"})
    assert mine["resolved"] is None and mine["nodeId"] != hidden["nodeId"], "a hidden node is never merged into"
    assert node(db, mine["nodeId"])["scope"] == "public"
    assert write(public, ["Person"], {"name": "grace hopper"})["resolved"] == mine["nodeId"]


# -- time: supersede, asOf, history, after / before --------------------------------------------
def test_a_job_change_supersedes_the_old_fact(db, writer, account, embedder):
    old = write(writer, ["Fact"], {"text": "Ada works at Globex as an analyst", "validFrom": "2021-01-01"})
    new = write(
        writer,
        ["Fact"],
        {"text": "Ada works at Initech as an engineer", "validFrom": "2024-06-01"},
        supersede=[old["nodeId"]],
    )
    assert new["superseded"] == [old["nodeId"]]
    stored = node(db, old["nodeId"])
    assert stored["validUntil"] == "2024-06-01T00:00:00+00:00" and stored.get("deletedAt") is None
    chain = db.read(
        "MATCH (:Node {nodeId: $o})-[r:SUPERSEDED_BY]->(:Node {nodeId: $n}) RETURN count(r) AS c",
        o=old["nodeId"],
        n=new["nodeId"],
    )
    assert chain[0]["c"] == 1
    q = "Where does Ada work?"
    now = ids(db, account, q, embedder=embedder)
    assert new["nodeId"] in now and old["nodeId"] not in now, "a superseded fact is hidden by default"
    then = ids(db, account, q, as_of="2022-05-01", embedder=embedder)
    assert old["nodeId"] in then and new["nodeId"] not in then, "asOf returns what was true then"
    both = ids(db, account, q, include_history=True, embedder=embedder)
    assert {old["nodeId"], new["nodeId"]} <= set(both)
    with pytest.raises(ValidationError, match=r"^supersede: .* already stopped being true"):
        write(writer, ["Fact"], {"text": "Ada works at Hooli"}, supersede=old["nodeId"])


def test_supersede_refusals(db, writer, account):
    fact = write(writer, ["Fact"], {"text": "Ada lives in Leeds", "validFrom": "2023-01-01"})
    with pytest.raises(ValidationError, match=r"^supersede: .* not before the new fact's validFrom"):
        write(writer, ["Fact"], {"text": "Ada lives in York", "validFrom": "2022-01-01"}, supersede=[fact["nodeId"]])
    with pytest.raises(GraphWriteError, match=r"^supersede: no node 'nope' that you can write"):
        write(writer, ["Fact"], {"text": "Ada lives in York"}, supersede=["nope"])
    assert node(db, fact["nodeId"]).get("validUntil") is None, "a refused supersede changes nothing"
    count = db.read("MATCH (n:Fact {accountId: $a}) RETURN count(n) AS c", a=account.account_id)
    assert count[0]["c"] == 1


def test_after_and_before_filter_by_when_it_happened(db, writer, account):
    early = write(writer, ["Fact"], {"text": "Quarterly review of the boiler", "validFrom": "2023-01-10"})
    late = write(writer, ["Fact"], {"text": "Quarterly review of the boiler again", "validFrom": "2023-09-10"})
    q = "quarterly review boiler"
    assert set(ids(db, account, q)) == {early["nodeId"], late["nodeId"]}
    assert ids(db, account, q, after="2023-06-01") == [late["nodeId"]]
    assert ids(db, account, q, before="2023-06-01") == [early["nodeId"]]
    with pytest.raises(ValidationError, match=r"^before: must be later than after"):
        ids(db, account, q, after="2023-06-01", before="2023-01-01")
    with pytest.raises(ValidationError, match=r"^after: 'June' is not an ISO 8601"):
        ids(db, account, q, after="June")


# -- finding what was written ----------------------------------------------------------------
def test_an_organisation_is_found_by_meaning_and_its_people_through_it(db, writer, account, embedder):
    org = write(writer, ["Organization"], {"name": "Globex", "description": "An industrial conglomerate"})
    person = write(
        writer, ["Person"], {"name": "Hank Scorpio", "jobTitle": "CEO"}, edges=[Edge("WORKS_FOR", org["nodeId"])]
    )
    for i in range(30):
        write(writer, ["Note"], {"text": f"Unrelated note {i} about gardening and tomatoes"})
    top = ids(db, account, "Who works at Globex?", limit=3, embedder=embedder)
    assert org["nodeId"] in top and person["nodeId"] in top


def test_an_exact_unique_name_ranks_first_among_hundreds_of_similar_nodes(db, writer, account, embedder):
    names = [f"Widget calibration term WX-{i:03d}" for i in range(300)]
    written = writer.write_many(
        [NodeSpec(["DefinedTerm"], {"name": n, "description": "A calibration step for widget lines"}) for n in names]
    )
    by_name = dict(zip(names, (r.node_id for r in written), strict=True))
    for name in ("Widget calibration term WX-123", "widget calibration term wx 007", "WIDGET CALIBRATION TERM WX-299"):
        top = ids(db, account, name, limit=10, embedder=embedder)
        want = by_name[next(n for n in names if n.lower().replace("-", " ") == name.lower().replace("-", " "))]
        assert top[0] == want, name


def test_reindex_backfills_nodes_written_before_every_label_was_indexed(db, account, embedder):
    from maxy.search.reindex import reindex

    db.write(
        """
        CREATE (:Node:Organization {nodeId: 'legacy-org', accountId: $a, name: 'Vandelay Industries Inc.',
                                    description: 'Importer and exporter of latex goods'})
        CREATE (:Node:Fact {nodeId: 'legacy-fact', accountId: $a, text: 'Art imports chips', validFrom: '2020-02-03'})
        """,
        a=account.account_id,
    )
    summary = reindex(db, account, embedder)
    assert summary["keyed"] == 2 and summary["embedded"] == 2 and summary["remaining"] == 0
    org, fact = node(db, "legacy-org"), node(db, "legacy-fact")
    assert org["nameKey"] == "vandelay industries inc" and org["aliasKeys"] == ["vandelay industries"]
    assert fact["dateText"] == "3 February 2020" and len(fact["embedding"]) == embedder.dimensions
    assert ids(db, account, "latex importers", embedder=embedder, labels=("Organization",)) == ["legacy-org"]
    assert reindex(db, account, embedder)["keyed"] == 0, "a second run has nothing left to do"


def test_conversation_search_keeps_the_window(db, account, embedder):
    from maxy.conversations import search_messages
    from maxy.conversations.append import append_turn

    writer = GraphWriter(db, account, embedder, created_by="test")
    append_turn(writer, "w-1", role="user", content="The boiler pressure dropped", timestamp="2024-01-10T09:00:00Z")
    append_turn(
        writer, "w-1", role="user", content="The boiler pressure dropped again", timestamp="2024-03-10T09:00:00Z"
    )
    caller = Caller(account.account_id)

    def sent(**window) -> list[str]:
        return [r["timestamp"][:10] for r in search_messages(db, caller, embedder, "boiler pressure", **window)]

    assert sorted(sent()) == ["2024-01-10", "2024-03-10"]
    assert sent(after="2024-02-01") == ["2024-03-10"]
    assert sent(before="2024-02-01") == ["2024-01-10"]
