"""``/sites/...`` on ``maxy serve``: each account's published files, chosen by the Host header.

The request's host (its port dropped, lower-cased) names the account through
``DATA_ROOT/sites/hosts.json`` (:mod:`maxy.sites.hosts`); a host the file does not name gets a
404, never another account's files. The path is then answered from that account's
``sites`` folder (:mod:`maxy.sites.serve`). GET and HEAD only. Every response carries
``X-Content-Type-Options: nosniff`` and a Content-Security-Policy that lets a page load
anything from its own host, HTTPS and data URLs, but run no script, post no form, change no
base URL and sit in no frame; its ``sandbox`` gives a page an origin of its own, so a published
page on the host that also serves ``/console`` and ``/mcp`` never acts as that origin. Fonts,
which a browser fetches with CORS, carry ``Access-Control-Allow-Origin: *`` so such a page can
still use its own. Pages (``.html``) are revalidated on every visit (``no-cache``), other files
are cached for an hour. Files are sent in chunks from the descriptor that was checked, with an
ETag (``If-None-Match`` answers 304) and Last-Modified. One ``[sites]`` line per request.
"""

from __future__ import annotations

import logging
import os
import time
from email.utils import formatdate
from typing import Any
from urllib.parse import quote

from ..accounts import accounts_dir, read_account
from ..config import Settings
from ..errors import ConfigError
from ..logs import log_line, short
from .hostname import normalise_hostname
from .hosts import HostMap
from .mime import content_type, is_html
from .paths import Refused, split_request_path
from .serve import REDIRECT, SERVE, TRAVERSAL, Opened, Outcome, open_file, resolve, sites_root

