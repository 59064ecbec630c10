"""The active conversation of a stdio server: a session id from the config (expanded or not by
the client), from the client's own variable, or minted; never a search pin."""

from __future__ import annotations

import uuid

import pytest
from maxy.config import Settings
from maxy.mcp.active_session import CONFIG_REFERENCE, expand_reference, with_active_session


@pytest.mark.parametrize(
    ("value", "environ", "expected"),
    [
        (None, {}, None),
        ("", {}, None),
        ("  ", {}, None),
        ("abc", {}, "abc"),
        ("${S}", {"S": "s1"}, "s1"),
        ("${S}", {}, None),
        ("${S:-}", {}, None),
        ("${S:-fallback}", {}, "fallback"),
        ("${S:-fallback}", {"S": ""}, "fallback"),
        ("${S-fallback}", {"S": "s2"}, "s2"),
        ("chat-${S}", {"S": "7"}, "chat-7"),
        ("$S", {"S": "x"}, "$S"),  # only the braced forms clients document
    ],
)
def test_expand_reference(value: str | None, environ: dict[str, str], expected: str | None) -> None:
    assert expand_reference(value, environ) == expected


@pytest.fixture(autouse=True)
def _no_pins_from_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SESSION_ID", "SESSION_NODE_ID"):
        monkeypatch.delenv(name, raising=False)


def _settings(**values: str | None) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_the_config_reference_expanded_by_the_server() -> None:
    """A client that passes the env value through as text: the server reads the client's variable."""
    s = with_active_session(_settings(SESSION_NODE_ID=CONFIG_REFERENCE), "admin", {"CLAUDE_CODE_SESSION_ID": "cc-1"})
    assert (s.SESSION_NODE_ID, s.SESSION_ID) == ("cc-1", None)


def test_an_expanded_empty_reference_falls_back_to_the_client_variable() -> None:
    """Claude Code expanded ${CLAUDE_CODE_SESSION_ID:-} to "" but set the variable in the server's env."""
    s = with_active_session(_settings(SESSION_NODE_ID=""), "admin", {"CLAUDE_CODE_SESSION_ID": "cc-2"})
    assert s.SESSION_NODE_ID == "cc-2" and s.SESSION_ID is None


def test_explicit_pins_win() -> None:
    env = {"CLAUDE_CODE_SESSION_ID": "cc-3"}
    assert with_active_session(_settings(SESSION_NODE_ID="conv-1"), "admin", env).SESSION_NODE_ID == "conv-1"
    pinned = with_active_session(_settings(SESSION_ID="sess-1"), "admin", env)
    assert (pinned.SESSION_ID, pinned.SESSION_NODE_ID) == ("sess-1", None)


def test_minted_when_nothing_is_supplied() -> None:
    first = with_active_session(_settings(SESSION_NODE_ID=CONFIG_REFERENCE), "admin", {})
    second = with_active_session(_settings(), "admin", {})
    assert first.SESSION_ID is None and second.SESSION_ID is None  # never a search pin
    assert str(uuid.UUID(str(first.SESSION_NODE_ID))) == first.SESSION_NODE_ID
    assert first.SESSION_NODE_ID != second.SESSION_NODE_ID


def test_public_servers_get_no_session_of_their_own() -> None:
    s = with_active_session(_settings(), "public", {"CLAUDE_CODE_SESSION_ID": "cc-4"})
    assert (s.SESSION_NODE_ID, s.SESSION_ID) == (None, None)
