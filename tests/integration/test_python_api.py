"""The Python API (``from maxy import Memory``) against the real Neo4j: the README's example
runs as written, and every method reaches the same code, guards and errors as its tool."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from maxy import Memory
from maxy.errors import GraphWriteError, ValidationError

from tests.plugins_fixture.helpers import REPO, child_env


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    section = text[text.index("## From Python") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def run_python(code: str, data_root, account) -> subprocess.CompletedProcess[str]:
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    for name in ("LOG_LEVEL", "MAXY_LOG_LEVEL"):  # a library reads no logging setting of its own
        env.pop(name, None)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=180)


def test_the_readme_example_runs_as_written(account, data_root):
    code = readme_example()
    assert len(code.strip().splitlines()) <= 10
    done = run_python(code, data_root, account)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 3
    assert any("Organization" in line and "Globex Corporation" in line for line in lines)
    assert any("Person" in line and "Ada Lovelace" in line for line in lines)
    assert done.stderr == "", "a library is silent until the application configures logging"


def test_the_library_logs_through_the_applications_logging(account, data_root):
    """``logging.basicConfig`` is all an application needs: the lines reach its handler by
    propagation, at its level, in its format, once each."""
    setup = "import logging\nlogging.basicConfig(level=logging.INFO, format='app: %(name)s %(message)s')\n"
    done = run_python(setup + readme_example(), data_root, account)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    writes = [ln for ln in lines if ln.startswith("app: maxy [graph-write] ")]
    assert len(writes) >= 5, done.stderr[-2000:]  # five writes, one line or more each
    assert any(ln.startswith("app: maxy [graph-search:hybrid] ") for ln in lines), done.stderr[-2000:]
    assert not [ln for ln in lines if ln.startswith("[")], "no second handler of Maxy's own"
    quiet = run_python(
        "import logging\nlogging.basicConfig(level=logging.ERROR)\n" + readme_example(), data_root, account
    )
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr[-2000:]


@pytest.fixture()
def local(account, settings):
    """The settings with the test account's data root."""
    return settings.model_copy(update={"DATA_ROOT": account.data_root})


@pytest.fixture()
def memory(account, local, embedder):
    with Memory(account.account_id, settings=local, embedder=embedder) as m:
        yield m


def test_every_method_on_one_account(memory, tmp_path):
    org = memory.write(["Organization"], {"name": "Initech"})
    person = memory.write(["Person"], {"name": "Peter Gibbons"}, edges=[{"type": "WORKS_FOR", "target": org["nodeId"]}])
    got = memory.get(person["nodeId"], hops=1)
    assert [n["nodeId"] for n in got["nodes"][0]["neighbours"]] == [org["nodeId"]]
    hits = memory.search("Initech", limit=3, expand_hops=0)
    assert hits[0]["nodeId"] == org["nodeId"], "an exact name comes first"
    assert memory.unlink(person["nodeId"], "WORKS_FOR", org["nodeId"])["removed"] == 1
    assert memory.forget(org["nodeId"])["forgotten"] is True
    assert org["nodeId"] not in [h["nodeId"] for h in memory.search("Initech", expand_hops=0)]
    doc = tmp_path / "tps.md"
    doc.write_text("# TPS reports\n\nEvery TPS report needs the new cover sheet.\n")
    assert memory.ingest(doc)[0]["error"] is None
    assert any("cover sheet" in str(h["properties"]) for h in memory.search("TPS cover sheet", limit=5))
    memory.append("s-1", "Did you get the memo about the cover sheets?", speaker="Bill")
    memory.append("s-1", "Yes, I have the memo.", speaker="Peter", role="user")
    rows = memory.search_conversations("memo about cover sheets", session_id="s-1")
    assert rows and "memo" in rows[0]["content"]


def test_errors_name_the_field(memory):
    with pytest.raises(ValidationError, match=r"^properties: nothing to remember"):
        memory.write(["Note"], {"text": " "})
    with pytest.raises(ValidationError, match=r"^edges\[0\]\.target: "):
        memory.write(["Note"], {"text": "x"}, edges=[{"type": "ABOUT"}])
    with pytest.raises(GraphWriteError, match=r"no node 'missing'"):
        memory.forget("missing")


def test_a_pinned_memory_writes_inside_its_view(account, local, embedder):
    with Memory(account.account_id, settings=local, embedder=embedder) as admin:
        hidden = admin.write(["Note"], {"text": "admin only plan"}, scope="admin")
    with Memory(account.account_id, scopes=["public"], settings=local, embedder=embedder) as public:
        mine = public.write(["Note"], {"text": "public opening hours"})
        assert public.get(mine["nodeId"])["nodes"][0]["scope"] == "public"
        assert public.get(hidden["nodeId"])["missing"] == [hidden["nodeId"]]
        with pytest.raises(GraphWriteError):
            public.forget(hidden["nodeId"])
