"""A variable spelled like one of Maxy's settings but none of them is named with the setting it
most likely meant; names Maxy reads, and other programs' look-alikes, are left alone."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from maxy.envcheck import known_names, mistyped

from tests.cli_inprocess import maxy

KNOWN = sorted(known_names())


def test_a_misspelt_setting_is_named_with_the_one_meant() -> None:
    environ = {
        "ACOUNT_ID": "x",
        "NEO4J_PASWORD": "x",
        "EMBED_DIMENSION": "384",
        "NEO4J_USERNAME": "neo4j",
        "MAXY_CONFIG": "/tmp",
        "LOGLEVEL": "info",
    }
    assert mistyped(environ) == [
        ("ACOUNT_ID", "ACCOUNT_ID"),
        ("EMBED_DIMENSION", "EMBED_DIMENSIONS"),
        ("LOGLEVEL", "LOG_LEVEL"),
        ("MAXY_CONFIG", "MAXY_CONFIG_DIR"),
        ("NEO4J_PASWORD", "NEO4J_PASSWORD"),
        ("NEO4J_USERNAME", "NEO4J_USER"),
    ]


def test_other_programs_variables_are_left_alone() -> None:
    others = ["NEO4J_HOME", "NEO4J_CONF", "OLLAMA_HOST", "JAVA_HOME", "HOSTNAME", "XDG_SESSION_ID", "PATH", "HOME"]
    assert mistyped(dict.fromkeys(others, "x")) == []


@given(st.lists(st.sampled_from(KNOWN), unique=True))
def test_no_name_maxy_reads_is_ever_named(names: list[str]) -> None:
    assert mistyped(dict.fromkeys(names, "x")) == []


@given(st.sampled_from(KNOWN).flatmap(lambda name: st.tuples(st.just(name), st.integers(1, len(name) - 2))))
def test_a_setting_missing_one_inner_letter_is_named(case: tuple[str, int]) -> None:
    name, at = case
    typo = name[:at] + name[at + 1 :]
    if typo in known_names() or len(name) < 8:
        return
    found = dict(mistyped({typo: "x"}))
    assert typo in found, typo


def test_the_command_line_warns_and_carries_on(tmp_path) -> None:
    env = {"MAXY_CONFIG_DIR": str(tmp_path / "config"), "DATA_ROOT": str(tmp_path / "data"), "ACOUNT_ID": "x"}
    done = maxy(["version"], env)
    assert done.returncode == 0 and done.stdout.startswith("maxy ")
    assert done.stderr == "warning: ACOUNT_ID is not a Maxy setting; did you mean ACCOUNT_ID?\n"
