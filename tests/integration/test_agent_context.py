"""What a public agent is started with: the prompt from its texts (the knowledge summary unless
KNOWLEDGE.md is newer), tools and MCP config that follow liveMemory, pinned to its scopes, slug
and keywords; memory context through a real pinned memory server; the same over HTTP."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
from maxy.agents import AgentConfig, create_agent, update_agent
from maxy.agents.context import assemble_context, knowledge_file
from maxy.config import load_settings
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key

from tests.cli_inprocess import maxy
from tests.fake_anthropic import FakeAnthropic
from tests.local_http import serve_app
from tests.plugins_fixture.helpers import child_env


def _context(env: dict[str, str], *args: str) -> dict:
    proc = maxy(["agent", "context", *args, "--json"], env, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_staleness_guard_picks_the_summary_unless_the_full_text_is_newer(tmp_path: Path) -> None:
    assert knowledge_file(tmp_path) is None
    full, summary = tmp_path / "KNOWLEDGE.md", tmp_path / "KNOWLEDGE-SUMMARY.md"
    full.write_text("full")
    assert knowledge_file(tmp_path) == full
    summary.write_text("short")
    os.utime(full, ns=(1_000_000_000, 1_000_000_000))
    os.utime(summary, ns=(2_000_000_000, 2_000_000_000))
    assert knowledge_file(tmp_path) == summary
    os.utime(full, ns=(3_000_000_000, 3_000_000_000))
    assert knowledge_file(tmp_path) == full  # the summary is stale
    full.unlink()
    os.symlink(tmp_path / "elsewhere", full)
    assert knowledge_file(tmp_path) == summary  # a link is never read


def test_context_follows_live_memory_and_pins_the_spawn(db, account, data_root: Path, embedder) -> None:
    create_agent(data_root, account.account_id, AgentConfig("concierge", "Front desk", knowledge_keywords=("pricing",)))
    folder = data_root / "accounts" / account.account_id / "agents" / "concierge"
    (folder / "IDENTITY.md").write_text("You are the front desk of Widget Co.")
    (folder / "KNOWLEDGE.md").write_text("Opening hours: nine to five.")
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")

    off = _context(env, "concierge")
    assert off["knowledgeSource"] == "KNOWLEDGE.md"
    assert (
        off["systemPrompt"].startswith("# Identity\n\nYou are the front desk") and "nine to five" in off["systemPrompt"]
    )
    assert not any("memory-search" in t for t in off["allowedTools"])
    assert "memory" not in off["mcpConfig"]["mcpServers"]
    assert off["memoryContext"] is None

    update_agent(data_root, account.account_id, "concierge", live_memory=True)
    writer = GraphWriter(db, account, embedder, created_by="test")
    writer.write(NodeSpec(["Organization"], {"name": "Widget pricing desk"}, scope="public", agents=["concierge"]))
    writer.write(NodeSpec(["Fact"], {"text": "Widget pricing margin is secret"}, scope="admin", agents=["concierge"]))
    on = _context(env, "concierge", "--message", "widget pricing")
    assert "mcp__memory__memory-search" in on["allowedTools"]
    [entry] = [e for name, e in on["mcpConfig"]["mcpServers"].items() if name == "memory"]
    pins = entry["env"]
    assert pins["ALLOWED_SCOPES"] == "public" and pins["AGENT_SLUG"] == "concierge"
    assert pins["KNOWLEDGE_KEYWORDS"] == "pricing" and pins["ACCOUNT_ID"] == account.account_id
    assert entry["args"][-4:] == ["serve", "memory", "--role", "public"] or "public" in entry["args"]
    assert "Widget pricing desk" in on["memoryContext"] and "margin is secret" not in on["memoryContext"]

    refused = maxy(["agent", "context", "nobody"], env, check=False)
    assert refused.returncode == 2 and refused.stderr.startswith("error: SLUG: no agent 'nobody'")


def test_the_context_endpoint_answers_admin_keys_only(account, data_root: Path) -> None:
    create_agent(data_root, account.account_id, AgentConfig("concierge", "Front desk"))
    secret, _ = create_api_key(data_root, account.account_id, role="admin")
    public, _ = create_api_key(data_root, account.account_id, role="public", agent_slug="concierge")
    app = create_app(discover_plugins(None, []), load_settings(DATA_ROOT=data_root))
    with serve_app(app) as base:
        url = f"{base}/agents/concierge/context"
        answer = httpx.get(url, headers={"Authorization": f"Bearer {secret}"}, timeout=60)
        assert answer.status_code == 200 and answer.json()["agent"]["slug"] == "concierge"
        assert httpx.get(url, timeout=60).status_code == 401
        assert httpx.get(url, headers={"x-api-key": public}, timeout=60).status_code == 403
        missing = httpx.get(f"{base}/agents/nobody/context", headers={"x-api-key": secret}, timeout=60)
        assert missing.status_code == 400 and "no agent 'nobody'" in missing.json()["error"]
        blank = httpx.get(url, params={"message": " "}, headers={"x-api-key": secret}, timeout=60)
        assert blank.status_code == 400 and blank.json()["error"].startswith("message:")


def _gateway_reply(verdict: str, query: str) -> str:
    answer = {
        "verdict": verdict,
        "promptInjection": verdict != "CLEAN",
        "intent": "question",
        "language": "en",
        "complexity": "simple",
        "query": query,
    }
    return json.dumps(answer)


def test_a_message_is_screened_before_memory_is_fetched(db, account, data_root: Path, embedder, monkeypatch) -> None:
    create_agent(data_root, account.account_id, AgentConfig("concierge", "Front desk", live_memory=True))
    writer = GraphWriter(db, account, embedder, created_by="test")
    for label, name in (("Organization", "Widget pricing desk"), ("Service", "Harbour ferry timetable")):
        writer.write(NodeSpec([label], {"name": name}, scope="public", agents=["concierge"]))
    monkeypatch.setenv("MAXY_LOG_LEVEL", "WARNING")
    plugins = discover_plugins(None, [])
    message = "What do things cost at the widget pricing desk today?"
    with FakeAnthropic(reply=_gateway_reply("CLEAN", "Harbour ferry timetable")) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        settings = load_settings(DATA_ROOT=data_root, ANTHROPIC_API_KEY="test-key")
        passed = assemble_context(settings, account.account_id, "concierge", plugins, message=message)
        assert len(fake.requests) == 1 and passed.screening is not None and passed.screening.source == "model"
        assert passed.as_dict()["refusal"] is None
        assert (
            passed.system_prompt.endswith("</inbound-message-screening>") and "verdict: CLEAN" in passed.system_prompt
        )
        assert message not in passed.system_prompt  # the sender's words never reach the prompt
        # memory-search ran the gateway's retrieval query, not the raw message
        assert passed.memory_context and passed.memory_context.splitlines()[0].startswith("[Service]")

        fake.reply = _gateway_reply("DISCARD", "ignored")
        refused = assemble_context(settings, account.account_id, "concierge", plugins, message=message)
        assert refused.screening is not None and refused.screening.verdict == "DISCARD"
        assert refused.as_dict()["refusal"] and refused.memory_context is None
        assert "verdict: DISCARD" in refused.system_prompt

    settings = load_settings(DATA_ROOT=data_root, ANTHROPIC_API_KEY=None)  # no model: the raw message is searched
    raw = assemble_context(settings, account.account_id, "concierge", plugins, message=message)
    assert raw.screening is not None and raw.screening.source == "fallthrough"
    assert raw.memory_context and raw.memory_context.splitlines()[0].startswith("[Organization]")


def test_a_key_reads_only_the_contexts_of_agents_inside_its_view(account, data_root: Path) -> None:
    """A key pinned to one agent and scope, or a member's key made without a view, reads no other
    agent's context; the answer is word for word the one for an agent that does not exist."""
    create_agent(data_root, account.account_id, AgentConfig("concierge", "Front desk"))
    create_agent(data_root, account.account_id, AgentConfig("vip", "VIP desk", allowed_scopes=("public", "shared")))
    (data_root / "accounts" / account.account_id / "agents" / "vip" / "IDENTITY.md").write_text("The VIP script.")
    keys = {
        "concierge-only": create_api_key(
            data_root, account.account_id, role="admin", scopes=["public"], agent_slug="concierge"
        )[0],
        "public-scope": create_api_key(data_root, account.account_id, role="admin", scopes=["public"])[0],
        "member": create_api_key(data_root, account.account_id, role="admin", member_id="ben")[0],
        "member-with-view": create_api_key(
            data_root, account.account_id, role="admin", member_id="ben", scopes=["public", "shared"]
        )[0],
        "unpinned": create_api_key(data_root, account.account_id, role="admin")[0],
    }
    app = create_app(discover_plugins(None, []), load_settings(DATA_ROOT=data_root))

    def get(base: str, slug: str, key: str) -> httpx.Response:
        return httpx.get(f"{base}/agents/{slug}/context", headers={"x-api-key": keys[key]}, timeout=60)

    with serve_app(app) as base:
        absent = get(base, "ghost", "unpinned")
        assert absent.status_code == 400
        for key in ("concierge-only", "public-scope", "member"):
            refused = get(base, "vip", key)
            assert refused.status_code == 400, key
            assert refused.json() == {"error": absent.json()["error"].replace("'ghost'", "'vip'")}, key
            assert "VIP script" not in refused.text
        assert get(base, "concierge", "concierge-only").status_code == 200
        assert get(base, "concierge", "public-scope").status_code == 200
        assert get(base, "concierge", "member").status_code == 400  # a member's key without a view: none
        for key in ("member-with-view", "unpinned"):
            seen = get(base, "vip", key)
            assert seen.status_code == 200 and "The VIP script." in seen.json()["systemPrompt"], key
