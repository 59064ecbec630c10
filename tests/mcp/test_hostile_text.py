"""Text that is no text, sent to the real tools through a real MCP client over HTTP: a NUL in a
path or a property is refused in one line naming the argument, before anything is written, with
no crash in the server's log; a member's key made without a view reaches only the community's
tools, and one made with a view reaches memory inside it."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key

from tests.local_http import mcp_calls, serve_app
from tests.plugins_fixture.helpers import text


@pytest.fixture()
def served(db, account, data_root: Path, embedder):
    settings = load_settings(DATA_ROOT=data_root)
    with serve_app(create_app(discover_plugins(None, []), settings)) as base:
        yield base + "/mcp"


def _crashes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.exc_info or "tool-crash" in r.getMessage()]


def test_a_nul_in_a_path_or_a_property_is_refused_naming_it(served, account, data_root, caplog, tmp_path) -> None:
    caplog.set_level("INFO")
    key, _ = create_api_key(data_root, account.account_id, role="admin")
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nThe harbour opens at six.\n")
    passwd, second, person = anyio.run(
        mcp_calls,
        served,
        key,
        [
            ("memory-ingest", {"paths": ["/etc/passwd\x00.md"]}),
            ("memory-ingest", {"paths": [str(note), f"{note}\x00"]}),
            ("memory-write", {"labels": ["Person"], "properties": {"name": "Ada\x00Lovelace"}}),
        ],
    )
    assert passwd.is_error and text(passwd) == "paths[0]: holds a NUL character (U+0000), which is not text: remove it"
    assert second.is_error and text(second).startswith("paths[1]: holds a NUL character")
    assert person.is_error and text(person).startswith("properties.name: holds a NUL character")
    (found,) = anyio.run(mcp_calls, served, key, [("memory-search", {"query": "harbour opens Ada Lovelace"})])
    assert "harbour" not in text(found) and "Lovelace" not in text(found)  # nothing was written
    assert not _crashes(caplog)


def test_a_members_key_reaches_memory_only_through_the_view_it_states(served, account, data_root, caplog) -> None:
    caplog.set_level("INFO")
    admin, _ = create_api_key(data_root, account.account_id, role="admin")
    bare, _ = create_api_key(data_root, account.account_id, role="admin", member_id="ben")
    shared, _ = create_api_key(data_root, account.account_id, role="admin", member_id="ben", scopes=["shared"])
    anyio.run(
        mcp_calls,
        served,
        admin,
        [
            ("memory-write", {"labels": ["Fact"], "properties": {"text": "The vault code is 4417"}, "scope": "admin"}),
            (
                "memory-write",
                {"labels": ["Fact"], "properties": {"text": "The team lunch is on Friday"}, "scope": "shared"},
            ),
        ],
    )
    search = ("memory-search", {"query": "vault code team lunch", "minRelevance": 0})
    refused, networks = anyio.run(mcp_calls, served, bare, [search, ("list_networks", {})])
    assert refused.is_error and "holds no memory view" in text(refused) and "4417" not in text(refused)
    assert not networks.is_error  # the community's tools answer a member's key
    (inside,) = anyio.run(mcp_calls, served, shared, [search])
    assert not inside.is_error and "Friday" in text(inside) and "4417" not in text(inside)
    assert "4417" in json.dumps(anyio.run(mcp_calls, served, admin, [search])[0].structured_content)
    assert not _crashes(caplog)
