"""``maxy eval calibrate`` and ``maxy eval relevance`` on small folders: every development
question and noise query is asked of its graph, the fit stores a calibration file, and the
report says how often the first relevant hit clears the cut and how often noise is refused."""

from __future__ import annotations

import json
import os

from maxy.config import load_settings
from maxy.evaluation import noise
from maxy.evaluation.relevance import SPLITS, ask_all, fit, measure, write_calibration
from maxy.search.relevance import Calibration

from tests.cli_inprocess import maxy
from tests.integration.test_memory_eval import write_folder

ABSTRACTS = {
    "d1": ("Insulin resistance", "Insulin resistance in skeletal muscle precedes type 2 diabetes in obese adults."),
    "d2": ("Statins and stroke", "Statin therapy lowers the risk of ischaemic stroke after a transient attack."),
    "d3": ("Sleep and memory", "Slow-wave sleep consolidates declarative memory in healthy young volunteers."),
}
CLAIMS = {
    "q1": ("Muscle insulin resistance comes before type 2 diabetes.", "d1"),
    "q2": ("Statins reduce stroke risk.", "d2"),
}
MESSAGES = [
    ("c1", "D1:1", "Ana", "I adopted a beagle last week, his name is Biscuit!"),
    ("c1", "D1:2", "Ben", "Lovely! I signed up for pottery classes on Tuesdays."),
    ("c1", "D2:1", "Ana", "Big news: I start a new job as a nurse on Monday."),
    ("c2", "D1:1", "Cy", "Training for the Berlin marathon is going well, 30 km today."),
]


def write_scifact(folder) -> None:
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as fh:
        for doc, (title, text) in ABSTRACTS.items():
            fh.write(json.dumps({"_id": doc, "title": title, "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w") as fh:
        for qid, (claim, _) in CLAIMS.items():
            fh.write(json.dumps({"_id": qid, "text": claim}) + "\n")
    rows = ["query-id\tcorpus-id\tscore"] + [f"{qid}\t{doc}\t1" for qid, (_, doc) in CLAIMS.items()]
    (folder / "qrels" / "dev.tsv").write_text("\n".join(rows) + "\n")


def write_locomo(folder) -> None:
    write_folder(folder)  # observations.jsonl and questions.jsonl
    with (folder / "messages.jsonl").open("w") as fh:
        for conv, mid, speaker, content in MESSAGES:
            row = {"conversation": conv, "session": f"{conv}/s1", "id": mid, "speaker": speaker}
            fh.write(json.dumps({**row, "role": "user", "content": content, "timestamp": "2023-05-08T13:56:00"}) + "\n")


def test_calibrate_and_measure_on_small_folders(db, embedder, data_root, tmp_path):
    scifact, locomo = tmp_path / "scifact", tmp_path / "locomo"
    write_scifact(scifact)
    write_locomo(locomo)
    settings = load_settings(DATA_ROOT=data_root)
    try:
        asked = ask_all(settings, db, embedder, scifact, locomo)
        by_split = {s: [a for a in asked if a.split == s] for s in {a.split for a in asked}}
        assert len(by_split["scifact"]) == 2 and len(by_split["noise:scifact"]) >= len(noise.LANGUAGE_QUERIES)
        assert {a.kind for a in by_split["noise:memory"]} == set(noise.KINDS)
        assert all(a.relevant[0] for a in by_split["scifact"]), "each claim's abstract comes first"
        assert all(len(a.signals) == len(a.hits) == len(a.relevant) for a in asked)

        calibration = fit(asked, embedder.name)
        report = measure(asked, calibration)
        assert set(report["splits"]) == set(SPLITS) and report["cut"] == calibration.cut
        assert report["splits"]["scifact"]["first_relevant_clears"] >= 0.9
        assert 0.0 <= report["noise"]["scifact"]["no_relevant_results"] <= 1.0

        stored = write_calibration(calibration, tmp_path / "relevance.json")
        data = json.loads(stored.read_text())["models"][embedder.name]
        assert Calibration.from_json(embedder.name, data).cut == calibration.cut

        env = dict(os.environ, DATA_ROOT=str(data_root))
        cli = maxy(["--verbose", "eval", "relevance", str(scifact), str(locomo), "--json"], env)
        assert cli.returncode == 0, cli.stderr
        shipped = json.loads(cli.stdout)
        assert shipped["model"] == embedder.name and set(shipped["noise"]) == set(SPLITS)
        assert "[eval:relevance] model=" in cli.stderr
        assert {"all", *SPLITS} <= set(shipped["reliability"]) and 0 <= shipped["reliability"]["all"]["ece"] <= 1
        fitted = maxy(["eval", "calibrate", str(scifact), str(locomo)], env)
        assert fitted.returncode == 0 and "Traceback" not in fitted.stderr, fitted.stderr
        assert "relevance shown in answers (held out, 5 folds): ECE " in fitted.stdout, fitted.stdout
        missing = maxy(["eval", "relevance", str(tmp_path / "nowhere"), str(locomo)], env)
        assert missing.returncode != 0 and "Traceback" not in missing.stderr
    finally:
        for account_dir in (data_root / "accounts").iterdir():
            db.write("MATCH (n:Node {accountId: $a}) DETACH DELETE n", a=account_dir.name)
