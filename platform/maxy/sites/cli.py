"""``maxy sites host add|remove|list``, ``maxy sites hostname`` and ``maxy sites url``."""

from __future__ import annotations

from typing import Any

import typer

_HOST_HELP = "A host name such as brochures.example.com (no scheme, port or path)."


def _settings() -> Any:
    from ..config import load_settings

    return load_settings()


def _print(text: str) -> None:
    from ..console import out

    out.print(text, markup=False, highlight=False, soft_wrap=True)


def site_url(settings: Any, account_id: str, path: str) -> dict[str, Any]:
    """The public URL of a file or folder of the account's sites folder (``path`` relative to it)."""
    from ..accounts import accounts_dir
    from ..errors import ConfigError, ValidationError
    from .hostname import public_hostname
    from .hosts import read_hosts
    from .serve import ESCAPE, NOT_FOUND, REDIRECT, TRAVERSAL, resolve, sites_root

    relative = path.strip().strip("/")
    root = sites_root(accounts_dir(settings.data_root) / account_id)
    found = resolve(root, "/" + relative if relative else "")
    if found.event == TRAVERSAL:
        raise ValidationError(
            "PATH",
            f"{path!r} is refused ({found.reason}): each name starts with a letter or digit and holds only "
            "letters, digits, '.', '_', '~' and '-'",
        )
    if found.event == ESCAPE:
        raise ValidationError("PATH", f"{path!r} leads through a link out of {root}: it is never served")
    if found.event == NOT_FOUND:
        raise ValidationError("PATH", f"no file or folder {relative!r} under {root}: copy the site there first")
    folder = found.event == REDIRECT
    index = folder and resolve(root, f"/{relative}/" if relative else "/").status == 200
    public = public_hostname()
    if public.hostname is None:
        raise ConfigError(
            "no public hostname: list one in <config dir>/cloudflared/config.yml (ingress) or "
            "<config dir>/alias-domains.json; `maxy sites hostname` says what is read"
        )
    suffix = f"/{relative}" if relative else ""
    return {
        "url": f"https://{public.hostname}/sites{suffix}{'/' if folder else ''}",
        "hostname": public.hostname,
        "source": public.source,
        "path": relative,
        "folder": folder,
        "index": index,
        "servesThisAccount": read_hosts(settings.data_root).get(public.hostname) == account_id,
    }


def _host_commands(host_app: typer.Typer) -> None:
    from ..console import emit_json, err, friendly

    @host_app.command("add")
    @friendly
    def host_add(
        host: str = typer.Argument(..., help=_HOST_HELP),
        account: str = typer.Option(
            None, "--account", help="The account it serves, by name or id (default: ACCOUNT_ID)."
        ),
        json_out: bool = typer.Option(False, "--json"),
    ) -> None:
        """Serve this account's sites folder to requests for HOST."""
        from ..accounts import account_option, account_ref, ref_label, validate_account_id_env
        from .hosts import add_host, check_host

        settings = _settings()
        check_host(host)
        if account is None:
            account_id = validate_account_id_env(settings).account_id
        else:
            account_id = account_option(settings.data_root, account).account_id
        name = add_host(settings.data_root, host, account_id)
        ref = account_ref(settings.data_root, account_id)
        if json_out:
            emit_json({"host": name, "accountId": account_id, "account": ref})
        else:
            err.print(f"{name} serves the sites of {ref_label(ref)}", markup=False, highlight=False)

    @host_app.command("remove")
    @friendly
    def host_remove(
        host: str = typer.Argument(..., help=_HOST_HELP), json_out: bool = typer.Option(False, "--json")
    ) -> None:
        """Stop serving any account's sites to requests for HOST."""
        from .hosts import remove_host

        name = remove_host(_settings().data_root, host)
        if json_out:
            emit_json({"host": name, "removed": True})
        else:
            err.print(f"{name} serves no sites now", markup=False, highlight=False)

    @host_app.command("list")
    @friendly
    def host_list(json_out: bool = typer.Option(False, "--json")) -> None:
        """List the host names and the account each serves."""
        from .hosts import hosts_path, list_hosts

        settings = _settings()
        hosts = list_hosts(settings.data_root)
        if json_out:
            emit_json(hosts)
            return
        for entry in hosts:
            missing = "" if entry["accountExists"] else "  (no such account on disk: serves nothing)"
            _print(f"{entry['host']}  {entry['accountId']}{missing}")
        if not hosts:
            _print(f"no hosts in {hosts_path(settings.data_root)}: `maxy sites host add HOST` adds one")


def _site_commands(sites_app: typer.Typer) -> None:
    from ..console import emit_json, err, friendly

    @sites_app.command("hostname")
    @friendly
    def hostname_cmd(json_out: bool = typer.Option(False, "--json")) -> None:
        """The public hostname: cloudflared/config.yml's ingress, else alias-domains.json."""
        from .hostname import public_hostname

        answer = public_hostname().as_dict()
        if json_out:
            emit_json(answer)
        elif answer["hostname"] is None:
            _print("no public hostname (no-tunnel): neither cloudflared/config.yml nor alias-domains.json names one")
        else:
            apex = "apex" if answer["isApex"] else "subdomain"
            _print(f"{answer['hostname']}  ({apex}, from {answer['source']})")

    @sites_app.command("url")
    @friendly
    def url_cmd(
        path: str = typer.Argument(..., help="A file or folder under the account's sites folder."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> None:
        """The public URL of a published file or folder."""
        from ..accounts import validate_account_id_env

        settings = _settings()
        answer = site_url(settings, validate_account_id_env(settings).account_id, path)
        if json_out:
            emit_json(answer)
            return
        _print(answer["url"])
        if answer["folder"] and not answer["index"]:
            err.print("warning: the folder has no index.html, so its URL answers 404: link a file in it", markup=False)
        if not answer["servesThisAccount"]:
            err.print(
                f"warning: {answer['hostname']} does not serve this account's sites yet: "
                f"`maxy sites host add {answer['hostname']}`",
                markup=False,
                highlight=False,
            )


# The commands, defined last: their options name the helpers above.
commands = typer.Typer()  # added to the main app by register()


sites_app = typer.Typer(no_args_is_help=True, help="Published sites: /sites/... of maxy serve, by host name.")
host_app = typer.Typer(no_args_is_help=True, help="Which account's sites each host name serves.")
sites_app.add_typer(host_app, name="host")
_host_commands(host_app)
_site_commands(sites_app)


def register(app: typer.Typer) -> None:
    app.add_typer(commands)
    app.add_typer(sites_app, name="sites")
