"""memory-ingest over stdio with a real MCP client reads what ``maxy ingest`` reads: a PDF and a
PowerPoint deck as their tools wrote them, a type it does not know refused naming --as-text, and
that file read with ``asText``; memory-search then finds each under its file name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters

from tests.mcp.inprocess import stdio_inprocess
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text

FIXTURES = REPO / "tests" / "fixtures" / "formats"


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, text(result)
    return json.loads(text(result))


def _hits(result: Any) -> list[dict[str, Any]]:
    assert not result.is_error, text(result)
    return list(result.structured_content["hits"])


async def _session(env: dict[str, str], errlog: Path, folder: Path) -> dict[str, Any]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve", "memory"], env=env, cwd=str(REPO))
    with errlog.open("w") as err:
        async with stdio_inprocess(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return {
                "files": _data(await s.call_tool("memory-ingest", {"paths": [str(folder)]})),
                "refused": await s.call_tool("memory-ingest", {"paths": [str(folder / "tides.log")]}),
                "as_text": _data(
                    await s.call_tool("memory-ingest", {"paths": [str(folder / "tides.log")], "asText": True})
                ),
                "pdf_hit": _hits(await s.call_tool("memory-search", {"query": "diaphone horn fog", "limit": 3})),
                "log_hit": _hits(await s.call_tool("memory-search", {"query": "Dover high water coefficient"})),
                "empty": await s.call_tool("memory-ingest", {"paths": [str(folder / "empty")]}),
            }


def test_memory_ingest_reads_pdf_and_pptx_and_other_types_as_text(db, account, data_root: Path, tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("handbook.pdf", "deck.pptx"):
        shutil.copy(FIXTURES / name, folder / name)
    (folder / "tides.log").write_text("High water at Dover was 11:42 with a coefficient of ninety-four.\n")
    (folder / "empty").mkdir()
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    out = anyio.run(_session, env, tmp_path / "server.log", folder)
    written = {Path(d["path"]).name: d for d in out["files"]["documents"] if not d["skipped"]}
    assert sorted(written) == ["deck.pptx", "handbook.pdf"] and out["files"]["failed"] == 0
    assert written["handbook.pdf"]["sections"] == 5 and written["deck.pptx"]["sections"] == 2
    [log] = [d for d in out["files"]["documents"] if d["skipped"]]
    assert log["reason"] == "unsupported" and "--as-text" in log["note"]
    assert out["refused"].is_error and "unsupported file type '.log'" in text(out["refused"])
    assert out["as_text"]["written"] == 1
    assert "handbook.pdf" in json.dumps(out["pdf_hit"][0])
    assert "tides.log" in json.dumps(out["log_hit"][0])
    assert out["empty"].is_error and "no supported file found in" in text(out["empty"])
    assert "(no file in it)" in text(out["empty"])
    assert "Traceback" not in (tmp_path / "server.log").read_text()
