"""The memory, work and session plugin tools, called directly with ToolContexts against the
real Neo4j: happy paths, bad input (ToolError naming the field, nothing written), pinned
scope/agent/session/account, reports, provenance, secrets, session context, audit queries."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import maxy_plugins.memory
import maxy_plugins.session
import maxy_plugins.work  # noqa: F401
import pytest
import yaml
from maxy.graph.allowlist import INDEXED_LABELS
from maxy.graph.guards import Caller
from maxy.graph.write import Edge, GraphWriter, NodeSpec
from maxy.plugins.api import ToolContext, ToolError, tools_of
from maxy.provenance import produced_by_conversation, tasks_by_kind
from maxy_plugins import memory as mem
from maxy_plugins.session import tools as ses
from maxy_plugins.work import tools as work

PLUGINS = Path(__file__).resolve().parents[2] / "plugins" / "maxy_plugins"


def make_ctx(
    settings,
    db,
    account,
    embedder,
    *,
    role="admin",
    scopes=None,
    agent=None,
    session_id=None,
    session_node_id=None,
    keywords=(),
    plugin="memory",
) -> ToolContext:
    """A context as a server would build it from its (pinned) environment."""
    s = settings.model_copy(
        update={
            "ACCOUNT_ID": account.account_id,
            "ALLOWED_SCOPES": list(scopes) if scopes else None,
            "AGENT_SLUG": agent,
            "SESSION_ID": session_id,
            "SESSION_NODE_ID": session_node_id,
        }
    )
    return ToolContext(
        settings=s,
        role=role,
        caller=Caller.from_settings(s, account.account_id),
        account=account,
        embedder=embedder,
        session_id=session_id,
        session_node_id=session_node_id,
        knowledge_keywords=tuple(keywords),
        plugin=plugin,
        _db=db,
    )


@pytest.fixture()
def admin(settings, db, account, embedder):
    return make_ctx(settings, db, account, embedder)


@pytest.fixture()
def public(settings, db, account, embedder):
    return make_ctx(settings, db, account, embedder, role="public", scopes=("public", "shared"), agent="alpha")


def count(db, account_id, label="Node", where="true", **params) -> int:
    return db.read(
        f"MATCH (n:`{label}`) WHERE n.accountId = $acc AND {where} RETURN count(n) AS c", acc=account_id, **params
    )[0]["c"]


def lines(caplog, prefix):
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(prefix)]


# ---------------------------------------------------------------------------------------
def test_manifests_list_exactly_the_registered_tools_with_matching_annotations():
    for plugin in ("memory", "work", "session"):
        text = (PLUGINS / plugin / "PLUGIN.md").read_text()
        front = yaml.safe_load(text.split("---")[1])
        assert front["name"] == plugin and front["mcp"]["server"] == plugin and front["description"]
        specs = {s.name: s for s in tools_of(f"maxy_plugins.{plugin}")}
        assert set(front["tools"]) == set(specs), plugin
        for name, flags in front["tools"].items():
            assert set(flags) - {"profile"} == {"eager", "adminAllowlist", "publicAllowlist", "readOnly", "destructive"}
            assert flags["readOnly"] == specs[name].read_only and flags["destructive"] == specs[name].destructive
            assert not (flags["publicAllowlist"] and not flags["readOnly"]), f"{name}: public tools are read-only"
            assert specs[name].description
    public = {
        n
        for p in ("memory", "work", "session")
        for n, f in yaml.safe_load((PLUGINS / p / "PLUGIN.md").read_text().split("---")[1])["tools"].items()
        if f["publicAllowlist"]
    }
    assert public == {"memory-search", "memory-get", "conversation-search"}


def test_redact_secrets_uses_schema_tags_nesting_and_secret_key_names():
    schema = {
        "type": "object",
        "properties": {
            "hostname": {"type": "string"},
            "cfToken": {"type": "string", "secret": True},
            "pass": {"type": "string", "format": "password"},
            "hidden": {"type": "string", "x-secret": True},
            "nested": {
                "type": "object",
                "properties": {"key": {"type": "string", "writeOnly": True}, "ok": {"type": "string"}},
            },
            "list": {
                "type": "array",
                "items": {"type": "object", "properties": {"pin": {"type": "string"}, "v": {"type": "integer"}}},
            },
        },
    }
    inputs = {
        "hostname": "a.example",
        "cfToken": "tok",
        "pass": "p",
        "hidden": "h",
        "apiKey": "k",
        "nested": {"key": "s", "ok": "fine"},
        "list": [{"pin": "1234", "v": 1}],
        "tokenCount": 3,
    }
    out = work.redact_secrets(inputs, schema)
    assert out == {
        "hostname": "a.example",
        "cfToken": "[redacted]",
        "pass": "[redacted]",
        "hidden": "[redacted]",
        "apiKey": "[redacted]",
        "nested": {"key": "[redacted]", "ok": "fine"},
        "list": [{"pin": "[redacted]", "v": 1}],
        "tokenCount": "[redacted]",
    }  # substring rule: over-redacts
    assert inputs["cfToken"] == "tok"  # the caller's data is not modified
    assert work.redact_secrets({"a": "x"}, {"a": {"secret": True}}) == {"a": "[redacted]"}  # plain field map
    assert work.redact_secrets({"a": "x"}, None) == {"a": "x"}


# ---------------------------------------------------------------------------------------
def test_memory_write_then_search_and_bad_input_writes_nothing(db, account, admin, public, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    org = mem.memory_write(
        admin, labels=["Organization"], properties={"name": "Acme Heating Ltd", "description": "boiler installers"}
    )
    assert org["created"] and org["labels"] == ["Organization"]
    svc = mem.memory_write(
        admin,
        labels="Service",
        properties={"name": "Boiler repair", "description": "We fix gas boilers"},
        edges=[{"type": "OFFERS", "target": org["nodeId"], "direction": "in"}],
        scope="public",
        agents=["alpha"],
    )
    assert svc["embedded"]
    text = mem.memory_search(admin, "gas boiler repair", limit=5)
    assert text.startswith("[Service] (id: " + svc["nodeId"]) and "(relevance: " in text
    assert "<--[OFFERS]-- [Organization]" in text and "embedding" not in text and "accountId" not in text
    # fields projection narrows the rows, not the related nodes; expandHops=0 is compact
    text = mem.memory_search(admin, "gas boiler repair", limit=1, fields=["name"], expandHops=0)
    assert "  name: Boiler repair" in text and "description" not in text and "Related" not in text
    assert lines(caplog, "[memory-search] accountId=")

    before = count(db, account.account_id)
    bad = [
        (dict(labels=["Nope"], properties={"name": "x"}), "labels"),
        (dict(labels=["Note"], properties={"nested": {"a": 1}}), "properties.nested"),
        (
            dict(labels=["Note"], properties={"name": "x"}, edges=[{"type": "LIKES", "target": org["nodeId"]}]),
            "edges[0].type",
        ),
        (dict(labels=["Note"], properties={"name": "x"}, edges=[{"type": "ABOUT", "target": "missing-node"}]), "edges"),
        (
            dict(
                labels=["Note"],
                properties={"name": "x"},
                edges=[{"type": "ABOUT", "target": org["nodeId"], "direction": "up"}],
            ),
            "edges[0].direction",
        ),
        (dict(labels=["Note"], properties={"name": "x"}, scope="secret"), "scope"),
        (dict(labels=["Note"], properties="x"), "properties"),
    ]
    for kwargs, field in bad:
        with pytest.raises(ToolError) as e:
            mem.memory_write(admin, **kwargs)
        assert str(e.value).startswith(field), (field, str(e.value))
    for kwargs in (
        dict(query=""),
        dict(query="x", limit=0),
        dict(query="x", labels=["Nope"]),
        dict(query="x", expandHops=3),
    ):
        with pytest.raises(ToolError):
            mem.memory_search(admin, **kwargs)
    # the public role cannot write, whatever the arguments
    with pytest.raises(ToolError, match="read-only"):
        mem.memory_write(public, labels=["Note"], properties={"name": "x"})
    with pytest.raises(ToolError, match="read-only"):
        mem.memory_report_write(public, title="t", body="b")
    assert count(db, account.account_id) == before

    # an update by nodeId keeps the node's scope and agents (omitting them never widens it)
    mem.memory_write(admin, labels=["Service"], properties={"price": 90}, nodeId=svc["nodeId"])
    row = db.read(
        "MATCH (n:Node {nodeId: $id}) RETURN n.scope AS s, n.agents AS a, n.name AS name, n.price AS p",
        id=svc["nodeId"],
    )[0]
    assert row == {"s": "public", "a": ["alpha"], "name": "Boiler repair", "p": 90}


def test_public_search_sees_only_public_agent_tagged_same_account_nodes(
    db, account, embedder, settings, admin, public, make_account
):
    w = GraphWriter(db, account, embedder)
    w.write(
        NodeSpec(
            ["Service"],
            {"name": "Boiler repair alpha", "description": "boiler fixing"},
            scope="public",
            agents=["alpha"],
        )
    )
    w.write(
        NodeSpec(
            ["Note"],
            {"name": "Boiler margin secret", "body": "boiler margins are 40%"},
            scope="admin",
            agents=["alpha"],
        )
    )
    w.write(
        NodeSpec(
            ["Service"],
            {"name": "Boiler servicing beta", "description": "boiler check"},
            scope="public",
            agents=["beta"],
        )
    )
    w.write(NodeSpec(["Service"], {"name": "Boiler untagged", "description": "boiler"}, scope="public"))
    w.write(
        NodeSpec(
            ["Article"],
            {"name": "Heating guide", "body": "all about radiators", "keywords": ["heating"]},
            scope="public",
        )
    )
    w.write(
        NodeSpec(
            ["Note"],
            {"name": "Heating costs internal", "body": "radiator costs", "keywords": ["heating"]},
            scope="admin",
        )
    )
    other = make_account("rival")
    GraphWriter(db, other, embedder).write(
        NodeSpec(
            ["Service"], {"name": "Boiler repair rival", "description": "boiler"}, scope="public", agents=["alpha"]
        )
    )

    text = mem.memory_search(public, "boiler", limit=20)
    assert "Boiler repair alpha" in text
    for hidden in ("margin", "beta", "untagged", "rival", "Heating"):
        assert hidden not in text, hidden
    admin_text = mem.memory_search(admin, "boiler", limit=20)
    assert "Boiler margin secret" in admin_text and "rival" not in admin_text
    # keyword subscriptions: scope-inclusive (no agent tag needed), never past the scope filter
    subscribed = make_ctx(
        settings,
        db,
        account,
        embedder,
        role="public",
        scopes=("public", "shared"),
        agent="alpha",
        keywords=("heating",),
    )
    text = mem.memory_search(subscribed, "boiler", limit=20)
    assert "Heating guide" in text and "Heating costs internal" not in text and "beta" not in text
    # pinned account / scopes / agent: any attempt to widen is refused
    for args in ({"accountId": other.account_id}, {"allowedScopes": ["admin"]}, {"agentSlug": "beta"}):
        with pytest.raises(ToolError, match="pinned"):
            public.refuse_widening(args)
    public.refuse_widening({"accountId": account.account_id, "agentSlug": "alpha"})  # the pinned values pass


# ---------------------------------------------------------------------------------------
def test_provenance_task_and_conversation_sources(db, account, embedder, settings, admin, make_account, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    w = GraphWriter(db, account, embedder)
    conv = w.write(NodeSpec(["Conversation", "AdminConversation"], {"sessionId": "sess-prov"}, scope="admin"))
    in_conv = make_ctx(settings, db, account, embedder, session_node_id="sess-prov")
    # fallback: the active conversation is the PRODUCED source
    p = mem.memory_write(in_conv, labels=["Person"], properties={"name": "Ann Fallback"})
    assert p["provenance"] is True
    assert (
        db.read(
            "MATCH (c:Node {nodeId: $c})-[:PRODUCED]->(p:Node {nodeId: $p}) RETURN count(*) AS c",
            c=conv.node_id,
            p=p["nodeId"],
        )[0]["c"]
        == 1
    )
    # producedByTaskId wins over the conversation
    t = work.work_create(in_conv, kind="contact-import", title="Import contacts")
    p2 = mem.memory_write(in_conv, labels=["Person"], properties={"name": "Bob Task"}, producedByTaskId=t["taskId"])
    assert p2["provenance"] is True
    src = db.read("MATCH (s)-[:PRODUCED]->(p:Node {nodeId: $p}) RETURN collect(s.nodeId) AS s", p=p2["nodeId"])[0]["s"]
    assert src == [t["taskId"]]
    # without any source the primitive warns (and writes)
    caplog.clear()
    mem.memory_write(admin, labels=["Person"], properties={"name": "Cy Nobody"})
    assert "[graph-write] warn reason=missing-provenance labels=Person" in caplog.text
    # a Task of another account is refused loudly, nothing written
    other = make_account("other")
    other_task = work.work_create(make_ctx(settings, db, other, embedder), kind="contact-import")
    before = count(db, account.account_id)
    for task_id in (other_task["taskId"], "no-such-task"):
        with pytest.raises(ToolError, match="^producedByTaskId: no Task"):
            mem.memory_write(in_conv, labels=["Person"], properties={"name": "Eve Evil"}, producedByTaskId=task_id)
    assert count(db, account.account_id) == before
    assert "[graph-write] reject reason=not-writable field=producedByTaskId" in caplog.text


# ---------------------------------------------------------------------------------------
@pytest.fixture()
def chats(db, account, embedder, make_account):
    w = GraphWriter(db, account, embedder)
    ids = {}
    for sid, scope, agents in (
        ("sess-a", "public", ["alpha"]),
        ("sess-b", "public", ["alpha"]),
        ("sess-admin", "admin", None),
        ("sess-beta", "public", ["beta"]),
    ):
        c = w.write(NodeSpec(["Conversation"], {"sessionId": sid}, scope=scope, agents=agents))
        ids[sid] = c.node_id
    msgs = [
        ("sess-a", "user", "My boiler is making a loud banging noise", "2026-05-01T10:00:00Z"),
        ("sess-a", "assistant", "A banging boiler often means kettling; book a service.", "2026-05-01T10:00:05Z"),
        ("sess-b", "user", "Do you install solar panels on flat roofs?", "2026-05-02T09:00:00Z"),
        ("sess-b", "user", "My boiler pressure keeps dropping", "2026-05-02T09:01:00Z"),
        ("sess-admin", "user", "Boiler margin for next quarter is 40 percent", "2026-05-03T08:00:00Z"),
        ("sess-beta", "user", "Boiler question from beta's visitor", "2026-05-03T08:30:00Z"),
    ]
    scopes = {
        "sess-a": ("public", ["alpha"]),
        "sess-b": ("public", ["alpha"]),
        "sess-admin": ("admin", None),
        "sess-beta": ("public", ["beta"]),
    }
    for i, (sid, role, content, ts) in enumerate(msgs):
        scope, agents = scopes[sid]
        props = {"role": role, "content": content, "timestamp": ts, "speaker": role}
        if i != 1:  # one message is linked only through HAS_MESSAGE, without its own sessionId
            props["sessionId"] = sid
        w.write(NodeSpec(["Message"], props, scope=scope, agents=agents, edges=[Edge("HAS_MESSAGE", ids[sid], "in")]))
    other = make_account("rival")
    ow = GraphWriter(db, other, embedder)
    oc = ow.write(NodeSpec(["Conversation"], {"sessionId": "sess-a"}, scope="public", agents=["alpha"]))
    ow.write(
        NodeSpec(
            ["Message"],
            {
                "role": "user",
                "content": "Rival boiler banging noise",
                "timestamp": "2026-05-01T10:00:00Z",
                "sessionId": "sess-a",
            },
            scope="public",
            agents=["alpha"],
            edges=[Edge("HAS_MESSAGE", oc.node_id, "in")],
        )
    )
    return ids


def test_conversation_search_admin_session_pinning_and_guards(db, account, embedder, settings, admin, chats, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    text = mem.conversation_search(admin, "boiler making banging noises", limit=10)
    first = text.split("\n---\n")[0]
    assert first.startswith("[user] 2026-05-01T10:00:00Z (session: sess-a) (relevance: ") and "loud banging" in first
    assert "Boiler margin" in text and "Rival" not in text  # admin: all conversations, own account only
    assert (
        "kettling" in text and "(session: sess-a)" in text.split("kettling")[0].rsplit("---", 1)[-1]
    )  # session via HAS_MESSAGE
    assert lines(caplog, "[conversation-search] accountId=")
    # admin may narrow to one session
    one = mem.conversation_search(admin, "boiler", sessionId="sess-b")
    assert "pressure keeps dropping" in one and "banging" not in one
    # a public server pinned to a session: only that conversation, only what its guards allow
    pinned = make_ctx(
        settings, db, account, embedder, role="public", scopes=("public", "shared"), agent="alpha", session_id="sess-a"
    )
    text = mem.conversation_search(pinned, "boiler", limit=10)
    assert "banging" in text and "kettling" in text
    for hidden in ("pressure", "margin", "beta's", "Rival"):
        assert hidden not in text
    with pytest.raises(ToolError, match="^sessionId: SESSION_ID is pinned"):
        mem.conversation_search(pinned, "boiler", sessionId="sess-b")
    assert "banging" in mem.conversation_search(pinned, "boiler", sessionId="sess-a")
    # a public server without a session pin still cannot see admin, other-agent or other-account messages
    public = make_ctx(settings, db, account, embedder, role="public", scopes=("public", "shared"), agent="alpha")
    text = mem.conversation_search(public, "boiler", limit=20)
    assert "pressure" in text and "banging" in text
    for hidden in ("margin", "beta's", "Rival"):
        assert hidden not in text
    # without an embedder: BM25 fallback, same guards
    no_embed = make_ctx(
        settings, db, account, None, role="public", scopes=("public", "shared"), agent="alpha", session_id="sess-b"
    )
    text = mem.conversation_search(no_embed, "boiler pressure")
    assert "pressure" in text and "banging" not in text and "margin" not in text
    for kwargs, field in ((dict(query=""), "query"), (dict(query="x", limit=0), "limit")):
        with pytest.raises(ToolError, match="^" + re.escape(field) + ":"):
            mem.conversation_search(admin, **kwargs)


# ---------------------------------------------------------------------------------------
def test_reports_write_idempotent_limits_provenance_and_reads(db, account, embedder, settings, admin, public, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    before = count(db, account.account_id)
    with pytest.raises(ToolError, match="^body: at most 10,000 characters"):
        mem.memory_report_write(admin, title="Too long", body="x" * 10_001)
    for kwargs, field in (
        (dict(title="", body="b"), "title"),
        (dict(title="t", body="b", occurredAt="yesterday"), "occurredAt"),
        (dict(title="t", body="b", keywords=[""]), "keywords[0]"),
    ):
        with pytest.raises(ToolError, match="^" + re.escape(field)):
            mem.memory_report_write(admin, **kwargs)
    assert count(db, account.account_id) == before

    r1 = mem.memory_report_write(
        admin,
        title="Daily briefing 2026-05-06",
        body="Yesterday: 3 leads.",
        keywords=["daily-briefing", "2026-05-06"],
        sourceWorkflow="daily-briefing",
        occurredAt="2026-05-06T06:00:10Z",
    )
    assert r1["idempotent"] is False
    write_line = lines(caplog, "[reports] op=write")[-1]
    assert (
        f"reportId={r1['reportId'][:8]}" in write_line
        and "keywords=daily-briefing,2026-05-06" in write_line
        and "ms=" in write_line
    )
    # same title, same minute, same body -> the existing node unchanged, idempotent=1 in the log
    again = mem.memory_report_write(
        admin, title="Daily briefing 2026-05-06", body="Yesterday: 3 leads.", occurredAt="2026-05-06T06:00:50Z"
    )
    assert again == {**again, "reportId": r1["reportId"], "idempotent": True}
    assert "idempotent=1" in lines(caplog, "[reports] op=write")[-1]
    assert count(db, account.account_id, "Report") == 1
    stored = db.read(
        "MATCH (r:Report {nodeId: $id}) RETURN r.body AS body, r.embedding IS NOT NULL AS emb, r.scope AS scope",
        id=r1["reportId"],
    )[0]
    assert stored["body"] == "Yesterday: 3 leads." and stored["scope"] == "admin"
    if "Report" in INDEXED_LABELS:
        assert stored["emb"]
    # no conversation: PRODUCED from the account's AdminUser, created by the system agent
    src = db.read(
        "MATCH (u)-[:PRODUCED]->(r:Report {nodeId: $id}) RETURN labels(u) AS l, u.createdBy AS by", id=r1["reportId"]
    )
    assert src == [{"l": ["Node", "AdminUser"], "by": "system"}] or (
        src[0]["by"] == "system" and "AdminUser" in src[0]["l"]
    )
    # with an active conversation: PRODUCED from it; a later minute makes a new report
    conv = GraphWriter(db, account, embedder).write(
        NodeSpec(["Conversation"], {"sessionId": "sess-rep"}, scope="admin")
    )
    in_conv = make_ctx(settings, db, account, embedder, session_node_id="sess-rep")
    r2 = mem.memory_report_write(
        in_conv,
        title="Daily briefing 2026-05-07",
        body="Today: 5 leads.",
        keywords=["daily-briefing", "2026-05-07"],
        sourceWorkflow="daily-briefing",
        occurredAt="2026-05-07T06:00:00Z",
    )
    mem.memory_report_write(
        in_conv,
        title="Dream cycle",
        body="Consolidated 12 notes.",
        keywords=["dream-cycle"],
        sourceWorkflow="dream-cycle",
    )
    assert (
        db.read(
            "MATCH (c:Node {nodeId: $c})-[:PRODUCED]->(r:Report {nodeId: $r}) RETURN count(*) AS n",
            c=conv.node_id,
            r=r2["reportId"],
        )[0]["n"]
        == 1
    )
    assert count(db, account.account_id, "AdminUser") == 1

    latest = mem.memory_report_read_latest(admin, "Daily-Briefing")
    assert [r["reportId"] for r in latest["reports"]] == [r2["reportId"]] and latest["reports"][0][
        "body"
    ] == "Today: 5 leads."
    assert "hits=1" in lines(caplog, "[reports] op=read-latest")[-1]
    assert [r["title"] for r in mem.memory_report_read_latest(admin, "daily-briefing", limit=5)["reports"]] == [
        "Daily briefing 2026-05-07",
        "Daily briefing 2026-05-06",
    ]
    listing = mem.memory_report_list(admin, sourceWorkflow="daily-briefing", limit=1, offset=1)
    assert listing["total"] == 2 and [r["reportId"] for r in listing["reports"]] == [r1["reportId"]]
    assert "body" not in listing["reports"][0] and listing["reports"][0]["bodyChars"] == len("Yesterday: 3 leads.")
    assert mem.memory_report_list(admin)["total"] == 3
    assert "total=3" in lines(caplog, "[reports] op=list")[-1]
    # reports are admin-scoped: a public context reads nothing
    assert mem.memory_report_read_latest(public, "daily-briefing")["reports"] == []
    assert mem.memory_report_list(public)["total"] == 0
    assert "Yesterday" not in mem.memory_search(public, "daily briefing leads")
    with pytest.raises(ToolError, match="^limit"):
        mem.memory_report_list(admin, limit=0)


# ---------------------------------------------------------------------------------------
def test_work_tasks_lifecycle_secrets_and_audit_queries(db, account, embedder, settings, make_account, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    conv = GraphWriter(db, account, embedder).write(
        NodeSpec(["Conversation", "AdminConversation"], {"sessionId": "sess-work"}, scope="admin")
    )
    ctx = make_ctx(settings, db, account, embedder, plugin="work")
    schema = {
        "properties": {
            "hostname": {"type": "string"},
            "apiToken": {"type": "string", "secret": True},
            "pw": {"format": "password"},
        }
    }
    t = work.work_create(
        ctx,
        kind="cloudflare-tunnel-login",
        title="Log in to Cloudflare",
        inputs={"hostname": "shop.example", "apiToken": "cf-SECRET-123", "pw": "hunter2", "zones": ["a", "b"]},
        inputSchema=schema,
        inputsProvided={"hostname": True, "apiToken": "cf-SECRET-123"},
        raisedDuringConversationKey="sess-work",
        priority="high",
    )
    row = db.read(
        "MATCH (t:Task {nodeId: $id})-[:RAISED_DURING]->(c) RETURN properties(t) AS p, c.nodeId AS c", id=t["taskId"]
    )[0]
    p = row["p"]
    assert (
        row["c"] == conv.node_id
        and p["status"] == "running"
        and p["kind"] == "cloudflare-tunnel-login"
        and p["priority"] == 2
    )
    assert (
        p["inputs_hostname"] == "shop.example"
        and p["inputs_apiToken"] == "[redacted]"
        and p["inputs_pw"] == "[redacted]"
    )
    assert p["inputs_zones"] == ["a", "b"] and p["taskId"] == t["taskId"]
    assert (
        "cf-SECRET-123" not in json.dumps(p, default=str)
        and "hunter2" not in caplog.text
        and "cf-SECRET" not in caplog.text
    )
    assert f"[task] action-start kind=cloudflare-tunnel-login taskId={t['taskId'][:8]}" in caplog.text

    before = count(db, account.account_id)
    for kwargs, field in (
        (dict(kind="Bad Kind"), "kind"),
        (dict(kind="k", inputs="x"), "inputs"),
        (dict(kind="k", raisedDuringConversationKey="no-such-session"), "raisedDuringConversationKey"),
        (dict(kind="k", priority=9), "priority"),
        (dict(kind="k", inputs={"a.b": 1}), "inputs.a.b"),
    ):
        with pytest.raises(ToolError, match="^" + re.escape(field)):
            work.work_create(ctx, **kwargs)
    assert count(db, account.account_id) == before

    work.work_update(ctx, t["taskId"], step="creating tunnel", note="waiting for browser login")
    work.work_update(ctx, t["taskId"], status="waiting")
    assert "[task] step kind=cloudflare-tunnel-login" in caplog.text
    with pytest.raises(ToolError, match="^status"):
        work.work_update(ctx, t["taskId"], status="completed")
    with pytest.raises(ToolError, match="^taskId"):
        work.work_update(ctx, "nope", step="x")

    w = GraphWriter(db, account, embedder)
    tunnel = w.write(
        NodeSpec(
            ["CloudflareTunnel"],
            {"name": "shop tunnel", "tunnelId": "tun-1"},
            edges=[Edge("PRODUCED", t["taskId"], "in")],
        )
    )
    host = w.write(NodeSpec(["CloudflareHostname"], {"hostnameValue": "shop.example"}))
    other = make_account("other")
    alien = GraphWriter(db, other, embedder).write(NodeSpec(["Note"], {"name": "alien"}))
    with pytest.raises(ToolError, match="^producedNodeIds"):
        work.work_complete(ctx, t["taskId"], producedNodeIds=[host.node_id, alien.node_id])
    assert db.read("MATCH (t:Task {nodeId: $id}) RETURN t.status AS s", id=t["taskId"])[0]["s"] == "waiting"
    done = work.work_complete(ctx, t["taskId"], producedNodeIds=[tunnel.node_id, host.node_id])
    assert done["status"] == "completed"
    props = db.read("MATCH (t:Task {nodeId: $id}) RETURN properties(t) AS p", id=t["taskId"])[0]["p"]
    assert (
        props["stepCount"] == 1
        and props["notes"] == ["waiting for browser login"]
        and props["completedAt"]
        and props["inputs_apiToken"] == "[redacted]"
    )
    assert (
        f"[task] done kind=cloudflare-tunnel-login taskId={t['taskId'][:8]} status=completed produced=2" in caplog.text
    )

    # audit: what did the conversation's actions produce; tasks by kind
    direct = mem.memory_write(
        make_ctx(settings, db, account, embedder, session_node_id="sess-work"),
        labels=["Note"],
        properties={"name": "direct note"},
    )
    caller = Caller(account.account_id)
    rows = produced_by_conversation(db, caller, "sess-work")
    by_node = {r["nodeId"]: r for r in rows}
    assert set(by_node) == {tunnel.node_id, host.node_id, direct["nodeId"]}
    assert (
        by_node[tunnel.node_id]["kind"] == "cloudflare-tunnel-login"
        and by_node[tunnel.node_id]["status"] == "completed"
    )
    assert (
        by_node[host.node_id]["labels"] == ["CloudflareHostname"] and by_node[direct["nodeId"]]["via"] == "conversation"
    )
    assert produced_by_conversation(db, Caller(other.account_id), "sess-work") == []
    tasks = tasks_by_kind(db, caller, "cloudflare-tunnel-login", status="completed")
    assert [x["taskId"] for x in tasks] == [t["taskId"]]
    assert {e["tunnelId"] for e in tasks[0]["produced"]} == {"tun-1", None}
    assert {e["hostnameValue"] for e in tasks[0]["produced"]} == {"shop.example", None}
    assert tasks_by_kind(db, caller, "cloudflare-tunnel-login", status="failed") == []
    assert tasks_by_kind(db, Caller(other.account_id), "cloudflare-tunnel-login") == []


def test_audit_and_session_cli(db, account, embedder, settings, data_root, monkeypatch):
    import typer
    from maxy.provenance import cli as provenance_cli
    from typer.testing import CliRunner

    ctx = make_ctx(settings, db, account, embedder)
    t = work.work_create(ctx, kind="brand-publish", title="Publish brand")
    note = mem.memory_write(ctx, labels=["Note"], properties={"name": "published page"})
    work.work_complete(ctx, t["taskId"], producedNodeIds=[note["nodeId"]])
    monkeypatch.setenv("ACCOUNT_ID", account.account_id)
    monkeypatch.setenv("DATA_ROOT", str(data_root))
    for name in ("ALLOWED_SCOPES", "AGENT_SLUG", "SESSION_ID", "SESSION_NODE_ID"):
        monkeypatch.delenv(name, raising=False)
    app = typer.Typer()
    provenance_cli.register(app)
    maxy_plugins.session.register_commands(app)
    runner = CliRunner()
    res = runner.invoke(app, ["audit", "tasks", "--kind", "brand-publish", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)[0]["produced"][0]["nodeId"] == note["nodeId"]
    res = runner.invoke(app, ["audit", "produced", "--conversation", "none-such", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout) == []
    res = runner.invoke(app, ["session", "context", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [x["taskId"] for x in data["openTasks"]] == [] and data["text"] == ""


# ---------------------------------------------------------------------------------------
def test_session_compact_and_context_contents_and_caps(db, account, embedder, settings, make_account, caplog):
    caplog.set_level(logging.INFO, logger="maxy")
    ctx = make_ctx(settings, db, account, embedder, session_node_id="sess-compact", plugin="session")
    assert ses.session_context(ctx) == ""
    assert ses.session_context_tool(ctx).startswith("No previous context")
    with pytest.raises(ToolError, match="^asked"):
        ses.session_compact(ctx, asked="", done="", decisions=[], workInProgress="", aboutUser="")
    with pytest.raises(ToolError, match="^done"):
        ses.session_compact(ctx, asked="x", done=[1], decisions="", workInProgress="", aboutUser="")
    assert count(db, account.account_id) == 0
    no_session = make_ctx(settings, db, account, embedder)
    with pytest.raises(ToolError, match="^SESSION_NODE_ID"):
        ses.session_compact(no_session, asked="x", done="y", decisions="z", workInProgress="w", aboutUser="u")

    out = ses.session_compact(
        ctx,
        asked="Plan the spring campaign",
        done=["Drafted 3 emails", "Booked the venue"],
        decisions="Send on Tuesdays",
        workInProgress="Email 3 needs a subject line",
        aboutUser="Prefers short replies",
    )
    assert out["created"] is True and out["sessionId"] == "sess-compact"
    conv = db.read("MATCH (c:Conversation {sessionId: 'sess-compact'}) RETURN properties(c) AS p, labels(c) AS l")
    assert len(conv) == 1 and conv[0]["p"]["createdBy"] == "system" and "AdminConversation" in conv[0]["l"]
    assert json.loads(conv[0]["p"]["briefing"])["decisions"] == "Send on Tuesdays" and conv[0]["p"]["compactedAt"]
    again = ses.session_compact(
        ctx,
        asked="Plan the spring campaign",
        done="Drafted 3 emails",
        decisions="Send on Tuesdays",
        workInProgress="Subject line chosen",
        aboutUser="Prefers short replies",
    )
    assert again["created"] is False and again["conversationId"] == out["conversationId"]

    w = GraphWriter(db, account, embedder)
    now = datetime.now(UTC)
    w.write(
        NodeSpec(
            ["CreativeWork"],
            {
                "kind": "review-digest",
                "title": "Old digest",
                "body": "old",
                "occurredAt": (now - timedelta(days=3)).isoformat(),
            },
        )
    )
    w.write(
        NodeSpec(
            ["CreativeWork"],
            {
                "kind": "review-digest",
                "title": "Weekly review digest",
                "body": "2 complaints about wait times",
                "occurredAt": (now - timedelta(hours=2)).isoformat(),
            },
        )
    )
    for i in range(12):
        w.write(
            NodeSpec(
                ["Task"],
                {"kind": "follow-up", "title": f"Task {i:02d}", "status": "running", "priority": 1 if i == 7 else 3},
            )
        )
    w.write(NodeSpec(["Task"], {"kind": "follow-up", "title": "Finished task", "status": "completed", "priority": 1}))
    for i in range(7):
        w.write(
            NodeSpec(
                ["Alert"],
                {
                    "title": f"Alert {i}",
                    "severity": "warning",
                    "occurredAt": (now - timedelta(hours=i + 1)).isoformat(),
                },
            )
        )
    w.write(NodeSpec(["Alert"], {"title": "Stale alert", "occurredAt": (now - timedelta(hours=30)).isoformat()}))
    w.write(NodeSpec(["Alert"], {"title": "Suppressed alert", "suppressed": True, "occurredAt": now.isoformat()}))
    other = make_account("other")
    GraphWriter(db, other, embedder).write(
        NodeSpec(["Task"], {"title": "Alien task", "status": "running", "priority": 1})
    )

    text = ses.session_context_tool(ctx)
    assert text.startswith("<previous-context>\n") and text.endswith("</previous-context>")
    assert (
        "## Briefing" in text
        and "this conversation" in text
        and "Subject line chosen" in text
        and "Prefers short replies" in text
    )
    assert "Weekly review digest" in text and "Old digest" not in text
    task_lines = [ln for ln in text.splitlines() if ln.startswith("- [P")]
    assert len(task_lines) == 10 and "Task 07" in task_lines[0] and "Open tasks (10 of 12" in text
    assert "Finished task" not in text and "Alien task" not in text
    alert_lines = [ln for ln in text.splitlines() if ln.startswith("- [warning]")]
    assert [ln.split(" (")[0] for ln in alert_lines] == [f"- [warning] Alert {i}" for i in range(5)]
    assert "Stale alert" not in text and "Suppressed alert" not in text
    assert lines(caplog, "[session] op=context")[-1].count("tasks=10 alerts=5") == 1
    # the public role cannot compact
    public = make_ctx(
        settings, db, account, embedder, role="public", scopes=("public",), session_node_id="sess-compact"
    )
    with pytest.raises(ToolError, match="read-only"):
        ses.session_compact(public, asked="x", done="y", decisions="z", workInProgress="w", aboutUser="u")


# ---------------------------------------------------------------------------------------
def test_ingest_delete_reindex(db, account, admin, public, tmp_path, monkeypatch):
    doc = tmp_path / "boilers.md"
    doc.write_text(
        "# Boiler guide\n\n## Pressure\n\nIf the boiler pressure drops below one bar, repressurise it at the filling loop.\n"
    )
    res = mem.memory_ingest(admin, paths=[str(doc)], attachmentId="att-boiler", scope="admin")
    assert res["written"] == 1 and res["documents"][0]["chunks"] >= 1
    assert "Boiler guide" in mem.memory_search(admin, "boiler pressure filling loop", limit=5)
    with pytest.raises(ToolError, match=r"^paths\[0\]"):
        mem.memory_ingest(admin, paths=[str(tmp_path / "missing.md")])
    monkeypatch.setenv("MAXY_CONFIG_DIR", str(tmp_path))
    with pytest.raises(ToolError, match=r"^paths\[0\]: the Maxy configuration folder"):
        mem.memory_ingest(admin, paths=[str(doc)])
    with pytest.raises(ToolError, match="read-only"):
        mem.memory_delete(public, "att-boiler")
    assert mem.memory_delete(admin, "att-boiler")["deleted"] >= 3
    assert "Boiler guide" not in mem.memory_search(admin, "boiler pressure filling loop", limit=5)
    assert mem.memory_delete(admin, "att-boiler")["alreadyDeleted"] is True
    with pytest.raises(ToolError, match="^attachmentId"):
        mem.memory_delete(admin, "att-none")
    summary = mem.memory_reindex(admin)
    assert summary["remaining"] == 0 and summary["failed"] == 0
    with pytest.raises(ToolError, match="^labels"):
        mem.memory_reindex(admin, labels=["Nope"])
