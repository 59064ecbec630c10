"""An agent's knowledge snapshot against the real Neo4j: the public nodes tagged for it,
broadened by its keyword subscriptions, never an admin-scoped (or unscoped, or other account's,
or deleted, or operational) node; the summary by Claude through the fake Messages API, else
extracted; hand-written files kept unless --force; the CLI."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from maxy.agents import AgentConfig, create_agent, update_agent
from maxy.agents.context import knowledge_file
from maxy.agents.knowledge import HEADER, build_knowledge, gather
from maxy.config import load_settings
from maxy.errors import ValidationError
from maxy.graph.write import GraphWriter, NodeSpec

from tests.cli_inprocess import maxy
from tests.fake_anthropic import FakeAnthropic
from tests.hypothesis_profile import examples
from tests.plugins_fixture.helpers import child_env


def _folder(data_root: Path, account_id: str, slug: str) -> Path:
    return data_root / "accounts" / account_id / "agents" / slug


def _seed(db, account, other, embedder) -> dict[str, str]:
    """One node per case; returns name -> nodeId."""
    writer = GraphWriter(db, account, embedder, created_by="test")
    cases = {
        "tagged-public": NodeSpec(
            ["Service"],
            {"name": "Gutter cleaning", "description": "We clean gutters every spring. Ladders included."},
            scope="public",
            agents=["concierge"],
        ),
        "tagged-shared": NodeSpec(
            ["Fact"], {"text": "Shared partner discount of ten percent"}, scope="shared", agents=["concierge"]
        ),
        "tagged-admin": NodeSpec(
            ["Fact"], {"text": "Gutter pricing margin is forty percent"}, scope="admin", agents=["concierge"]
        ),
        "keyword-text": NodeSpec(
            ["Product"],
            {"name": "Copper gutter guard", "price": "49 EUR", "sourcePath": "/home/op/x.md"},
            scope="public",
        ),
        "keyword-tag": NodeSpec(["Place"], {"name": "Depot North", "keywords": ["Gutters"]}, scope="public"),
        "keyword-admin": NodeSpec(["Fact"], {"text": "Gutter supplier contract is confidential"}, scope="admin"),
        "other-agent": NodeSpec(["Service"], {"name": "Window washing"}, scope="public", agents=["someone-else"]),
        "untagged": NodeSpec(["Service"], {"name": "Roof repair"}, scope="public"),
        "tagged-message": NodeSpec(
            ["Message"], {"text": "visitor asked about gutters", "role": "user"}, scope="public", agents=["concierge"]
        ),
        "deleted": NodeSpec(["Fact"], {"text": "Gutter offer withdrawn"}, scope="public", agents=["concierge"]),
        "tagged-task-project": NodeSpec(
            ["Project", "Task"], {"name": "Internal gutter rota"}, scope="public", agents=["concierge"]
        ),
    }
    ids = {name: writer.write(spec).node_id for name, spec in cases.items()}
    db.write("MATCH (n:Node {nodeId: $id}) SET n.deletedAt = datetime()", id=ids["deleted"])
    GraphWriter(db, other, embedder, created_by="test").write(
        NodeSpec(["Fact"], {"text": "Other account gutter secrets"}, scope="public", agents=["concierge"])
    )
    return ids


def test_the_snapshot_holds_tagged_and_subscribed_public_nodes_only(
    db, account, make_account, data_root: Path, embedder, monkeypatch, caplog
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    ids = _seed(db, account, make_account("other"), embedder)
    create_agent(data_root, account.account_id, AgentConfig("concierge", "Front desk", knowledge_keywords=("gutters",)))
    settings = load_settings(DATA_ROOT=str(data_root), ANTHROPIC_API_KEY=None)

    with caplog.at_level(logging.INFO, logger="maxy"):
        built = build_knowledge(settings, db, account.account_id, "concierge")
    got = {i.node_id: i.via for i in built.items}
    assert got == {ids["tagged-public"]: "tagged", ids["keyword-text"]: "keywords", ids["keyword-tag"]: "keywords"}
    folder = _folder(data_root, account.account_id, "concierge")
    full = (folder / "KNOWLEDGE.md").read_text()
    summary = (folder / "KNOWLEDGE-SUMMARY.md").read_text()
    assert full.startswith(HEADER) and summary.startswith(HEADER)
    assert "### Gutter cleaning" in full and "We clean gutters every spring." in full
    assert "- price: 49 EUR" in full and "### Depot North" in full
    for secret in (
        "margin",
        "confidential",
        "partner discount",
        "Window washing",
        "visitor asked",
        "withdrawn",
        "rota",
    ):
        assert secret not in full and secret not in summary
    assert "Other account" not in full and "/home/op" not in full  # nor where a node came from on disk
    assert "- **Gutter cleaning**: We clean gutters every spring." in summary
    assert built.summary == "extractive" and built.summary_reason is None
    assert knowledge_file(folder) == folder / "KNOWLEDGE-SUMMARY.md"  # written last: the guard prefers it
    assert "[agents] knowledge-build" in caplog.text and "nodes=3 tagged=1 fromKeywords=2" in caplog.text

    # public,shared: the shared node joins; admin never does
    update_agent(data_root, account.account_id, "concierge", allowed_scopes=("public", "shared"))
    wider = gather(db, account.account_id, AgentConfig("concierge", "x", False, ("gutters",), ("public", "shared")))
    assert ids["tagged-shared"] in {i.node_id for i in wider}
    assert not {ids["tagged-admin"], ids["keyword-admin"]} & {i.node_id for i in wider}


def test_a_summary_by_claude_and_its_fallback(db, account, data_root: Path, embedder, monkeypatch) -> None:
    GraphWriter(db, account, embedder, created_by="test").write(
        NodeSpec(
            ["Service"], {"name": "Chimney sweeping", "description": "Every autumn."}, scope="public", agents=["sweep"]
        )
    )
    create_agent(data_root, account.account_id, AgentConfig("sweep", "Sweep"))
    with FakeAnthropic(reply="- Chimneys are swept every autumn.") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        settings = load_settings(DATA_ROOT=str(data_root), ANTHROPIC_API_KEY="test-key")
        built = build_knowledge(settings, db, account.account_id, "sweep")
        assert built.summary == "claude"
        summary = (_folder(data_root, account.account_id, "sweep") / "KNOWLEDGE-SUMMARY.md").read_text()
        assert "summary=claude" in summary.splitlines()[0] and "Chimneys are swept every autumn." in summary
        [request] = fake.requests
        assert "Chimney sweeping" in json.dumps(request["body"])  # the model saw the knowledge file
        fake.mode = "500"
        built = build_knowledge(settings, db, account.account_id, "sweep")
        assert built.summary == "extractive" and built.summary_reason
        summary = (_folder(data_root, account.account_id, "sweep") / "KNOWLEDGE-SUMMARY.md").read_text()
        assert "- **Chimney sweeping**: Every autumn." in summary


def test_the_limit_and_the_size_cap_count_only_what_goes_in(db, account, data_root: Path, monkeypatch) -> None:
    writer = GraphWriter(db, account, None, created_by="test")
    # the best subscription hit (tagged with the keyword) is a working record: it must not take the one slot
    writer.write(NodeSpec(["Project", "Task"], {"name": "Lamp rota", "keywords": ["lamps"]}, scope="public"))
    shop = writer.write(NodeSpec(["Product"], {"name": "Brass lamps", "price": "30 EUR"}, scope="public"))
    config = AgentConfig("lamp", "Lamp", knowledge_keywords=("lamps",))
    assert [i.node_id for i in gather(db, account.account_id, config, limit=1)] == [shop.node_id]

    for n in range(6):
        writer.write(NodeSpec(["Note"], {"name": f"Note {n}", "text": "x" * 400}, scope="public", agents=["lamp"]))
    create_agent(data_root, account.account_id, config)
    monkeypatch.setattr("maxy.agents.knowledge.MAX_KNOWLEDGE_CHARS", 1500)
    settings = load_settings(DATA_ROOT=str(data_root), ANTHROPIC_API_KEY=None)
    built = build_knowledge(settings, db, account.account_id, "lamp").as_dict()
    full = Path(built["knowledgeFile"]).read_text()
    assert built["leftOut"] > 0 and built["nodes"] + built["leftOut"] == 7
    assert full.count("\n### ") == built["nodes"] == len(built["nodeIds"])  # the ids are those that went in
    assert f"nodes={built['nodes']}:" in full.splitlines()[0]


def test_hand_written_files_are_kept_unless_forced(db, account, data_root: Path) -> None:
    create_agent(data_root, account.account_id, AgentConfig("desk", "Desk"))
    folder = _folder(data_root, account.account_id, "desk")
    (folder / "KNOWLEDGE.md").write_text("We open at nine.\n")
    settings = load_settings(DATA_ROOT=str(data_root), ANTHROPIC_API_KEY=None)
    with pytest.raises(ValidationError, match="--force") as caught:
        build_knowledge(settings, db, account.account_id, "desk")
    assert "written by hand" in str(caught.value)
    assert (folder / "KNOWLEDGE.md").read_text() == "We open at nine.\n"
    assert not (folder / "KNOWLEDGE-SUMMARY.md").exists()  # nothing half-written
    built = build_knowledge(settings, db, account.account_id, "desk", force=True)
    assert built.items == () and "Nothing is tagged for this agent yet" in (folder / "KNOWLEDGE.md").read_text()
    build_knowledge(settings, db, account.account_id, "desk")  # generated files are rebuilt freely
    os.symlink(folder / "elsewhere", folder / "KNOWLEDGE.md.tmp")
    with pytest.raises(Exception, match="symbolic link"):
        build_knowledge(settings, db, account.account_id, "desk")


_SCOPES = st.sampled_from(["public", "shared", "admin", None])
_NODE = st.tuples(
    _SCOPES,
    st.sampled_from([None, ["prop"], ["prop", "x"], ["x"]]),  # agents
    st.sampled_from([None, ["lamps"], ["LAMPS", "z"]]),  # keywords
    st.booleans(),  # whether its text mentions the subscribed keyword
    st.sampled_from(["Fact", "Product", "Message", "Task", "Note"]),
)


@hsettings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(nodes=st.lists(_NODE, min_size=1, max_size=8), scopes=st.sampled_from([("public",), ("public", "shared")]))
def test_no_snapshot_ever_holds_a_node_outside_the_agents_scopes(db, make_account, embedder, nodes, scopes) -> None:
    account = make_account(f"prop-{uuid.uuid4().hex[:6]}")
    writer = GraphWriter(db, account, None, created_by="test")
    written = []
    for scope, agents, keywords, mentions, label in nodes:
        props: dict = {"name": f"item {uuid.uuid4().hex[:8]}" + (" lamps" if mentions else "")}
        if keywords:
            props["keywords"] = keywords
        result = writer.write(NodeSpec([label], props, scope=scope, agents=agents))
        stored = db.read("MATCH (n:Node {nodeId: $id}) RETURN n.scope AS scope", id=result.node_id)[0]["scope"]
        written.append((result.node_id, stored, agents, label))
    config = AgentConfig("prop", "Prop", False, ("lamps",), scopes)
    got = {i.node_id for i in gather(db, account.account_id, config)}
    by_id = {node_id: (scope, agents, label) for node_id, scope, agents, label in written}
    for node_id in got:
        scope, _, label = by_id[node_id]
        assert scope in scopes and label not in ("Message", "Task")  # never admin, never unscoped
    for node_id, scope, agents, label in written:  # every public, tagged, knowledge node is there
        if scope in scopes and agents and "prop" in agents and label not in ("Message", "Task"):
            assert node_id in got


def test_the_cli_builds_and_names_bad_values(db, account, data_root: Path) -> None:
    create_agent(data_root, account.account_id, AgentConfig("cli-agent", "CLI"))
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")
    env.pop("ANTHROPIC_API_KEY", None)

    def run(*args: str, command: tuple[str, ...] = ("agent", "knowledge", "build")) -> subprocess.CompletedProcess:
        return maxy([*command, *args], env, check=False)

    tag = ("--label", "Service", "--prop", "name=Boiler service", "--scope", "public", "--agent", "cli-agent")
    wrote = run(*tag, "--json", command=("memory", "write"))
    assert wrote.returncode == 0, wrote.stderr
    done = run("cli-agent", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["nodeIds"] == [json.loads(wrote.stdout)["nodeId"]] and answer["summary"] == "extractive"
    assert "### Boiler service" in Path(answer["knowledgeFile"]).read_text()
    bad = run("cli-agent", "--limit", "0")
    assert bad.returncode == 2 and "--limit" in bad.stderr and "Traceback" not in bad.stderr
    missing = run("nobody")
    assert missing.returncode == 2 and "no agent 'nobody'" in missing.stderr
