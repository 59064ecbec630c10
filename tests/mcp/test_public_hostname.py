"""The public-hostname tool of the admin plugin: the tunnel's ingress rules, then the alias
domains, apex before subdomain, no-tunnel, and one-line errors naming a broken file; through the
resolver, `maxy sites hostname` and `maxy sites url`, and real MCP clients over stdio (`maxy mcp
serve admin`) and HTTP (`maxy serve`'s app, where a public key does not see the tool)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from maxy.config import env_file, load_settings
from maxy.errors import ConfigError
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.serving.keys import create_api_key
from maxy.sites.hostname import public_hostname
from maxy.sites.hosts import add_host
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.cli_inprocess import maxy
from tests.local_http import serve_app
from tests.plugins_fixture.helpers import CLI, REPO, child_env, text, tool_calls

TUNNEL = """\
tunnel: 6ff42ae2-765d-4adf-8112-31c55c1551ef
credentials-file: /root/.cloudflared/6ff42ae2.json
ingress:
  - hostname: public.example.com
    service: http://127.0.0.1:8765
  - hostname: "*.example.com"
    service: http://127.0.0.1:8765
  - hostname: Example.COM
    service: http://127.0.0.1:8765
  - service: http_status:404
"""


def _config(folder: Path, tunnel: str | None = None, aliases: Any = None, raw_aliases: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if tunnel is not None:
        (folder / "cloudflared").mkdir(exist_ok=True)
        (folder / "cloudflared" / "config.yml").write_text(tunnel)
    if aliases is not None or raw_aliases is not None:
        (folder / "alias-domains.json").write_text(raw_aliases if raw_aliases is not None else json.dumps(aliases))
    return folder


@pytest.mark.parametrize(
    "tunnel,aliases,expected",
    [
        (
            TUNNEL,
            ["alias.example.org"],
            {"hostname": "example.com", "isApex": True, "source": "cloudflared-config.yml"},
        ),
        (
            "ingress:\n  - hostname: a.example.com\n    service: x\n  - hostname: b.example.com\n    service: x\n"
            "  - service: http_status:404\n",
            None,
            {"hostname": "a.example.com", "isApex": False, "source": "cloudflared-config.yml"},
        ),
        (
            "ingress:\n  - hostname: app.example.com\n    service: x\n  - hostname: www.example.com\n    service: x\n",
            None,
            {"hostname": "www.example.com", "isApex": True, "source": "cloudflared-config.yml"},
        ),
        (
            "ingress:\n  - hostname: shop.example.co.uk\n    service: x\n  - hostname: example.co.uk\n    service: x\n",
            None,
            {"hostname": "example.co.uk", "isApex": True, "source": "cloudflared-config.yml"},
        ),
        (
            "ingress:\n  - hostname: '*.example.com'\n    service: x\n  - service: http_status:404\n",
            ["maxy.example.org", "example.org"],
            {"hostname": "example.org", "isApex": True, "source": "alias-domains.json"},
        ),
        (
            None,
            {"domains": ["chat.example.net"]},
            {"hostname": "chat.example.net", "isApex": False, "source": "alias-domains.json"},
        ),
        ("", [], {"hostname": None, "source": None, "reason": "no-tunnel"}),
        ("tunnel: x\nurl: http://127.0.0.1:8765\n", None, {"hostname": None, "source": None, "reason": "no-tunnel"}),
        (None, None, {"hostname": None, "source": None, "reason": "no-tunnel"}),
    ],
)
def test_the_resolver(tmp_path: Path, tunnel: str | None, aliases: Any, expected: dict[str, Any]) -> None:
    assert public_hostname(_config(tmp_path / "config", tunnel, aliases)).as_dict() == expected


@pytest.mark.parametrize(
    "tunnel,raw_aliases,names,says",
    [
        ("ingress:\n  - hostname: a.example.com\n   service: [\n", None, "config.yml", "is not valid YAML at line"),
        ("- just\n- a list\n", None, "config.yml", "is not a cloudflared configuration"),
        ("ingress: public.example.com\n", None, "config.yml", "ingress must be a list"),
        ("ingress:\n  - public.example.com\n", None, "config.yml", "ingress[0] is not a rule"),
        ("ingress:\n  - hostname: https://x.example.com/\n    service: x\n", None, "config.yml", "is not a host name"),
        (None, '["example.com",', "alias-domains.json", "is not valid JSON (line 1"),
        (None, '{"hosts": ["example.com"]}', "alias-domains.json", 'must be a JSON list of host names, or {"domains"'),
        (None, '["example.com", 7]', "alias-domains.json", "domains[1] is not a host name"),
        (None, "\udcff", "alias-domains.json", "is not UTF-8"),
    ],
)
def test_a_broken_file_is_one_line_naming_it(
    tmp_path: Path, tunnel: str | None, raw_aliases: str | None, names: str, says: str
) -> None:
    folder = _config(tmp_path / "config", tunnel)
    if raw_aliases is not None:
        (folder / "alias-domains.json").write_bytes(raw_aliases.encode("utf-8", "surrogateescape"))
    with pytest.raises(ConfigError) as refused:
        public_hostname(folder)
    message = str(refused.value)
    assert "\n" not in message and names in message and says in message, message


def _cli(config: Path, data_root: Path, *args: str, account: str | None = None) -> subprocess.CompletedProcess[str]:
    env = child_env(data_root, ACCOUNT_ID=account)
    env["MAXY_CONFIG_DIR"] = str(config)
    return maxy([*args], env)


def test_the_commands(tmp_path: Path, data_root: Path, account) -> None:
    config = _config(tmp_path / "config", TUNNEL)
    shown = _cli(config, data_root, "sites", "hostname", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout) == {
        "hostname": "example.com",
        "isApex": True,
        "source": "cloudflared-config.yml",
    }
    assert (
        _cli(config, data_root, "sites", "hostname").stdout.strip()
        == "example.com  (apex, from cloudflared-config.yml)"
    )

    sites = data_root / "accounts" / account.account_id / "sites" / "properties" / "42" / "brochure" / "output"
    sites.mkdir(parents=True)
    (sites / "brochure.html").write_text("<h1>brochure</h1>")
    folder = _cli(config, data_root, "sites", "url", "properties/42/brochure/output", account=account.account_id)
    assert (
        folder.returncode == 0 and folder.stdout.strip() == "https://example.com/sites/properties/42/brochure/output/"
    )
    assert "no index.html" in folder.stderr and "maxy sites host add example.com" in folder.stderr
    add_host(data_root, "example.com", account.account_id)
    page = _cli(
        config,
        data_root,
        "sites",
        "url",
        "/properties/42/brochure/output/brochure.html",
        "--json",
        account=account.account_id,
    )
    assert json.loads(page.stdout)["url"] == "https://example.com/sites/properties/42/brochure/output/brochure.html"
    assert json.loads(page.stdout)["servesThisAccount"] is True and page.stderr == ""
    for path, says in (("properties/43", "no file or folder"), ("../secret", "is refused (dot-segment)")):
        refused = _cli(config, data_root, "sites", "url", path, account=account.account_id)
        assert refused.returncode == 2 and refused.stderr.startswith("error: PATH: ") and says in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1

    (config / "cloudflared" / "config.yml").write_text("ingress: [\n")
    broken = _cli(config, data_root, "sites", "hostname")
    assert broken.returncode == 1 and "Traceback" not in broken.stderr
    assert broken.stderr.startswith("error: ") and "cloudflared/config.yml is not valid YAML" in broken.stderr


# ---------------------------------------------------------------------------------------
async def _call(client: Client) -> tuple[set[str], Any]:
    names = {t.name for t in (await client.list_tools()).tools}
    return names, await client.call_tool("public-hostname", {})


def test_over_stdio(tmp_path: Path, data_root: Path, account, db) -> None:
    config = _config(tmp_path / "config", TUNNEL)
    (config / ".env").write_text(
        "".join(line + "\n" for line in env_file().read_text().splitlines() if not line.startswith("ACCOUNT_ID="))
    )
    env = child_env(data_root, ACCOUNT_ID=account.account_id)
    env["MAXY_CONFIG_DIR"] = str(config)
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "mcp", "serve", "admin", "--role", "admin"], env=env, cwd=str(REPO)
    )

    async def run() -> tuple[set[str], Any]:
        async with Client(stdio_client(params)) as client:
            return await _call(client)

    names, result = anyio.run(run)
    assert names == {"public-hostname"} and not result.is_error
    answer = {"hostname": "example.com", "isApex": True, "source": "cloudflared-config.yml"}
    assert result.structured_content == answer and json.loads(text(result)) == answer
    audited = tool_calls(db, account.account_id)
    assert [(c["toolName"], c["pluginName"], c["isError"]) for c in audited] == [("public-hostname", "admin", False)]


def test_over_http_admin_only(tmp_path: Path, data_root: Path, account, db, monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app(discover_plugins(["admin", "memory"]), load_settings(DATA_ROOT=data_root))
    admin, _ = create_api_key(data_root, account.account_id, role="admin")
    public, _ = create_api_key(data_root, account.account_id, role="public", agent_slug="concierge", scopes=["public"])
    config = _config(tmp_path / "config", None, ["support.example.org"])
    monkeypatch.setenv("MAXY_CONFIG_DIR", str(config))  # read at each call, as the server's own folder

    async def ask(url: str, key: str) -> tuple[set[str], Any]:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            names = {t.name for t in (await client.list_tools()).tools}
            if "public-hostname" not in names:
                return names, await client.call_tool("public-hostname", {})
            return await _call(client)

    with serve_app(app) as base:
        names, result = anyio.run(ask, base + "/mcp", admin)
        assert "public-hostname" in names and "memory-write" in names
        assert result.structured_content == {
            "hostname": "support.example.org",
            "isApex": False,
            "source": "alias-domains.json",
        }
        (config / "alias-domains.json").write_text("{not json")
        _, broken = anyio.run(ask, base + "/mcp", admin)
        assert broken.is_error and "alias-domains.json is not valid JSON" in text(broken)
        assert "\n" not in text(broken) and "Traceback" not in text(broken)
        public_names, refused = anyio.run(ask, base + "/mcp", public)
        assert "public-hostname" not in public_names and refused.is_error
