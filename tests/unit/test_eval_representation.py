"""The conversation evaluation reuses an imported account only while the messages would be
stored and embedded exactly as they were."""

from __future__ import annotations

from maxy.conversations import importing
from maxy.conversations.importing import parse_message
from maxy.evaluation.conversations import representation

ROWS = [
    {"conversation": "c1", "session": "c1/s1", "id": f"D1:{i}", "speaker": s, "content": t}
    for i, (s, t) in enumerate(
        [("Ana", "I adopted a beagle."), ("Ben", "What is its name?"), ("Ana", "Biscuit!"), ("Ben", "Cute.")],
        start=1,
    )
]


def messages() -> list:
    return [parse_message(dict(r), f"row {n}") for n, r in enumerate(ROWS, start=1)]


def test_the_same_messages_give_the_same_representation() -> None:
    assert representation(messages()) == representation(messages())


def test_a_changed_turn_changes_it() -> None:
    changed = messages()
    changed[2] = parse_message({**ROWS[2], "content": "Biscuit, a beagle!"}, "row 3")
    assert representation(changed) != representation(messages())


def test_a_changed_context_window_changes_it(monkeypatch) -> None:
    before = representation(messages())
    monkeypatch.setattr(importing, "CONTEXT_BEFORE", 1)  # what each turn is embedded with
    assert representation(messages()) != before
