"""Conversation import, message search (shared by the tool and the CLI) and the eval."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from maxy.config import load_settings
from maxy.conversations import search_messages
from maxy.conversations.importing import build_specs, import_messages, parse_message, read_messages
from maxy.errors import ValidationError
from maxy.evaluation.conversations import evaluate
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter

from tests.cli_inprocess import maxy

ROWS = [
    ("c1", "c1/s1", "D1:1", "Ana", "Hi Ben! I finally adopted a dog last week.", "2023-05-08T13:56:00", None),
    ("c1", "c1/s1", "D1:2", "Ben", "That's wonderful! What breed is it?", "2023-05-08T13:56:00", None),
    ("c1", "c1/s1", "D1:3", "Ana", "A beagle puppy named Pepper.", "2023-05-08T13:56:00", "a beagle puppy on a rug"),
    ("c1", "c1/s2", "D2:1", "Ben", "I started pottery classes on Tuesdays.", "2023-06-01T10:00:00", None),
    (
        "c1",
        "c1/s2",
        "D2:2",
        "Ana",
        "Pottery sounds relaxing, send me a photo of your first bowl!",
        "2023-06-01T10:00:00",
        None,
    ),
]


def write_jsonl(path: Path, rows) -> Path:
    with path.open("w") as fh:
        for conv, session, mid, speaker, content, ts, caption in rows:
            row = {
                "conversation": conv,
                "session": session,
                "id": mid,
                "speaker": speaker,
                "role": "user",
                "content": content,
                "timestamp": ts,
            }
            if caption:
                row["image_caption"] = caption
            fh.write(json.dumps(row) + "\n")
    return path


def test_specs_carry_transcript_line_context_and_links(tmp_path):
    msgs = read_messages(write_jsonl(tmp_path / "m.jsonl", ROWS))
    specs = build_specs("acc-1", msgs)
    convs = [s for s in specs if "Conversation" in s.labels]
    messages = [s for s in specs if "Message" in s.labels]
    assert len(convs) == 2 and len(messages) == 5
    third = messages[2].properties
    assert third["content"] == "Ana: A beagle puppy named Pepper. [image: a beagle puppy on a rug]"
    assert third["summary"].splitlines()[0].startswith("Ana: Hi Ben!")  # two turns before it
    assert [e.type for e in messages[1].edges] == ["HAS_MESSAGE", "NEXT"]


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"conversation": "c", "session": "s", "id": "1", "speaker": "", "content": "x"}, "speaker"),
        ({"conversation": "c", "session": "s", "speaker": "a", "content": "x"}, "id"),
        ("not an object", "object"),
    ],
)
def test_bad_lines_name_the_problem(row, field):
    with pytest.raises(ValidationError) as exc:
        parse_message(row, "f.jsonl:3")
    assert exc.value.field == "f.jsonl:3" and field in exc.value.reason


def test_import_is_idempotent_and_search_respects_session_and_guards(db, account, make_account, embedder, tmp_path):
    msgs = read_messages(write_jsonl(tmp_path / "m.jsonl", ROWS))
    writer = GraphWriter(db, account, embedder)
    first = import_messages(writer, msgs)
    again = import_messages(writer, msgs)
    assert first["messages"] == 5 and first["created"] == 7 and again["created"] == 0
    count = db.read("MATCH (m:Message {accountId: $a}) RETURN count(m) AS c", a=account.account_id)[0]["c"]
    assert count == 5
    other = make_account("other")
    import_messages(GraphWriter(db, other, embedder), msgs)  # the same chat in another account
    rows = search_messages(db, Caller(account.account_id), embedder, "what dog breed did Ana adopt?", limit=3)
    # Each turn is embedded with its neighbours, so every turn of the dog session matches;
    # the pottery session must not outrank them.
    assert [r["sessionId"] for r in rows] == ["c1/s1"] * 3
    assert "D1:3" in {r["messageId"] for r in rows}
    ids = {r["nodeId"] for r in search_messages(db, Caller(account.account_id), embedder, "dog", limit=10)}
    theirs = {r["nodeId"] for r in search_messages(db, Caller(other.account_id), embedder, "dog", limit=10)}
    assert ids and theirs and not ids & theirs
    only = search_messages(db, Caller(account.account_id), embedder, "dog pottery", session_id="c1/s2", limit=10)
    assert only and {r["sessionId"] for r in only} == {"c1/s2"}


def test_eval_reports_recall_overall_and_by_category(db, embedder, data_root, tmp_path):
    folder = tmp_path / "conv"
    folder.mkdir()
    write_jsonl(folder / "messages.jsonl", ROWS)
    (folder / "questions.jsonl").write_text(
        json.dumps(
            {
                "conversation": "c1",
                "question": "What is the name of Ana's beagle?",
                "evidence": ["D1:3"],
                "category": "single-hop",
            }
        )
        + "\n"
        + json.dumps(
            {
                "conversation": "c1",
                "question": "When does Ben go to pottery?",
                "evidence": ["D2:1"],
                "category": "temporal",
            }
        )
        + "\n"
    )
    settings = load_settings(DATA_ROOT=data_root)
    result = evaluate(settings, db, embedder, folder)
    assert result["questions"] == 2
    assert result["overall"]["recall@25"] == 1.0 and 0.0 <= result["overall"]["recall@5"] <= 1.0
    assert set(result["by_category"]) == {"single-hop", "temporal"}
    env = dict(os.environ, DATA_ROOT=str(data_root))
    proc = maxy(["eval", "conversations", str(folder), "--json"], env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data["overall"]) == {"recall@5", "recall@10", "recall@25"} and data["questions"] == 2
    # one conversation of two sessions cut into five runs: each question in the run of its session
    assert {k: v["questions"] for k, v in data["folds"]["per_fold"].items()} == {"c1 1/5": 1, "c1 3/5": 1}
    assert list(data["folds"]["conversations"]["per_fold"]) == ["c1"]
    mean = data["folds"]["figures"]["recall@25"]
    assert mean == {"mean": 1.0, "min": 1.0, "max": 1.0, "sd": 0.0}
    bad = maxy(["eval", "conversations", str(folder), "--folds", "1"], env)
    assert bad.returncode != 0 and "--folds" in bad.stderr and "Traceback" not in bad.stderr
    for account_dir in (data_root / "accounts").iterdir():
        db.write("MATCH (n:Node {accountId: $a}) DETACH DELETE n", a=account_dir.name)


def test_a_busy_account_never_crowds_one_session_out(db, account, embedder):
    """More than a candidate list of closer messages in other sessions: the pinned session's
    own message is still found, through the session filter inside the vector index."""
    from maxy.graph.write import NodeSpec

    w = GraphWriter(db, account, embedder)
    w.write_many(
        [
            NodeSpec(
                ["Message"],
                {"content": f"Bo: my boiler is broken again ({i})", "sessionId": "busy", "messageId": f"b{i}"},
            )
            for i in range(130)
        ]
    )
    w.write(
        NodeSpec(
            ["Message"],
            {"content": "Al: the heating at the cottage stopped working", "sessionId": "quiet", "messageId": "q1"},
        )
    )
    # A paraphrase with no word in common reads as weakly relevant: the cut is off to test the filter.
    caller = Caller(account.account_id)
    rows = search_messages(db, caller, embedder, "my boiler is broken", session_id="quiet", limit=5, min_relevance=0)
    assert [r["messageId"] for r in rows] == ["q1"]


def test_session_search_survives_a_failing_filtered_search(db, make_account, embedder, tmp_path):
    """When the message index's filtered SEARCH fails (Neo4j 2026.08, see
    docs/neo4j-vector-filter-bug.md), the exact fallback scans only the asked session."""
    from maxy.search import clear_index_cache

    from tests.faults import FilteredSearchFails

    acct = make_account("session-fallback")
    import_messages(GraphWriter(db, acct, embedder), read_messages(write_jsonl(tmp_path / "m.jsonl", ROWS)))
    caller = Caller(acct.account_id)
    normal = search_messages(db, caller, embedder, "dog pottery", session_id="c1/s2", limit=10)
    try:
        fallback = search_messages(
            FilteredSearchFails(db), caller, embedder, "dog pottery", session_id="c1/s2", limit=10
        )
        assert fallback and {r["sessionId"] for r in fallback} == {"c1/s2"}
        assert [r["messageId"] for r in fallback] == [r["messageId"] for r in normal]
    finally:
        clear_index_cache()