PREFIX = "/sites"
CSP = (
    "default-src 'self' https: data:; script-src 'none'; sandbox; "
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
PAGE_CACHE = "no-cache"
ASSET_CACHE = "public, max-age=3600"
CHUNK = 64 * 1024
_LOG_CHARS = 160
_BODIES = {
    301: b"moved\n",
    403: b"forbidden\n",
    404: b"not found\n",
    405: b"method not allowed\n",
    503: b"unavailable\n",
}


def loggable(text: str, limit: int = _LOG_CHARS) -> str:
    """Printable ASCII only (anything else becomes ``?``), cut to ``limit``: the request's own
    bytes never shape the log line."""
    clean = "".join(ch if "!" <= ch <= "~" else "?" for ch in text)
    return clean if len(clean) <= limit else clean[:limit] + "..."


def request_host(value: str | None) -> str | None:
    """The host a Host header names, without its port, lower-cased; None when it names none
    (absent, an IPv6 literal, or not a host name)."""
    if not value or value.lstrip().startswith("["):
        return None
    name, _, port = value.strip().rpartition(":") if ":" in value else (value, "", "")
    if port and not port.isdigit():
        return None
    return normalise_hostname(name)


def is_sites_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


class SitesRouting:
    """ASGI middleware: a request whose path is ``/sites`` or under it goes to the sites
    endpoint whatever characters it holds; any other goes on to the app."""

    PREFIX = PREFIX  # the paths it serves, for whoever lists the app's routes

    def __init__(self, app: Any, endpoint: Any):
        self.app = app
        self.endpoint = endpoint

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and is_sites_path(str(scope.get("path", ""))):
            await self.endpoint(scope, receive, send)
        else:
            await self.app(scope, receive, send)


class SitesEndpoint:
    def __init__(self, settings: Settings):
        self.data_root = settings.data_root
        self.hosts = HostMap(settings.data_root)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import anyio
        from starlette.datastructures import Headers

        started = time.perf_counter()
        headers = Headers(scope=scope)
        raw_path = (scope.get("raw_path") or scope["path"].encode("utf-8")).decode("latin-1")
        fields: dict[str, Any] = {
            "host": loggable(headers.get("host") or "-", 100),
            "path": loggable(raw_path),
        }
        if scope["method"] not in ("GET", "HEAD"):
            await _plain(send, 405, scope["method"], [(b"allow", b"GET, HEAD")])
            _log("method-not-allowed", fields, 405, started)
            return
        split = split_request_path(raw_path)
        if isinstance(split, Refused):
            await _plain(send, 403, scope["method"])
            _log(TRAVERSAL, dict(fields, reason=split.reason), 403, started)
            return
        host = request_host(headers.get("host"))
        try:
            account_id = self.hosts.account_for(host) if host else None
        except ConfigError as broken:
            await _plain(send, 503, scope["method"])
            _log("no-account", dict(fields, reason="hosts-file-unreadable", error=loggable(str(broken))), 503, started)
            return
        account = read_account(self.data_root, account_id) if account_id else None
        if account is None:
            await _plain(send, 404, scope["method"])
            _log(
                "no-account",
                dict(fields, reason="unmapped-host" if not account_id else "no-such-account"),
                404,
                started,
            )
            return
        fields["accountId"] = short(account.account_id)
        root = sites_root(accounts_dir(self.data_root) / account.account_id)
        found = await anyio.to_thread.run_sync(resolve, root, split[1])
        opened: Opened | Outcome = found
        if found.event == SERVE:
            opened = await anyio.to_thread.run_sync(open_file, found)
        if isinstance(opened, Opened):
            status, sent = await _send_file(scope, headers, send, opened)
            _log(SERVE, dict(fields, type=content_type(opened.file).split(";")[0], bytes=sent), status, started)
            return
        if opened.event == REDIRECT:
            location = f"{PREFIX}{split[1]}/" + _query(scope)
            await _plain(send, 301, scope["method"], [(b"location", location.encode("latin-1"))])
            _log(REDIRECT, fields, 301, started)
            return
        await _plain(send, opened.status, scope["method"])
        _log(opened.event, dict(fields, reason=opened.reason), opened.status, started)


def _query(scope: Any) -> str:
    """The request's query string for a Location header (bytes outside printable ASCII escaped)."""
    raw = scope.get("query_string") or b""
    return "?" + quote(raw, safe="/?&=+:;,%@!$'()*~-._[]") if raw else ""


def _log(event: str, fields: dict[str, Any], status: int, started: float) -> None:
    level = logging.WARNING if status in (403, 503) else logging.INFO
    ms = round((time.perf_counter() - started) * 1000, 1)
    log_line("sites", event, level=level, **fields, status=status, ms=ms)


def _common(status: int) -> list[tuple[bytes, bytes]]:
    cache = ASSET_CACHE if status == 200 else PAGE_CACHE
    return [
        (b"x-content-type-options", b"nosniff"),
        (b"content-security-policy", CSP.encode()),
        (b"cache-control", cache.encode()),
    ]


async def _plain(send: Any, status: int, method: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = _BODIES.get(status, b"")
    headers = [
        *_common(status),
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})


async def _send_file(scope: Any, request_headers: Any, send: Any, opened: Opened) -> tuple[int, int]:
    """The file's headers and, for GET, its bytes in chunks: (status, bytes sent). The
    descriptor is closed at the end."""
    import anyio

    try:
        info = opened.info
        etag = f'W/"{info.st_size:x}-{info.st_mtime_ns:x}"'
        headers = _common(200)
        if is_html(opened.file):
            headers = [(k, PAGE_CACHE.encode() if k == b"cache-control" else v) for k, v in headers]
        if content_type(opened.file).startswith("font/"):  # fetched with CORS from the page's opaque origin
            headers.append((b"access-control-allow-origin", b"*"))
        headers += [
            (b"etag", etag.encode()),
            (b"last-modified", formatdate(info.st_mtime, usegmt=True).encode()),
        ]
        matches = etag in [t.strip() for t in (request_headers.get("if-none-match") or "").split(",")]
        if matches:
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return 304, 0
        headers += [
            (b"content-type", content_type(opened.file).encode()),
            (b"content-length", str(info.st_size).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        if scope["method"] == "HEAD":
            await send({"type": "http.response.body", "body": b""})
            return 200, 0
        sent, left = 0, info.st_size
        while left > 0:  # at most the size announced, even when the file grows meanwhile
            chunk = await anyio.to_thread.run_sync(os.read, opened.fd, min(CHUNK, left))
            if not chunk:
                break
            sent += len(chunk)
            left -= len(chunk)
            await send({"type": "http.response.body", "body": chunk, "more_body": left > 0})
        if left > 0:  # the file shrank: end the response; the client sees fewer bytes than announced
            await send({"type": "http.response.body", "body": b""})
        return 200, sent
    finally:
        os.close(opened.fd)


def mount_sites(app: Any, settings: Settings) -> None:
    """Serve ``/sites/...`` on ``app`` ahead of its routes."""
    app.add_middleware(SitesRouting, endpoint=SitesEndpoint(settings))
