"""`maxy console` as an operator runs it: the printed link logs into a running `maxy serve`
once; the first run makes an admin key for the console and later runs reuse it; `--key-id`
logs in with another key (a public one sees its own view); nothing answering is said."""

from __future__ import annotations

import json
import subprocess

import httpx
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key, list_api_keys

from tests.cli_inprocess import maxy
from tests.console_site import open_link
from tests.local_http import _free_port, serve_app
from tests.plugins_fixture.helpers import child_env


def _console(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return maxy(["console", *args], env, check=False)


def test_the_printed_link_logs_in_once_and_the_console_key_is_reused(db, account, data_root) -> None:
    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")
    app = create_app(discover_plugins(None, []), load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id))
    with serve_app(app) as base:
        first = _console(env, "--url", base, "--json")
        assert first.returncode == 0, first.stderr
        made = json.loads(first.stdout)
        assert made["keyCreated"] and made["serverAnswers"] and made["expiresInSeconds"] == 300
        assert made["url"].startswith(f"{base}/console/login?token=")
        [key] = list_api_keys(data_root, account.account_id)
        assert key.key_id == made["keyId"] and key.role == "admin" and key.scopes is None

        plain = _console(env, "--url", base + "/")
        assert plain.returncode == 0 and plain.stdout.count("\n") == 1
        assert f"as key {key.key_id} (admin)" in plain.stderr and "created" not in plain.stderr
        with httpx.Client() as client:
            opened = open_link(client, plain.stdout.strip())
            assert opened.status_code == 303 and opened.headers["location"] == "/console/search"
            assert client.get(base + "/console/search").status_code == 200
            client.cookies.clear()
            assert open_link(client, plain.stdout.strip()).status_code == 401  # once

        _, public = create_api_key(data_root, account.account_id, role="public", agent_slug="concierge")
        chosen = json.loads(_console(env, "--url", base, "--key-id", public.key_id, "--json").stdout)
        assert chosen["keyId"] == public.key_id and not chosen["keyCreated"]
        with httpx.Client() as client:
            assert open_link(client, chosen["url"]).status_code == 303
            assert "role public" in client.get(base + "/console/status").text
    assert len(list_api_keys(data_root, account.account_id)) == 2

    silent = _console(env, "--url", f"http://127.0.0.1:{_free_port()}")
    assert silent.returncode == 0 and "nothing answers" in silent.stderr and "maxy serve" in silent.stderr


def test_the_default_key_is_never_a_members_or_a_task_roles(db, account, data_root) -> None:
    """Keys with a member or a task role are no operator's: `maxy console` without --key-id makes
    its own admin key beside them, so revoking a member's key never ends the operator's session;
    a member's key made without a view opens no console at all."""
    from maxy.serving.keys import revoke_api_key

    env = child_env(data_root, ACCOUNT_ID=account.account_id, MAXY_LOG_LEVEL="WARNING")
    _, ben = create_api_key(data_root, account.account_id, role="admin", member_id="ben")
    _, executor = create_api_key(data_root, account.account_id, role="admin", task_role="executor")
    app = create_app(discover_plugins(None, []), load_settings(DATA_ROOT=data_root, ACCOUNT_ID=account.account_id))
    with serve_app(app) as base:
        made = json.loads(_console(env, "--url", base, "--json").stdout)
        assert made["keyCreated"] and made["keyId"] not in (ben.key_id, executor.key_id)
        with httpx.Client() as client:
            assert open_link(client, made["url"]).status_code == 303
            assert revoke_api_key(data_root, ben.key_id) and revoke_api_key(data_root, executor.key_id)
            assert client.get(base + "/console/search").status_code == 200  # still signed in

        _, carol = create_api_key(data_root, account.account_id, role="admin", member_id="carol")
        refused = _console(env, "--url", base, "--key-id", carol.key_id)
        lines = [line for line in refused.stderr.splitlines() if line.strip()]
        assert refused.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: --key-id: ")
        assert "reaches no memory" in lines[0]
