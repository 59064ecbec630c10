"""Relevance over MCP: memory-search and conversation-search through ``maxy mcp serve memory``
(the SDK's stdio client), on a small graph written with the real embedder. An answerable
question shows each hit's calibrated probability of being relevant, never rising down the answer;
punctuation, another language or an off-topic question answers "No relevant results" with the
nearest miss; minRelevance keeps the hits whose shown relevance reaches it, 0 turns the cut off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from maxy.conversations.append import append_turn
from maxy.graph.write import GraphWriter, NodeSpec
from maxy.search.relevance import calibration_for
from mcp import ClientSession, StdioServerParameters

from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text

NOTES = (
    "The Phoenix launch moved to 14 March after the security review found two open issues.",
    "Globex hired Ana Souza as head of research; she starts in the Lisbon office.",
    "The quarterly budget for the data platform team is 1.2 million euros.",
)
NOISE = ("?!.,;:", "明日の天気はどうなりますか", "Which football club won the 1998 World Cup final in Paris?")


def test_relevance_and_the_cut_over_stdio(db, account, embedder, data_root: Path, tmp_path: Path) -> None:
    calibration = calibration_for(embedder.name)
    assert calibration is not None, "the default embedder ships with a calibration"
    floor = 0.3  # a caller's minimum, on the shown scale
    writer = GraphWriter(db, account, embedder, created_by="system")
    for note in NOTES:
        writer.write(NodeSpec(["Note"], {"text": note}))
    append_turn(writer, "relevance-test", role="user", content="Can we move the Phoenix launch to March?")
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "memory"], env=env, cwd=str(REPO))

    async def work() -> dict[str, Any]:
        with (tmp_path / "server.log").open("w") as errlog:
            async with stdio_inprocess(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                out: dict[str, Any] = {}
                notes = {"labels": ["Note"]}
                out["answer"] = await s.call_tool("memory-search", {"query": "When is the Phoenix launch?", **notes})
                for i, q in enumerate(NOISE):
                    out[f"noise{i}"] = await s.call_tool("memory-search", {"query": q, **notes})
                out["uncut"] = await s.call_tool("memory-search", {"query": NOISE[0], "minRelevance": 0, **notes})
                question = {"query": "When is the Phoenix launch?", **notes}
                out["all"] = await s.call_tool("memory-search", {**question, "minRelevance": 0})
                out["kept"] = await s.call_tool("memory-search", {**question, "minRelevance": floor})
                out["bad"] = await s.call_tool("memory-search", {"query": "Phoenix", "minRelevance": 2})
                out["messages"] = await s.call_tool("conversation-search", {"query": "Phoenix launch in March"})
                out["no_messages"] = await s.call_tool("conversation-search", {"query": NOISE[1]})
                return out

    out = anyio.run(work)
    answer = out["answer"].structured_content
    shown = [h["relevance"] for h in answer["hits"]]
    assert "Phoenix" in answer["hits"][0]["properties"]["text"]
    assert shown == sorted(shown, reverse=True) and shown[0] > floor  # monotone down the answer
    assert "(relevance: " in text(out["answer"]) and "(score: " not in text(out["answer"])
    for i, query in enumerate(NOISE):
        result = out[f"noise{i}"]
        assert text(result).startswith("No relevant results"), (query, text(result)[:300])
        data = result.structured_content
        assert data["hits"] == [] and data["nearestMiss"]["relevance"] < shown[0]
    uncut = out["uncut"].structured_content["hits"]
    assert len(uncut) >= 3 and all(h["relevance"] < shown[0] for h in uncut)  # shown, honestly lower
    every, kept = out["all"].structured_content["hits"], out["kept"].structured_content["hits"]
    assert len(every) == len(NOTES) and all(h["relevance"] < shown[0] for h in every[1:])  # the others stay, lower
    assert kept and [h["nodeId"] for h in kept] == [h["nodeId"] for h in every if h["relevance"] >= floor]
    assert out["bad"].is_error and "minRelevance" in text(out["bad"]) and "\n" not in text(out["bad"]).strip()
    message = out["messages"].structured_content["hits"][0]
    assert "Phoenix" in message["content"]
    assert text(out["no_messages"]).startswith("No relevant results")
    assert out["no_messages"].structured_content["nearestMiss"]["relevance"] <= message["relevance"]
