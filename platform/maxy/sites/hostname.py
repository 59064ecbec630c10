"""Host names: the one check every host name passes, and the install's public hostname.

The public hostname is the host people reach this install at, read from the same two files the
tunnel routes by, in the configuration folder (``MAXY_CONFIG_DIR``):

1. ``cloudflared/config.yml``: the ``hostname`` of each entry of its ``ingress`` list (the last,
   catch-all entry has none and is skipped, as are wildcards ``*.example.com``);
2. else ``alias-domains.json``: a JSON list of host names, or ``{"domains": [...]}``.

Among the names of the first file that has any, an apex (a registrable name such as
``example.com`` or ``example.co.uk``, or that name under ``www.``) wins over a subdomain;
otherwise the first listed wins. Neither file naming a host is ``reason: no-tunnel``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..fsfaults import yaml_error_at
from ..logs import log_line

CLOUDFLARED_CONFIG = Path("cloudflared") / "config.yml"
ALIAS_DOMAINS = Path("alias-domains.json")
SOURCE_CLOUDFLARED = "cloudflared-config.yml"
SOURCE_ALIAS = "alias-domains.json"
NO_TUNNEL = "no-tunnel"
MAX_CONFIG_BYTES = 1024 * 1024
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# second-level labels under which a country's registrable names sit (example.co.uk, example.com.au)
_SECOND_LEVEL = frozenset({"ac", "co", "com", "edu", "gov", "ltd", "ne", "net", "or", "org", "plc"})


def normalise_hostname(value: object) -> str | None:
    """The host name lower-cased, without a final dot, in ASCII (an internationalised name in its
    ``xn--`` form); None when it is not a host name (a port, a scheme, a path, a space ...)."""
    if not isinstance(value, str):
        return None
    name = value.strip().rstrip(".").lower()
    if not name or len(name) > 253:
        return None
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    return name if all(_LABEL.fullmatch(label) for label in name.split(".")) else None


def is_apex(hostname: str) -> bool:
    """A registrable name itself (``example.com``, ``example.co.uk``), or that name under ``www.``."""
    labels = hostname.split(".")
    if labels[0] == "www" and len(labels) > 2:
        labels = labels[1:]
    country = len(labels) == 3 and len(labels[-1]) == 2 and labels[-2] in _SECOND_LEVEL
    return len(labels) == 2 or country


@dataclass(frozen=True)
class PublicHostname:
    hostname: str | None
    is_apex: bool | None
    source: str | None

    def as_dict(self) -> dict[str, Any]:
        if self.hostname is None:
            return {"hostname": None, "source": None, "reason": NO_TUNNEL}
        return {"hostname": self.hostname, "isApex": self.is_apex, "source": self.source}


def _read_text(path: Path) -> str | None:
    """The file's text; None when it does not exist. Raises ConfigError naming it otherwise."""
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path} is {size} bytes, not a small configuration file: fix or remove it")
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path} is not UTF-8 text (byte {err.start}): save it as UTF-8") from None
    except OSError as err:
        raise ConfigError(f"{path} cannot be read ({err.strerror or err}): make it readable or remove it") from None


def _checked_names(values: list[Any], path: Path, where: str) -> list[str]:
    names: list[str] = []
    for i, value in enumerate(values):
        if isinstance(value, str) and value.strip().startswith("*."):
            continue  # a wildcard routes many names, none of which is the install's own
        name = normalise_hostname(value)
        if name is None:
            raise ConfigError(f"{path}: {where}[{i}] is not a host name ({value!r}): fix or remove that entry")
        names.append(name)
    return names


def cloudflared_hostnames(path: Path) -> list[str] | None:
    """The host names of the tunnel's ingress rules, in order; None when the file does not exist."""
    import yaml

    text = _read_text(path)
    if text is None:
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(
            f"{path} is not valid YAML{yaml_error_at(err)}: fix it (cloudflared cannot read it either)"
        ) from None
    if data is None:
        return []
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a cloudflared configuration (a mapping with an ingress list): fix it")
    ingress = data.get("ingress")
    if ingress is None:
        return []
    if not isinstance(ingress, list):
        raise ConfigError(f"{path}: ingress must be a list of rules ({{hostname, service}}): fix it")
    hostnames: list[Any] = []
    for i, rule in enumerate(ingress):
        if not isinstance(rule, dict):
            raise ConfigError(f"{path}: ingress[{i}] is not a rule ({{hostname, service}}): fix it")
        if rule.get("hostname") is not None:
            hostnames.append(rule["hostname"])
    return _checked_names(hostnames, path, "ingress hostname")


def alias_hostnames(path: Path) -> list[str] | None:
    """The alias domains, in order; None when the file does not exist."""
    text = _read_text(path)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(f"{path} is not valid JSON (line {err.lineno}, column {err.colno}): fix it") from None
    domains = data.get("domains") if isinstance(data, dict) else data
    if not isinstance(domains, list):
        raise ConfigError(f'{path} must be a JSON list of host names, or {{"domains": [...]}}: fix it')
    return _checked_names(domains, path, "domains")


def pick(hostnames: list[str]) -> str | None:
    """The first apex, else the first name."""
    return next((h for h in hostnames if is_apex(h)), hostnames[0] if hostnames else None)


def public_hostname(config: Path | None = None) -> PublicHostname:
    """The install's public hostname from the configuration folder (default: ``config_dir()``)."""
    from ..config import config_dir

    folder = Path(config) if config is not None else config_dir()
    names, source = cloudflared_hostnames(folder / CLOUDFLARED_CONFIG) or [], SOURCE_CLOUDFLARED
    if not names:
        names, source = alias_hostnames(folder / ALIAS_DOMAINS) or [], SOURCE_ALIAS
    chosen = pick(names)
    if chosen is None:
        log_line("sites", "public-hostname", reason=NO_TUNNEL)
        return PublicHostname(None, None, None)
    log_line("sites", "public-hostname", hostname=chosen, apex=is_apex(chosen), source=source)
    return PublicHostname(chosen, is_apex(chosen), source)
