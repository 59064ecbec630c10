"""The memory agent without a model: the extractive summary of a turn and the deterministic
context (recent entries, open questions), plus the prompts it would send a model and how it
reads the model's tool input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from maxy.llm import LLMUnavailable
from maxy.memoryagent.control import ChatMessage, ControlState
from maxy.memoryagent.degraded import (
    SUMMARY_CHARS,
    deterministic_context,
    extractive_summary,
    extractive_tags,
    open_questions,
)
from maxy.memoryagent.model import add_entry_prompt, answer_tags, answer_text, format_history, put_context_prompt

ADA = "Ada"
BOB = "Bob"


def turn(speaker: str, content: str, role: str = "user", **kw: str) -> ChatMessage:
    return ChatMessage(role=role, content=content, speaker=speaker, **kw)


def test_a_short_turn_is_kept_whole_after_its_date_and_speaker() -> None:
    m = turn(ADA, "The Globex invoice  for\nFebruary is wrong.", timestamp="2024-03-01T09:30:00+00:00")
    assert extractive_summary(m) == "[2024-03-01] Ada: The Globex invoice for February is wrong."
    assert extractive_summary(ChatMessage("assistant", "Done.")) == "assistant: Done."


def test_a_long_turn_keeps_its_leading_sentences_within_the_budget() -> None:
    first = "I moved to Leeds in May."
    second = "The new flat is close to the station."
    rest = " ".join(f"Filler sentence number {i} about nothing in particular." for i in range(40))
    summary = extractive_summary(turn(BOB, f"{first} {second} {rest}"))
    assert summary.startswith(f"Bob: {first} {second}")
    assert len(summary) <= SUMMARY_CHARS
    assert summary.endswith(".")  # whole sentences only while they fit


def test_a_single_endless_sentence_is_cut_at_a_word_with_an_ellipsis() -> None:
    summary = extractive_summary(turn(BOB, "word " * 200))
    assert len(summary) <= SUMMARY_CHARS and summary.endswith("word…") and "  " not in summary


@given(st.text(min_size=1, max_size=3000), st.none() | st.sampled_from([ADA, BOB]))
def test_the_summary_is_deterministic_bounded_and_one_line(text: str, speaker: str | None) -> None:
    m = ChatMessage("user", text, speaker=speaker)
    summary = extractive_summary(m)
    assert summary == extractive_summary(m)
    assert len(summary) <= SUMMARY_CHARS and "\n" not in summary
    assert summary.startswith(f"{speaker or 'user'}: ")


def test_tags_name_the_role_the_speaker_and_a_question() -> None:
    assert extractive_tags(turn(ADA, "Where is the invoice? Thanks.")) == {
        "role": "user",
        "speaker": "Ada",
        "kind": "question",
    }
    assert extractive_tags(ChatMessage("assistant", "Here it is.")) == {"role": "assistant"}


def test_a_question_someone_else_answered_is_not_open() -> None:
    turns = [
        turn(ADA, "Did the refund go through? I waited a week."),
        turn(BOB, "Yes, on Monday.", role="assistant"),
        turn(ADA, "Great. Can you also send the receipt?"),
        turn(ADA, "And what about March?"),
    ]
    assert open_questions(turns) == ["Ada: Can you also send the receipt?", "Ada: And what about March?"]
    assert open_questions(turns[:2]) == []


def test_the_context_lists_recent_entries_newest_first_and_open_questions() -> None:
    entries = [{"summary": "Ada: second thing"}, {"summary": None, "rawEntry": "first\nthing"}]
    turns = [turn(BOB, "All sorted.", role="assistant"), turn(ADA, "When is the next invoice due?")]
    context = deterministic_context("support-42", entries, turns, session_id="s1")
    assert context == deterministic_context("support-42", entries, turns, session_id="s1")
    assert context.splitlines()[0] == "# Context of support-42"
    assert "Last session: s1" in context
    recent = context.split("## Recent entries\n")[1].split("\n\n")[0]
    assert recent.splitlines() == ["- Ada: second thing", "- first thing"]
    assert context.split("## Open questions\n")[1].splitlines() == ["- Ada: When is the next invoice due?"]


def test_an_empty_memory_still_gets_a_context_saying_so() -> None:
    context = deterministic_context("m", [], [])
    assert "- none yet" in context and context.rstrip().endswith("- none")


def test_control_states_say_what_they_do() -> None:
    assert [c.value for c in ControlState] == [
        "start_session",
        "process_message",
        "process_message_and_flush",
        "end_session",
    ]
    assert [c.processes_message for c in ControlState] == [False, True, True, False]
    m = turn(ADA, "hi", message_id="m1")
    assert ChatMessage.from_json(m.to_json()) == m and "timestamp" not in m.to_json()


PROMPTS = {
    "entry_capture_prompt": "CAPTURE-RULES",
    "summary_prompt": "SUMMARY-RULES",
    "context_prompt": "CONTEXT-RULES",
}


def test_the_entry_prompt_holds_the_history_the_message_and_both_rule_sets() -> None:
    history = [ChatMessage("system", "Previous context:\nAda is a customer."), turn(BOB, "x" * 5000, role="assistant")]
    message = turn(ADA, "The invoice is wrong.", timestamp="2024-03-01T09:30:00+00:00")
    prompt = add_entry_prompt("support-42", history, message, PROMPTS)
    assert (
        '<message role="user" speaker="Ada" time="2024-03-01T09:30:00+00:00">\nThe invoice is wrong.\n</message>'
        in prompt
    )
    assert "Previous context:\nAda is a customer." in prompt and "assistant (Bob): " in prompt
    assert "x" * 2001 not in prompt  # earlier turns are cut
    assert prompt.index("CAPTURE-RULES") < prompt.index("SUMMARY-RULES") and "CONTEXT-RULES" not in prompt


def test_the_context_prompt_holds_the_whole_thread_and_the_context_rules() -> None:
    prompt = put_context_prompt("m", [turn(ADA, "one"), turn(BOB, "two")], PROMPTS)
    assert "<conversation>\nuser (Ada): one\n\nuser (Bob): two\n</conversation>" in prompt
    assert "CONTEXT-RULES" in prompt and "CAPTURE-RULES" not in prompt
    assert format_history([]) == "(nothing yet)"


def test_the_models_tags_are_kept_short_flat_and_few() -> None:
    assert answer_tags({"topic": "billing", "bad key!": "x", "n": 3, "nested": {"a": 1}, "flag": True}) == {
        "topic": "billing",
        "bad_key": "x",
        "n": "3",
    }
    assert answer_tags(["a", "b"]) == {"tag0": "a", "tag1": "b"}
    assert len(answer_tags({f"k{i}": "v" for i in range(50)})) == 12
    assert answer_tags("nope") == {}


@pytest.mark.parametrize("value", [None, "", "   ", 3, ["a"]])
def test_a_summary_that_is_not_text_is_an_unreadable_answer(value: object) -> None:
    with pytest.raises(LLMUnavailable) as err:
        answer_text(value, "summary", 100)
    assert err.value.reason == "unreadable-answer"
