"""Errors at the command line's edge: every setting either loads or fails with one line naming
it; an API field names the flag that sets it; anything unexpected is one line and exit 1."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maxy.cli import app, main
from maxy.config import Settings, load_settings
from maxy.console import flag_for
from maxy.errors import SettingsError

from tests.hypothesis_profile import examples

FIELDS = sorted(Settings.model_fields)


@settings(max_examples=examples(300), deadline=None)
@given(name=st.sampled_from(FIELDS), value=st.text(max_size=40))
def test_any_value_of_any_setting_loads_or_is_one_line_naming_it(name: str, value: str) -> None:
    try:
        load_settings(**{name: value})
    except SettingsError as err:
        message = str(err)
        assert message.startswith(f"{name}: ") and "\n" not in message and err.exit_code == 2


@pytest.mark.parametrize(
    "field,flag",
    [
        ("expandHops", "--expand-hops"),
        ("retrievalClass", "--class"),
        ("labels", "--label"),
        ("allowedScopes", "--scope"),
        ("properties.validFrom", "--valid-from"),
        ("properties", "--prop"),
        ("--older-than", "--older-than"),
        ("query", "QUERY"),
        ("chunkBounds.window", None),
    ],
)
def test_api_fields_name_their_flags(field: str, flag: str | None) -> None:
    flags = {
        "expand_hops": "--expand-hops",
        "retrieval_class": "--class",
        "label": "--label",
        "scope": "--scope",
        "valid_from": "--valid-from",
        "props": "--prop",
        "older_than": "--older-than",
        "query": "QUERY",
    }
    assert flag_for(field, flags) == flag


def test_an_unexpected_error_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    def boom() -> None:
        raise RuntimeError("the disk\nis haunted")

    app.command("boom-for-test")(boom)
    try:
        monkeypatch.setattr(sys, "argv", ["maxy", "boom-for-test"])
        monkeypatch.delenv("MAXY_DEBUG", raising=False)
        with pytest.raises(SystemExit) as exited:
            main()
    finally:
        app.registered_commands.pop()
    assert exited.value.code == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: RuntimeError: the disk is haunted (run again with --debug for the traceback)"
    ]
    assert "boom-for-test" not in {c.name for c in app.registered_commands}
