"""``maxy eval memory``: facts written through memory-write's function, covered questions asked
through memory-search's, Recall@k of evidence ids overall and per category."""

from __future__ import annotations

import json
import os

import pytest
from maxy.config import load_settings
from maxy.errors import ValidationError
from maxy.evaluation.memory import evaluate

from tests.cli_inprocess import maxy

pytestmark = pytest.mark.alone  # counts Facts across accounts, and the evaluation applies the schema

FACTS = [
    ("c1", "s1", "Ana", "Ana adopted a beagle called Biscuit.", ["D1:3"], "2023-05-08T13:56:00"),
    ("c1", "s1", "Ben", "Ben takes pottery classes on Tuesdays.", ["D1:5"], "2023-05-08T13:56:00"),
    ("c1", "s2", "Ana", "Ana started a new job as a nurse.", ["D2:1", "D2:2"], "2023-06-01T09:00:00"),
    ("c2", "s1", "Cy", "Cy is training for a marathon in Berlin.", ["D1:1"], "2023-01-02T10:00:00"),
]
QUESTIONS = [
    ("c1", "What is the name of Ana's dog?", ["D1:3"], "single-hop"),
    ("c1", "What job did Ana start?", ["D2:1", "D2:2"], "single-hop"),
    ("c2", "Which race is Cy training for?", ["D1:1"], "multi-hop"),
    ("c1", "What does Ben cook?", ["D9:9"], "adversarial"),  # evidence no fact covers: not counted
]


def write_folder(folder) -> None:
    folder.mkdir()
    with (folder / "observations.jsonl").open("w") as fh:
        for conv, session, about, fact, evidence, ts in FACTS:
            row = {"conversation": conv, "session": session, "about": about, "fact": fact, "evidence": evidence}
            fh.write(json.dumps({**row, "timestamp": ts}) + "\n")
    with (folder / "questions.jsonl").open("w") as fh:
        for conv, question, evidence, category in QUESTIONS:
            fh.write(
                json.dumps({"conversation": conv, "question": question, "evidence": evidence, "category": category})
                + "\n"
            )


def test_memory_eval_on_a_small_folder(db, embedder, data_root, tmp_path):
    folder = tmp_path / "memory"
    write_folder(folder)
    settings = load_settings(DATA_ROOT=data_root)
    try:
        result = evaluate(settings, db, embedder, folder)
        assert result["questions"] == 3 and result["facts"] == 4
        assert result["overall"] == {"recall@5": 1.0, "recall@10": 1.0, "recall@25": 1.0}
        assert set(result["by_category"]) == {"single-hop", "multi-hop"}
        # c1's questions name sessions 1 to 9 (the uncovered one too): sessions 1 and 2 are its early half
        folds = result["folds"]["per_fold"]
        assert {k: v["questions"] for k, v in folds.items()} == {"c1 early": 2, "c2 early": 1}
        assert result["folds"]["conversations"]["figures"]["recall@5"]["mean"] == 1.0
        people = db.read(
            "MATCH (p:Person)<-[:ABOUT]-(f:Fact) WHERE f.text CONTAINS 'beagle' "
            "RETURN p.name AS name, f.validFrom AS since, f.evidence AS evidence"
        )
        assert [dict(r) for r in people] == [
            {"name": "Ana", "since": "2023-05-08T13:56:00+00:00", "evidence": ["D1:3"]}
        ]
        again = maxy(
            ["eval", "memory", str(folder), "--folds", "2", "--json"], dict(os.environ, DATA_ROOT=str(data_root))
        )
        assert again.returncode == 0, again.stderr
        assert list(json.loads(again.stdout)["folds"]["per_fold"]) == ["c1 all", "c2 all"]  # one run per conversation
        assert json.loads(again.stdout)["overall"] == result["overall"], "a rerun starts from fresh accounts"
        assert db.read("MATCH (f:Fact) WHERE f.text CONTAINS 'beagle' RETURN count(f) AS c")[0]["c"] == 1
    finally:
        for account_dir in (data_root / "accounts").iterdir():
            db.write("MATCH (n:Node {accountId: $a}) DETACH DELETE n", a=account_dir.name)


def test_a_broken_folder_names_the_file_and_line(tmp_path):
    from maxy.evaluation.memory import load

    (tmp_path / "observations.jsonl").write_text('{"conversation": "c1", "about": "Ana"}\n')
    (tmp_path / "questions.jsonl").write_text("")
    with pytest.raises(ValidationError, match=r"^observations\.jsonl:1: needs conversation, about, fact, evidence"):
        load(tmp_path)
    with pytest.raises(ValidationError, match=r"^DIR: .*observations\.jsonl is missing"):
        load(tmp_path / "nowhere")
