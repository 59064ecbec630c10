"""``maxy memory-agent run FILE.jsonl`` and ``maxy eval memory-agent``: a conversation file fed
through the memory agent as a user runs it, against the real Neo4j, without a model (degraded)
and through the fake Messages API (model); a second run writes no second entry; the evaluation
searches entries, messages and both in the same run and feeds nothing twice."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from maxy.config import load_settings
from maxy.evaluation.memory_agent import VARIANTS, evaluate
from maxy.graph.guards import Caller
from maxy.memoryagent import get_context, list_entries

from tests.cli_inprocess import maxy
from tests.fake_anthropic import FakeAnthropic
from tests.plugins_fixture.helpers import child_env

ALPHA_1 = [
    ("Ana", "I finally adopted a beagle puppy last weekend, her name is Biscuit."),
    ("Ben", "That is wonderful! How is she settling in?"),
    ("Ana", "She chewed my running shoes on the first night, but she is sweet."),
    ("Ben", "Ha, puppies. I started pottery classes on Tuesdays, by the way."),
    ("Ana", "Pottery sounds relaxing. What did you make first?"),
    ("Ben", "A lopsided blue mug that I use every morning."),
    ("Ana", "Do you think you will sell your pottery one day?"),
]
ALPHA_2 = [
    ("Ben", "Biscuit must be bigger now. Did the training help?"),
    ("Ana", "Yes, she sits and waits at the door now."),
    ("Ben", "My teacher wants me to enter a ceramics fair in October."),
]
BETA_1 = [
    ("Cy", "I signed up for the Berlin marathon in September."),
    ("Di", "Brave! How far do you run each week?"),
]


def write_conversations(path: Path) -> Path:
    rows = []
    for conversation, session, day, turns in (
        ("alpha", "alpha/s1", "2023-05-08T13:56:00", ALPHA_1),
        ("alpha", "alpha/s2", "2023-06-01T09:00:00", ALPHA_2),
        ("beta", "beta/s1", "2023-01-02T10:00:00", BETA_1),
    ):
        number = session[-1]
        for i, (speaker, content) in enumerate(turns, start=1):
            rows.append(
                {
                    "conversation": conversation,
                    "session": session,
                    "id": f"D{number}:{i}",
                    "speaker": speaker,
                    "role": "user",
                    "content": content,
                    "timestamp": day,
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(data_root: Path, account_id: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return maxy(
        ["--quiet", "memory-agent", "run", *args],
        {**child_env(data_root, ACCOUNT_ID=account_id), "ANTHROPIC_API_KEY": "", **env},
    )


def _count(db, account_id: str, label: str) -> int:
    rows = db.read(f"MATCH (n:{label} {{accountId: $a}}) RETURN count(n) AS n", a=account_id)
    return int(rows[0]["n"])


def test_run_feeds_each_session_and_a_second_run_writes_no_second_entry(db, account, data_root, tmp_path):
    file = write_conversations(tmp_path / "chat.jsonl")
    proc = _run(data_root, account.account_id, str(file), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["memories"] == ["alpha", "beta"]
    assert (summary["sessions"], summary["messages"], summary["entries"]) == (3, 12, 12)
    # alpha/s1: a flush at its sixth message and one at its end; alpha/s2 and beta/s1: their ends
    assert summary["contexts"] == 4
    assert summary["modes"].get("model", 0) == 0 and summary["degradedReasons"] == {"no-key": 15}
    caller = Caller(account.account_id)
    alpha = list_entries(db, caller, "alpha", limit=100)
    assert len(alpha) == 10 and len(list_entries(db, caller, "beta", limit=100)) == 2
    assert alpha[0]["messageId"] == "D2:3"  # recent first
    linked = db.read(
        "MATCH (e:MemoryEntry {accountId: $a})-[:RECORDS]->(m:Message {accountId: $a}) "
        "WHERE e.messageId = m.messageId RETURN count(e) AS n",
        a=account.account_id,
    )
    assert linked[0]["n"] == 12
    context = get_context(db, caller, "alpha")
    assert context is not None and "ceramics fair" in context["content"]  # the latest session is in it

    again = _run(data_root, account.account_id, str(file), "--json")
    assert again.returncode == 0, again.stderr
    assert _count(db, account.account_id, "MemoryEntry") == 12
    assert _count(db, account.account_id, "Message") == 12


def test_run_into_one_memory_through_the_model(db, account, data_root, tmp_path):
    file = write_conversations(tmp_path / "chat.jsonl")
    with FakeAnthropic() as fake:
        proc = _run(
            data_root,
            account.account_id,
            str(file),
            "--memory",
            "ana@example.org",
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=fake.url,
        )
    assert proc.returncode == 0, proc.stderr
    assert "12 message(s) in 3 session(s) of 1 memory(ies) (ana@example.org): 12 entries" in proc.stdout
    assert "without the model" not in proc.stdout
    assert fake.requests, "the model was asked"
    entries = list_entries(db, Caller(account.account_id), "ana@example.org", limit=100)
    assert len(entries) == 12


def test_run_refuses_bad_input_in_one_line(account, data_root, tmp_path):
    missing = _run(data_root, account.account_id, str(tmp_path / "none.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"conversation": "c", "session": "s"}\n')
    malformed = _run(data_root, account.account_id, str(bad))
    file = write_conversations(tmp_path / "chat.jsonl")
    bad_memory = _run(data_root, account.account_id, str(file), "--memory", "two words")
    # a bad argument is a usage error (2); a bad line of a good file, bad data (1)
    for proc, names, code in ((missing, "FILE", 2), (malformed, "bad.jsonl:1", 1), (bad_memory, "--memory", 2)):
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert proc.returncode == code and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert lines[0].startswith("error: ") and names in lines[0], lines[0]


def test_eval_searches_entries_messages_and_both_in_one_run(db, embedder, data_root, tmp_path):
    folder = tmp_path / "locomo"
    folder.mkdir()
    write_conversations(folder / "messages.jsonl")
    questions = [
        ("alpha", "What is the name of Ana's beagle?", ["D1:1"], "single-hop"),
        ("alpha", "Which fair does Ben's teacher want him to enter?", ["D2:3"], "single-hop"),
        ("beta", "Which marathon did Cy sign up for?", ["D1:1"], "temporal"),
    ]
    (folder / "questions.jsonl").write_text(
        "".join(
            json.dumps({"conversation": c, "question": q, "evidence": e, "category": k}) + "\n"
            for c, q, e, k in questions
        )
    )
    settings = load_settings(DATA_ROOT=data_root, ANTHROPIC_API_KEY="")
    first = evaluate(settings, db, embedder, folder)
    assert first["mode"] == "degraded" and set(first["written"]) == {"alpha", "beta"}
    for name in VARIANTS:
        figures = first[name]
        assert figures["questions"] == 3 and set(figures["by_category"]) == {"single-hop", "temporal"}
        assert figures["overall"]["recall@5"] == 1.0, (name, figures)
        folds = figures["folds"]  # alpha's two sessions are its early and late halves
        assert {k: v["questions"] for k, v in folds["per_fold"].items()} == {
            "alpha early": 1,
            "alpha late": 1,
            "beta early": 1,
        }
        assert list(folds["conversations"]["per_fold"]) == ["alpha", "beta"]
    second = evaluate(settings, db, embedder, folder)
    assert second["written"] == {}  # unchanged conversations are not fed again
    assert {name: second[name]["overall"] for name in VARIANTS} == {name: first[name]["overall"] for name in VARIANTS}
