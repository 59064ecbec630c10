"""A bad value for every setting and every command-line option that takes one: each is
refused with one line on stderr naming the variable or the flag, exit 2 (a bad flag or
setting) or 1 (found while running), and never a traceback.

The two tables are checked against the code: every field of ``Settings`` and every option of
the command tree (walked from the typer app, plugins' commands included) needs a row, so a
new setting or option without its bad value fails here. Runs ``maxy --quiet ...`` in this
process (``tests.cli_inprocess``: the same entry point, environment, streams and exit code),
against a scratch account and config folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest
import typer
from maxy.accounts import create_account
from maxy.cli import app
from maxy.config import Settings, env_file

from tests.cli_inprocess import maxy
from tests.conftest import purge_account

UNKNOWN_ACCOUNT = "33333333-3333-3333-3333-333333333333"
NL = "a\nb"  # a pasted newline: no name, id, path or filter holds one

# setting -> (bad value, command, exit code). Most are refused when the settings load (2);
# the rest by the server or the account folder while the command runs (1).
CHEAP = ["account", "list"]  # reads the settings, touches nothing else
NEEDS_DB = ["audit", "tasks", "--kind", "none"]  # validates ACCOUNT_ID, then one query
SETTINGS: dict[str, tuple[str, list[str], int]] = {
    "NEO4J_URI": ("http://127.0.0.1:7474", CHEAP, 2),
    "NEO4J_USER": ("neo 4j", CHEAP, 2),
    "NEO4J_PASSWORD": ("secret\nexport X=1", CHEAP, 2),
    "NEO4J_DATABASE": ("nosuchdb", NEEDS_DB, 1),
    "NEO4J_MANAGED": ("sometimes", CHEAP, 2),
    "NEO4J_VERSION": ("latest", CHEAP, 2),
    "NEO4J_HEAP": ("1 gig", CHEAP, 2),
    "NEO4J_PAGECACHE": ("lots", CHEAP, 2),
    "NEO4J_CONNECT_TIMEOUT_S": ("0", CHEAP, 2),
    "NEO4J_QUERY_TIMEOUT_S": ("-1", CHEAP, 2),
    "EMBED_MODEL": ("bge small", CHEAP, 2),
    "EMBED_DIMENSIONS": ("abc", CHEAP, 2),
    "OLLAMA_URL": ("localhost:11434", CHEAP, 2),
    "EMBED_TIMEOUT_S": ("soon", CHEAP, 2),
    "EMBED_BREAKER_FAILURES": ("0", CHEAP, 2),
    "EMBED_BREAKER_COOLDOWN_S": ("-5", CHEAP, 2),
    "ACCOUNT_ID": (UNKNOWN_ACCOUNT, NEEDS_DB, 1),
    "DATA_ROOT": ("<a file>", CHEAP, 2),
    "ALLOWED_SCOPES": ("public,bogus", CHEAP, 2),
    "AGENT_SLUG": ("Support Bot", CHEAP, 2),
    "SESSION_ID": ("two words", CHEAP, 2),
    "SESSION_NODE_ID": ("a\tb", CHEAP, 2),
    "KNOWLEDGE_KEYWORDS": ("billing,\x1b[31m", CHEAP, 2),
    "TASK_ROLE": ("boss", CHEAP, 2),
    "MEMBER_ID": ("two words", CHEAP, 2),
    "MAXY_TASK_BACKOFF_BASE_S": ("soon", CHEAP, 2),
    "MAXY_TASK_BACKOFF_CAP_S": ("-600", CHEAP, 2),
    "EXCLUDED_PLUGINS": ("work,Big Plugin", CHEAP, 2),
    "ANTHROPIC_API_KEY": ("sk-ant key", CHEAP, 2),
    "ANTHROPIC_BASE_URL": ("api.anthropic.com", CHEAP, 2),
    "MAXY_SUMMARY_MODEL": ("claude haiku", CHEAP, 2),
    "MAXY_SUMMARY_TIMEOUT_S": ("0", CHEAP, 2),
    "MAXY_GATEWAY_TIMEOUT_S": ("-3", CHEAP, 2),
    "MAXY_AGENT_MODEL": ("claude\thaiku", CHEAP, 2),
    "MAXY_AGENT_TIMEOUT_S": ("0", CHEAP, 2),
    "MAXY_COMMUNITY_MODEL": ("claude\thaiku", CHEAP, 2),
    "MAXY_COMMUNITY_TIMEOUT_S": ("0", CHEAP, 2),
    "MAXY_DISCOVERY_NEGOTIATE_S": ("-60", CHEAP, 2),
    "MAXY_MODEL_INTENT_INFERRER": ("claude intent_inferrer", CHEAP, 2),
    "MAXY_MODEL_INTENT_VERIFIER": ("claude intent_verifier", CHEAP, 2),
    "MAXY_MODEL_INTENT_RECONCILER": ("claude intent_reconciler", CHEAP, 2),
    "MAXY_MODEL_INTENT_INDEXER": ("claude intent_indexer", CHEAP, 2),
    "MAXY_MODEL_PROFILE_HYDE_GENERATOR": ("claude profile_hyde_generator", CHEAP, 2),
    "MAXY_MODEL_LENS_INFERRER": ("claude lens_inferrer", CHEAP, 2),
    "MAXY_MODEL_HYDE_GENERATOR": ("claude hyde_generator", CHEAP, 2),
    "MAXY_MODEL_OPPORTUNITY_EVALUATOR": ("claude opportunity_evaluator", CHEAP, 2),
    "MAXY_MODEL_NEGOTIATOR": ("claude negotiator", CHEAP, 2),
    "MAXY_CHUNK_MIN_CHARS": ("few", CHEAP, 2),
    "MAXY_CHUNK_TARGET_CHARS": ("-1200", CHEAP, 2),
    "MAXY_CHUNK_MAX_CHARS": ("1.5k", CHEAP, 2),
    "MAXY_INGEST_BATCH_NODES": ("0", CHEAP, 2),
    "MAXY_MCP_STATELESS": ("sometimes", CHEAP, 2),
    "MAXY_SWEEP_INTERVAL_S": ("0", CHEAP, 2),
    "LOG_LEVEL": ("LOUD", CHEAP, 2),
    "AUDIT_RETENTION_DAYS": ("-1", CHEAP, 2),
    "MAXY_GS_EXPANSION": ("maybe", CHEAP, 2),
    "MAXY_GS_ROUTE": ("2", CHEAP, 2),
    "MAXY_GS_RRF": ("yes please", CHEAP, 2),
    "MAXY_GS_BOOSTS": ("on-ish", CHEAP, 2),
    "MAXY_GS_DEDUP": ("-", CHEAP, 2),
    "MAXY_GS_HYDE": ("hyde", CHEAP, 2),
    "MAXY_BM25_STATS": ("global", CHEAP, 2),
}

# (command, option) -> (arguments after the command, exit code). "<tmp>" is a scratch folder.
OPTIONS: dict[tuple[str, str], tuple[list[str], int]] = {
    ("account create", "--name"): (["--name", NL], 2),
    ("account purge", "--grace-days"): (["--grace-days", "-1"], 2),
    ("audit produced", "--conversation"): (["--conversation", NL], 2),
    ("audit prune", "--older-than"): (["--older-than", "30x"], 2),
    ("audit tasks", "--kind"): (["--kind", NL], 2),
    ("audit tasks", "--status"): (["--kind", "k", "--status", NL], 2),
    ("backup", "--out"): (["--out", NL], 2),
    ("conversation append", "--role"): (["s1", "hello", "--role", "narrator"], 2),
    ("conversation append", "--speaker"): (["s1", "hello", "--speaker", NL], 2),
    ("agent context", "--message"): (["a1", "--message", " "], 2),
    ("agent create", "--name"): (["a1", "--name", NL], 2),
    ("agent create", "--keyword"): (["a1", "--keyword", NL], 2),
    ("agent create", "--scopes"): (["a1", "--scopes", "public,admin"], 2),
    ("agent update", "--name"): (["a1", "--name", NL], 2),
    ("agent knowledge build", "--limit"): (["a1", "--limit", "0"], 2),
    ("agent update", "--keyword"): (["a1", "--keyword", "x" * 65], 2),
    ("agent update", "--scopes"): (["a1", "--scopes", "admin"], 2),
    ("gateway screen", "--channel"): (["hello there", "--channel", "sms"], 2),
    ("gateway screen", "--role"): (["hello there", "--role", "owner"], 2),
    ("console", "--url"): (["--url", "ftp://127.0.0.1:8765/console"], 2),
    ("console", "--key-id"): (["--key-id", "no-such-key"], 2),
    ("conversation append", "--timestamp"): (["s1", "hello", "--timestamp", "yesterday-ish"], 2),
    ("conversation append", "--message-id"): (["s1", "hello", "--message-id", NL], 2),
    ("conversation search", "--session"): (["q", "--session", NL], 2),
    ("conversation search", "--limit"): (["q", "--limit", "0"], 2),
    ("conversation search", "--after"): (["q", "--after", "last week"], 2),
    ("conversation search", "--before"): (["q", "--before", "2024-13-45"], 2),
    ("delete", "--attachment"): (["--attachment", NL], 2),
    ("demo", "--question"): (["--question", " "], 2),
    ("demo", "--account"): (["--account", NL], 2),
    ("eval beir", "--split"): (["<tmp>", "--split", NL], 2),
    ("eval beir", "--fusion"): (["<tmp>", "--fusion", "average"], 2),
    ("eval beir", "--folds"): (["<tmp>", "--folds", "1"], 2),
    ("eval conversations", "--folds"): (["<tmp>", "--folds", "51"], 2),
    ("eval memory", "--folds"): (["<tmp>", "--folds", "0"], 2),
    ("eval memory-agent", "--folds"): (["<tmp>", "--folds", "many"], 2),
    ("eval calibrate", "--halves"): (["<tmp>", "<tmp>", "--halves", "21"], 2),
    ("eval received", "--scifact"): (["--scifact", "<tmp>/no-such-folder"], 2),
    ("eval received", "--split"): (["--scifact", "<tmp>", "--split", NL], 2),
    ("eval received", "--locomo"): (["--locomo", "<tmp>/no-such-folder"], 2),
    ("eval received", "--folder"): (["--folder", "<tmp>/no-such-folder"], 2),
    ("eval received", "--questions"): (["--folder", "<tmp>", "--questions", "<tmp>"], 2),
    ("eval received", "--limits"): (["--scifact", "<tmp>", "--limits", "0,5"], 2),
    ("export", "--account"): (["--account", NL], 2),
    ("ingest", "--attachment-id"): (["<tmp>", "--attachment-id", NL], 2),
    ("ingest", "--scope"): (["<tmp>", "--scope", "everyone"], 2),
    ("ingest", "--agent"): (["<tmp>", "--agent", "Support Bot"], 2),
    ("mcp config", "--role"): (["--role", "root", "--out", "-"], 2),
    ("mcp config", "--agent"): (["--agent", "Support Bot", "--out", "-"], 2),
    ("mcp config", "--scopes"): (["--scopes", "public,everyone", "--out", "-"], 2),
    ("mcp config", "--out"): (["--out", NL], 2),
    ("mcp config", "--plugin"): (["--plugin", "no-such-plugin", "--out", "-"], 2),
    ("mcp config", "--task-role"): (["--task-role", "boss", "--out", "-"], 2),
    ("mcp config", "--member"): (["--member", "a b", "--out", "-"], 2),
    ("mcp config", "--profile"): (["--profile", "dialy", "--out", "-"], 2),
    ("mcp key create", "--role"): (["--role", "root"], 2),
    ("mcp key create", "--agent"): (["--role", "public", "--agent", "Support Bot"], 2),
    ("mcp key create", "--scopes"): (["--role", "admin", "--scopes", "everyone"], 2),
    ("mcp key create", "--account"): (["--role", "admin", "--account", UNKNOWN_ACCOUNT], 2),
    ("mcp key create", "--task-role"): (["--role", "public", "--agent", "bot", "--task-role", "executor"], 2),
    ("mcp key create", "--member"): (["--role", "public", "--agent", "bot", "--member", "ada"], 2),
    ("mcp key create", "--profile"): (["--role", "admin", "--profile", "daily,everything"], 2),
    ("mcp plugins", "--module"): (["--module", "no_such_module_here"], 2),
    ("mcp proxy", "--read-tool"): (["--read-tool", "read neo4j", "--", "true"], 2),
    ("mcp proxy", "--probe-timeout"): (["--probe-timeout", "0", "--", "true"], 2),
    ("mcp serve", "--role"): (["--role", "root"], 2),
    ("mcp serve", "--module"): (["--module", "no_such_module_here"], 2),
    ("mcp serve", "--profile"): (["--profile", NL], 2),
    ("memory get", "--hops"): (["n1", "--hops", "4"], 2),
    ("memory get", "--type"): (["n1", "--type", "LIKES_A_LOT"], 2),
    ("memory get", "--budget"): (["n1", "--budget", "0"], 2),
    ("memory get", "--as-of"): (["n1", "--as-of", "noon"], 2),
    ("memory search", "--limit"): (["q", "--limit", "0"], 2),
    ("memory search", "--label"): (["q", "--label", "Spaceship"], 2),
    ("memory search", "--as-of"): (["q", "--as-of", "noon"], 2),
    ("memory search", "--after"): (["q", "--after", "noon"], 2),
    ("memory search", "--before"): (["q", "--before", "noon"], 2),
    ("memory search", "--min-relevance"): (["q", "--min-relevance", "1.5"], 2),
    ("memory write", "--label"): (["--label", "Spaceship"], 2),
    ("memory write", "--prop"): (["--label", "Person", "--prop", "name"], 2),
    ("memory write", "--edge"): (["--label", "Person", "--edge", "KNOWS"], 2),
    ("memory write", "--node-id"): (["--label", "Person", "--node-id", NL], 2),
    ("memory write", "--supersede"): (["--label", "Fact", "--supersede", NL], 2),
    ("memory write", "--valid-from"): (["--label", "Fact", "--prop", "text=t", "--valid-from", "noon"], 2),
    ("memory write", "--valid-until"): (["--label", "Fact", "--prop", "text=t", "--valid-until", "noon"], 2),
    ("memory write", "--scope"): (["--label", "Person", "--prop", "name=Ada", "--scope", "everyone"], 2),
    ("memory write", "--agent"): (["--label", "Fact", "--prop", "text=t", "--agent", "Support Bot"], 2),
    ("neo4j logs", "--lines"): (["--lines", "many"], 2),
    ("neo4j start", "--timeout"): (["--timeout", "0"], 2),
    ("neo4j stop", "--timeout"): (["--timeout", "soon"], 2),  # refused before anything is stopped
    ("purge", "--grace-days"): (["--grace-days", "-1"], 2),
    ("reindex", "--label"): (["--label", "Spaceship"], 2),
    ("reindex", "--batch-size"): (["--batch-size", "-3"], 2),
    ("search", "--limit"): (["q", "--limit", "0"], 2),
    ("search", "--label"): (["q", "--label", "Spaceship"], 2),
    ("search", "--fields"): (["q", "--fields", NL], 2),
    ("search", "--expand-hops"): (["q", "--expand-hops", "5"], 2),
    ("search", "--scope"): (["q", "--scope", "everyone"], 2),
    ("search", "--agent"): (["q", "--agent", "Support Bot"], 2),
    ("search", "--fusion"): (["q", "--fusion", "average"], 2),
    ("search", "--class"): (["q", "--class", "gossip"], 2),
    ("search", "--min-relevance"): (["q", "--min-relevance", "1.5"], 2),
    ("serve", "--host"): (["--host", NL], 2),
    ("serve", "--port"): (["--port", "99999"], 2),
    ("serve", "--module"): (["--module", "no_such_module_here"], 2),
    ("serve", "--profile"): (["--profile", "tasks," + "x" * 70], 2),
    ("specialists check", "--module"): (["--module", "no_such_module_here"], 2),
    ("specialists tools", "--module"): (["librarian", "--module", "no_such_module_here"], 2),
    ("sites host add", "--account"): (["a.example.com", "--account", UNKNOWN_ACCOUNT], 2),
    ("status", "--account"): (["--account", NL], 2),
    ("memory-agent entries", "--memory"): (["--memory", "a/b"], 2),
    ("memory-agent entries", "--limit"): (["-m", "ada", "--limit", "0"], 2),
    ("memory-agent context", "--memory"): (["--memory", NL], 2),
    ("memory-agent add-entry", "--memory"): (["--memory", "a b", "--summary", "s", "--raw-entry", "r"], 2),
    ("memory-agent add-entry", "--summary"): (["-m", "ada", "--summary", " ", "--raw-entry", "r"], 2),
    ("memory-agent add-entry", "--raw-entry"): (["-m", "ada", "--summary", "s", "--raw-entry", " "], 2),
    ("memory-agent add-entry", "--tag"): (["-m", "ada", "--summary", "s", "--raw-entry", "r", "--tag", NL], 2),
    ("memory-agent add-entry", "--role"): (["-m", "ada", "--summary", "s", "--raw-entry", "r", "--role", "bot"], 2),
    ("memory-agent add-entry", "--session"): (["-m", "ada", "--summary", "s", "--raw-entry", "r", "--session", NL], 2),
    ("memory-agent add-entry", "--message-id"): (
        ["-m", "ada", "--summary", "s", "--raw-entry", "r", "--message-id", NL],
        2,
    ),
    ("memory-agent put-context", "--memory"): (["--memory", "é", "--content", "c"], 2),
    ("memory-agent put-context", "--content"): (["-m", "ada", "--content", " "], 2),
    ("memory-agent put-context", "--session"): (["-m", "ada", "--content", "c", "--session", NL], 2),
    ("memory-agent barrier", "--memory"): (["--memory", "x" * 129], 2),
    ("memory-agent barrier", "--timeout"): (["-m", "ada", "--timeout", "0"], 2),
    ("memory-agent run", "--memory"): (["<tmp>/a-file", "--memory", "a b"], 2),
    ("tasks list", "--phase"): (["--phase", "done"], 2),
    ("tasks list", "--limit"): (["--limit", "0"], 2),
    ("tasks transition", "--to"): (
        ["t1", "--to", "done", "--expected-phase", "spec_draft", "--expected-version", "1"],
        2,
    ),
    ("tasks transition", "--expected-phase"): (
        ["t1", "--to", "spec_review", "--expected-phase", "drafting", "--expected-version", "1"],
        2,
    ),
    ("tasks transition", "--expected-version"): (
        ["t1", "--to", "spec_review", "--expected-phase", "spec_draft", "--expected-version", "0"],
        2,
    ),
    ("tasks transition", "--reason"): (
        ["t1", "--to", "spec_review", "--expected-phase", "spec_draft", "--expected-version", "1", "--reason", NL],
        2,
    ),
}


def _commands(command: object, path: tuple[str, ...] = ()) -> Iterator[tuple[str, object]]:
    subcommands = getattr(command, "commands", None)
    if subcommands:
        for name, sub in sorted(subcommands.items()):
            yield from _commands(sub, (*path, name))
    else:
        yield " ".join(path), command


def _value_options() -> set[tuple[str, str]]:
    """Every (command, --option) of the command line that takes a value."""
    found = set()
    for path, command in _commands(typer.main.get_command(app)):
        for param in getattr(command, "params", []):
            if param.param_type_name == "option" and not param.is_flag:
                found.add((path, max(param.opts, key=len)))
    return found


def test_every_setting_has_a_bad_value() -> None:
    assert set(SETTINGS) == set(Settings.model_fields), "add a row to SETTINGS for each new setting"


def test_every_option_with_a_value_has_a_bad_value() -> None:
    options = _value_options()
    assert options - set(OPTIONS) == set(), "add a row to OPTIONS for each new option"
    assert set(OPTIONS) - options == set(), "a row for an option that no longer exists"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory, db) -> Iterator[dict[str, str]]:
    """The environment of the runs: a scratch config folder (the server's password copied in,
    no ACCOUNT_ID), DATA_ROOT with one account, and no pins."""
    base = tmp_path_factory.mktemp("bad-values")
    config = base / "config"
    config.mkdir()
    if env_file().is_file():
        kept = [line for line in env_file().read_text().splitlines() if not line.startswith("ACCOUNT_ID=")]
        (config / ".env").touch(mode=0o600)  # it holds the server's password
        (config / ".env").write_text("\n".join(kept) + "\n")
    (base / "a-file").write_text("not a folder\n")
    data = base / "data"
    account = create_account(data, "bad-values")
    pins = {"ACCOUNT_ID", "DATA_ROOT", "ALLOWED_SCOPES", "AGENT_SLUG", "SESSION_ID", "SESSION_NODE_ID", "LOG_LEVEL"}
    env = {k: v for k, v in os.environ.items() if k not in pins and k not in SETTINGS and k != "MAXY_LOG_LEVEL"}
    env.update(
        MAXY_CONFIG_DIR=str(config),
        DATA_ROOT=str(data),
        ACCOUNT_ID=account.account_id,
        BASE=str(base),
    )
    for name in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "EMBED_MODEL", "EMBED_DIMENSIONS"):
        if name in os.environ:  # the server and model the suite runs against, unless a row replaces them
            env[name] = os.environ[name]
    yield env
    purge_account(db, account.account_id)
    shutil.rmtree(base, ignore_errors=True)


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return maxy(["--quiet", *[a.replace("<tmp>", env["BASE"]) for a in args]], env)


@pytest.fixture(scope="module")
def outcomes(scratch: dict[str, str]) -> dict[object, subprocess.CompletedProcess[str]]:
    """Every row run once."""
    runs: dict[object, tuple[list[str], dict[str, str]]] = {}
    for name, (value, command, _code) in SETTINGS.items():
        runs[name] = (command, dict(scratch, **{name: value.replace("<a file>", scratch["BASE"] + "/a-file")}))
    for (command, option), (args, _code) in OPTIONS.items():
        runs[(command, option)] = ([*command.split(), *args], scratch)
    return {key: _run(args, env) for key, (args, env) in runs.items()}


def _one_error_line(proc: subprocess.CompletedProcess[str], name: str, code: int) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and name in lines[0], lines[0]
    assert proc.returncode == code, (proc.returncode, lines[0])
    return lines[0]


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_bad_setting_is_one_line_naming_it(name: str, outcomes: dict) -> None:
    _one_error_line(outcomes[name], name, SETTINGS[name][2])


@pytest.mark.parametrize("command,option", sorted(OPTIONS))
def test_bad_option_is_one_line_naming_it(command: str, option: str, outcomes: dict) -> None:
    _one_error_line(outcomes[(command, option)], option, OPTIONS[(command, option)][1])
