"""The text boundary: a value is refused exactly when one of its strings or keys holds a NUL or a
lone surrogate, naming where; what is printed always encodes, and clean text is left alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.config import load_settings
from maxy.errors import ConfigError, SettingsError, ValidationError
from maxy.textcheck import check_clean, find_bad, printable

_any_char = st.characters(codec=None, exclude_categories=())  # every code point, surrogates and NUL too
texts = st.text(alphabet=_any_char, max_size=12)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _unstorable(text: str) -> bool:
    return "\x00" in text or any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


@given(values)
def test_a_value_is_refused_exactly_when_a_string_in_it_is_no_text(value: object) -> None:
    refused = find_bad(value, "body")
    assert (refused is not None) == any(_unstorable(s) for s in _strings(value))
    if refused is not None:
        with pytest.raises(ValidationError) as err:
            check_clean(value, "body")
        assert str(err.value).startswith(refused[0] + ": ") and "\n" not in str(err.value)


@given(values)
def test_printable_always_encodes_and_leaves_clean_values_alone(value: object) -> None:
    shown = printable(value)
    json.dumps(shown, ensure_ascii=False).encode("utf-8")  # never raises
    if not any(0xD800 <= ord(ch) <= 0xDFFF for s in _strings(value) for ch in s):
        assert shown == value


def test_the_field_is_named_by_its_path() -> None:
    body = {"assessment": {"reasoning": "ok", "roles": ["a", "b\ud800"]}, "message": "hi"}
    assert find_bad(body) == (
        "assessment.roles[1]",
        "holds a lone surrogate (U+D800 to U+DFFF), which is not text: send UTF-8",
    )
    assert find_bad({"paths": ["/etc/passwd\x00.md"]})[0] == "paths[0]"
    assert find_bad({"k\x00": 1}, "props")[1].startswith("has a key that holds a NUL")
    assert find_bad(["fine", {"deep": [[["x"]]]}]) is None


@pytest.mark.parametrize("variable", ["DATA_ROOT"])
def test_a_path_setting_that_cannot_be_expanded_is_one_line_naming_it(variable: str) -> None:
    for value in ("~0", "~no-such-user-here/data", "/tmp/a\x00b"):
        with pytest.raises(SettingsError) as err:
            load_settings(**{variable: value})
        assert str(err.value).startswith(f"{variable}: ") and "\n" not in str(err.value)


def test_an_unexpandable_config_folder_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from maxy.config import cache_dir, config_dir

    monkeypatch.setenv("MAXY_CONFIG_DIR", "~no-such-user-here")
    with pytest.raises(ConfigError, match=r"^MAXY_CONFIG_DIR: '~no-such-user-here' ~no-such-user-here names no home"):
        config_dir()
    monkeypatch.setenv("MAXY_CACHE_DIR", "~0/cache")
    with pytest.raises(ConfigError, match=r"^MAXY_CACHE_DIR: "):
        cache_dir()


def test_a_command_line_word_that_is_not_text_is_one_line_naming_it(tmp_path) -> None:
    env = {**os.environ, "MAXY_CONFIG_DIR": str(tmp_path), "LC_ALL": "C.UTF-8"}
    for args, named in (
        (["search", b"caf\xe9"], "argument 2"),
        (["memory", "search", "--limit", b"\xff", "q"], "--limit"),
    ):
        argv = [os.fsencode(a) if isinstance(a, str) else a for a in args]
        proc = subprocess.run(
            [sys.executable, "-m", "maxy", *argv], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert lines[0].startswith("error: ") and "lone surrogate" in lines[0] and "Traceback" not in proc.stderr
        assert lines[0].startswith(f"error: {named}: "), lines[0]
