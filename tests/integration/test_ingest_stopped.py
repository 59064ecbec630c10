"""A large file's ingest through the command line, against the real Neo4j and the real
embedder: the estimate up front, the progress lines of a piped ingest, and an ingest stopped
by SIGINT or SIGKILL in a real process: named by ``maxy status``, resumed (same content) or
cleaned up (changed content) by the next ingest, or removed by ``maxy purge --stopped``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from maxy.ingest import attachment_id_for_path

from tests.cli_inprocess import maxy

REPO = Path(__file__).resolve().parents[2]
BATCH = "8"  # nodes per transaction: a file of a few dozen chunks takes the staged path


def write_doc(path: Path, version: int, sections: int = 14) -> Path:
    body = [f"# Field guide v{version}"]
    for s in range(sections):
        sentences = " ".join(
            f"Version {version} part {s} line {i} tells how the heron {('waits', 'wades', 'strikes')[i % 3]} "
            f"in the reeds at {('dawn', 'noon', 'dusk')[(i + s) % 3]}."
            for i in range(36)
        )
        body.append(f"## Part {s}\n\n{sentences}")
    path.write_text("\n\n".join(body) + "\n")
    return path


@pytest.fixture()
def env(account, data_root, tmp_path) -> dict[str, str]:
    """The command's environment: this account, small transactions, a cache folder of its own
    (the remembered rate lives there)."""
    values = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    values.update(
        ACCOUNT_ID=account.account_id,
        DATA_ROOT=str(data_root),
        MAXY_INGEST_BATCH_NODES=BATCH,
        MAXY_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "platform"), os.environ.get("PYTHONPATH")])),
    )
    return values


def graph_of(db, account_id: str, att: str) -> dict:
    """What the graph holds of a document: live and hidden nodes, and the shape of its hierarchy."""
    row = db.read(
        """
        MATCH (n:Node {accountId: $acc}) WHERE n.attachmentId = $att
        WITH count(CASE WHEN n.pendingWrite IS NOT NULL THEN 1 END) AS hidden,
             count(CASE WHEN n.pendingWrite IS NULL THEN 1 END) AS live
        OPTIONAL MATCH (d:KnowledgeDocument {accountId: $acc, attachmentId: $att}) WHERE d.pendingWrite IS NULL
        OPTIONAL MATCH (d)-[:HAS_SECTION]->(s:Section)-[:HAS_CHUNK]->(c:Chunk)
        WITH hidden, live, d, collect(c) AS chunks
        RETURN hidden, live, d.chunkCount AS chunkCount, d.sectionCount AS sectionCount,
               [k IN keys(coalesce(d, {})) WHERE k STARTS WITH 'staged'] AS marks,
               [c IN chunks | c.content] AS contents,
               size([c IN chunks WHERE c.embedding IS NULL]) AS bare,
               COUNT { MATCH (:Chunk {accountId: $acc, attachmentId: $att})-[:NEXT]->(:Chunk) } AS nexts
        """,
        acc=account_id,
        att=att,
    )[0]
    return dict(row)


def assert_whole(db, account_id: str, att: str, clean: dict) -> dict:
    """The document as a clean ingest of the same file makes it: same chunks, all embedded and
    chained, nothing hidden, no staging marks."""
    now = graph_of(db, account_id, att)
    assert now["hidden"] == 0 and now["marks"] == []
    assert now["chunkCount"] == clean["chunkCount"] == len(now["contents"])
    assert sorted(now["contents"]) == sorted(clean["contents"])
    assert now["bare"] == 0
    assert now["nexts"] == clean["nexts"]
    assert now["live"] == clean["live"]
    return now


def start_ingest(f: Path, env: dict[str, str]) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "maxy.cli", "--verbose", "ingest", str(f)]
    # SIGINT as a terminal's Ctrl-C sends it (a process started in the background ignores it)
    return subprocess.Popen(
        cmd,
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def stop_after_batches(proc: subprocess.Popen, sig: int, batches: int = 3) -> list[str]:
    """Send ``sig`` once ``batches`` transactions of the staged copy are in; the lines read."""
    lines: list[str] = []
    seen = 0
    deadline = time.monotonic() + 120
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "[ingest] op=batch" in line:
                seen += 1
                if seen >= batches:
                    proc.send_signal(sig)
                    break
            if time.monotonic() > deadline:
                break
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr:
            lines.extend(proc.stderr.read().splitlines(keepends=True))
            proc.stderr.close()
    return lines


def clean_copy(db, account, f: Path, env: dict[str, str], tmp_path: Path) -> dict:
    """The same file ingested whole, once, under another attachment id: what a resumed or
    cleaned-up ingest must end as."""
    att = "clean-copy"
    done = maxy(["ingest", str(f), "--attachment-id", att], env=env)
    assert done.returncode == 0, done.stderr
    return graph_of(db, account.account_id, att)


def test_estimate_line_and_piped_progress(db, account, env, tmp_path):
    f = write_doc(tmp_path / "guide.md", 1)
    cache = Path(env["MAXY_CACHE_DIR"])
    cache.mkdir()
    # the rate remembered from a last run (a slow machine): this file then takes minutes
    done = maxy(["ingest", str(f), "--json"], env=env)  # measures the rate first: no rate remembered
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout)["documents"][0]
    assert first["estimate"]["rateFrom"] == "measured now" and first["estimate"]["chunksPerSecond"] > 0
    assert abs(first["estimate"]["chunks"] - first["chunks"]) <= first["chunks"], "the size-based guess is near"
    kept = json.loads((cache / "ingest-rate.json").read_text())
    [(key, rate)] = kept.items()
    assert key.endswith("|extractive") and rate["chunksPerSecond"] > 0
    assert 300 <= rate["charsPerChunk"] <= 1500, "within the chunk bounds"

    (cache / "ingest-rate.json").write_text(json.dumps({key: {"chunksPerSecond": 0.2, "charsPerChunk": 900}}))
    write_doc(f, 2)
    done = maxy(["ingest", str(f)], env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    [estimate] = [line for line in lines if "chunks/s" in line]
    assert re.fullmatch(
        r"guide\.md: about [\d,]+ chunks, about \d+ min at 0\.2 chunks/s \(stop with Ctrl-C; "
        r"the next ingest of this file resumes or cleans up\)",
        estimate,
    ), estimate
    tenths = [line for line in lines if re.fullmatch(r"ingest: guide\.md \d+% \([\d,]+/[\d,]+ chunks.*\)", line)]
    assert len(tenths) >= 4, lines
    shares = [int(re.search(r" (\d+)% ", line).group(1)) for line in tenths]  # type: ignore[union-attr]
    assert shares == sorted(shares) and len({s // 10 for s in shares}) == len(shares), "one line per tenth"
    assert any(" left)" in line for line in tenths), "the time left, once chunks are written"
    assert lines[-1] == "ingest: 1/1 guide.md done"
    assert lines.index(estimate) < lines.index(tenths[0])
    # the run's own rate replaced the slow guess
    assert json.loads((cache / "ingest-rate.json").read_text())[key]["chunksPerSecond"] > 0.2

    quiet = maxy(["--quiet", "ingest", str(write_doc(f, 3))], env=env)
    assert quiet.returncode == 0 and quiet.stderr == "", "--quiet: no progress lines"


def test_small_files_piped_get_a_line_each(db, account, env, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(3):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nA short note about herons, number {i}.\n")
    done = maxy(["ingest", str(folder)], env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(line for line in done.stderr.splitlines() if line.startswith("ingest: ")) == [
        f"ingest: {i}/3 n{j}.md done" for i, j in zip((1, 2, 3), (0, 1, 2), strict=True)
    ]
    assert "chunks/s" not in done.stderr, "no estimate for small files"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_stopped_ingest_is_named_then_resumed(db, account, env, tmp_path, sig):
    f = write_doc(tmp_path / "guide.md", 1)
    att = attachment_id_for_path(f)
    clean = clean_copy(db, account, f, env, tmp_path)
    lines = stop_after_batches(start_ingest(f, env), sig)
    assert any("[ingest] op=batch" in line for line in lines)
    said = [
        line for line in lines if re.match(r"guide\.md: stopped; the [\d,]+ chunks written so far stay hidden", line)
    ]
    if sig == signal.SIGINT:  # Ctrl-C: the command says what it leaves and the ways out
        [line] = said
        assert line.rstrip().endswith(f"the next 'maxy ingest {f}' resumes, or 'maxy purge --stopped' removes them")
    else:
        assert said == [], "a killed process says nothing"
    left = graph_of(db, account.account_id, att)
    assert left["hidden"] >= 3 * int(BATCH) and left["live"] == 0, "killed while staging"

    status = maxy(["status", "--json"], env=env)
    report = json.loads(status.stdout)
    [stopped] = report["data"]["ingests"]
    assert stopped["state"] == "stopped" and stopped["attachmentId"] == att
    assert stopped["nodes"] == left["hidden"] and stopped["path"] == str(f) and stopped["startedAt"]
    assert report["state"] == "warning" and report["healthy"] and report["warnings"]
    text = maxy(["status"], env=env).stdout
    assert (
        f"warning: 1 stopped ingest(s) left hidden nodes — guide.md (attachment {att}, {left['hidden']:,} nodes" in text
    )
    assert f"'maxy ingest {f}' of the same file resumes or removes them" in text
    assert text.rstrip().endswith("healthy, with 1 warning(s)")

    again = maxy(["ingest", str(f), "--json"], env=env)
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)["documents"][0]
    assert 0 < doc["resumedChunks"] < doc["chunks"] and doc["removedLeftover"] == 0
    assert f"guide.md: resumed: {doc['resumedChunks']:,} of about " in again.stderr
    assert doc["embedded"] < 1 + doc["sections"] + doc["chunks"], "the kept nodes were not embedded again"
    assert_whole(db, account.account_id, att, clean)
    assert json.loads(maxy(["status", "--json"], env=env).stdout)["state"] == "healthy"


def test_changed_file_after_a_stop_is_cleaned_up(db, account, env, tmp_path):
    f = write_doc(tmp_path / "guide.md", 1)
    att = attachment_id_for_path(f)
    stop_after_batches(start_ingest(f, env), signal.SIGKILL)
    hidden = graph_of(db, account.account_id, att)["hidden"]
    assert hidden > 0
    write_doc(f, 2, sections=10)
    clean = clean_copy(db, account, f, env, tmp_path)
    again = maxy(["ingest", str(f)], env=env)
    assert again.returncode == 0, again.stderr
    assert f"guide.md: removed {hidden:,} nodes an earlier stopped ingest left" in again.stderr.splitlines()
    assert "resumed" not in again.stderr
    assert_whole(db, account.account_id, att, clean)


def test_purge_stopped_removes_them_and_leaves_a_running_one(db, account, env, tmp_path):
    f = write_doc(tmp_path / "guide.md", 1)
    att = attachment_id_for_path(f)
    stop_after_batches(start_ingest(f, env), signal.SIGKILL)
    hidden = graph_of(db, account.account_id, att)["hidden"]

    where = account.label()  # the account the command wrote to, by name
    listed = maxy(["purge", "--stopped", "--dry-run"], env=env)
    assert listed.stdout.strip() == (
        f"would remove {hidden:,} hidden node(s) of 1 stopped ingest(s) from {where}: "
        f"guide.md (attachment {att}, {hidden:,} nodes)"
    )
    assert graph_of(db, account.account_id, att)["hidden"] == hidden

    # another document's staged copy, written by a process that still runs: left alone
    other = write_doc(tmp_path / "other.md", 1)
    other_att = attachment_id_for_path(other)
    stop_after_batches(start_ingest(other, env), signal.SIGKILL)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        db.autocommit(
            "MATCH (d:KnowledgeDocument {accountId: $acc, attachmentId: $att}) WHERE d.pendingWrite IS NOT NULL "
            "SET d.stagedPid = $pid",
            acc=account.account_id,
            att=other_att,
            pid=alive.pid,
        )
        report = json.loads(maxy(["status", "--json"], env=env).stdout)
        states = {x["attachmentId"]: x["state"] for x in report["data"]["ingests"]}
        assert states == {att: "stopped", other_att: "running"}
        assert any("1 ingest(s) being written — other.md" in note for note in report["notes"])

        done = maxy(["purge", "--stopped", "--json"], env=env)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert [x["attachmentId"] for x in out["removed"]] == [att] and out["nodes"] == hidden
        assert [x["attachmentId"] for x in out["running"]] == [other_att]
        assert graph_of(db, account.account_id, att)["hidden"] == 0
        assert graph_of(db, account.account_id, other_att)["hidden"] > 0
    finally:
        alive.kill()
        alive.wait()
    again = maxy(["purge", "--stopped"], env=env)
    assert again.stdout.startswith("removed ") and "other.md" in again.stdout
    assert maxy(["purge", "--stopped"], env=env).stdout.strip() == f"no stopped ingest left hidden nodes in {where}"


def test_a_replaced_version_left_after_the_switch_is_named_and_purged(db, account, env, tmp_path, monkeypatch):
    """Stopped after its final switch: the new version is live, the old one waits hidden. An
    ingest of the unchanged file skips it, so status points at purge --stopped."""
    from maxy.graph.write import GraphWriter
    from maxy.ingest import ingest_document, parse_file
    from maxy.ingest import staged as staged_mod
    from maxy.ingest.summarize import ExtractiveSummarizer

    writer = GraphWriter(db, account, None, created_by="ingest", batch_size=int(BATCH))
    f = write_doc(tmp_path / "guide.md", 1, sections=4)
    ingest_document(writer, parse_file(f), "guide", summarizer=ExtractiveSummarizer())
    write_doc(f, 2, sections=5)
    real_remove = staged_mod.remove_tree

    def stop_after_the_switch(writer, root_id, att):
        if (
            root_id.endswith("-retired")
            and db.read("MATCH (d:Node {nodeId: $id}) RETURN count(d) AS n", id=root_id)[0]["n"]
        ):
            raise KeyboardInterrupt  # Ctrl-C right after the switch
        return real_remove(writer, root_id, att)

    monkeypatch.setattr(staged_mod, "remove_tree", stop_after_the_switch)
    with pytest.raises(KeyboardInterrupt):
        ingest_document(writer, parse_file(f), "guide", summarizer=ExtractiveSummarizer())
    monkeypatch.setattr(staged_mod, "remove_tree", real_remove)
    hidden = graph_of(db, account.account_id, "guide")["hidden"]
    assert hidden > 0

    report = json.loads(maxy(["status", "--json"], env=env).stdout)
    [left] = report["data"]["ingests"]
    assert left["replacedVersion"] and left["state"] == "stopped" and left["nodes"] == hidden
    [warning] = report["warnings"]
    assert "guide.md (the replaced version, not yet deleted) (attachment guide" in warning
    assert warning.endswith("'maxy purge --stopped' removes them") and "maxy ingest" not in warning

    done = maxy(["purge", "--stopped", "--json"], env=env)
    assert json.loads(done.stdout)["nodes"] == hidden
    now = graph_of(db, account.account_id, "guide")
    assert now["hidden"] == 0 and now["sectionCount"] == 5 and now["chunkCount"] == len(now["contents"])
    assert json.loads(maxy(["status", "--json"], env=env).stdout)["state"] == "healthy"


def test_the_bar_on_a_terminal_shows_chunks_and_the_time_left(db, account, env, tmp_path):
    """On a terminal (a real pseudo-terminal as stderr): the estimate line above the bar, and a
    row of the large file's chunks whose time left is rich's, from the chunks written."""
    import pty

    f = write_doc(tmp_path / "guide.md", 1)
    cache = Path(env["MAXY_CACHE_DIR"])
    cache.mkdir()
    first = maxy(["ingest", str(write_doc(tmp_path / "warm.md", 1)), "--json"], env=env)
    assert first.returncode == 0, first.stderr
    [key] = json.loads((cache / "ingest-rate.json").read_text())  # the embedder's and summariser's
    (cache / "ingest-rate.json").write_text(json.dumps({key: {"chunksPerSecond": 0.3, "charsPerChunk": 700}}))

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "maxy.cli", "ingest", str(f)],
        env={**env, "COLUMNS": "160", "TERM": "xterm"},
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    chunks = bytearray()
    try:
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process is done
                break
            if not data:
                break
            chunks.extend(data)
    finally:
        proc.wait(timeout=300)
        os.close(leader)
    assert proc.returncode == 0
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", chunks.decode("utf-8", errors="replace"))
    assert re.search(r"guide\.md: about [\d,]+ chunks, about \d+ min at 0\.3 chunks/s", screen), screen[-2000:]
    rows = re.findall(r"guide\.md\s+\S*\s+(\d+)/(\d+)\s+\d:\d\d:\d\d\s+(\d:\d\d:\d\d)\s+chunks", screen)
    # rich shows -:--:-- until it has a rate: a time while chunks remain is the rate's
    assert any(int(done) < int(total) for done, total, _ in rows), screen[-2000:]
