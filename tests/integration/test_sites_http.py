"""/sites/... of `maxy serve`'s real app under uvicorn, asked over a raw socket so every path
reaches the server exactly as written (no client normalises `..` or re-encodes anything): two
accounts told apart by host name, MIME types and headers, the folder redirect with its query,
index.html, 404, 403 for every traversal form and for links out of the sites folder, HEAD, 405,
304, a large file, a broken host file; and a hypothesis oracle over the wire: a 200 body is
always a file inside the asking host's own sites folder."""

from __future__ import annotations

import logging
import os
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maxy.accounts import accounts_dir, create_account
from maxy.config import load_settings
from maxy.plugins.discovery import discover_plugins
from maxy.serving.app import create_app
from maxy.sites.hosts import add_host, hosts_path
from maxy.sites.http import ASSET_CACHE, CSP, PAGE_CACHE

from tests.hypothesis_profile import examples
from tests.local_http import serve_app

SECRET = b"SECRET-NEVER-SERVED"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))

FILES = {  # path under sites/ -> (bytes, Content-Type)
    "index.html": (b"<h1>home A</h1>", "text/html; charset=utf-8"),
    "docs/index.html": (b"<h1>docs</h1>", "text/html; charset=utf-8"),
    "docs/guide.htm": (b"<p>guide</p>", "text/html; charset=utf-8"),
    "docs/style.css": (b"body{color:red}", "text/css; charset=utf-8"),
    "docs/app.js": (b"console.log(1)", "text/javascript; charset=utf-8"),
    "docs/mod.mjs": (b"export const a=1", "text/javascript; charset=utf-8"),
    "docs/app.js.map": (b'{"version":3}', "application/json"),
    "docs/data.json": (b'{"a":1}', "application/json"),
    "docs/pic.svg": (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml"),
    "docs/img.png": (PNG, "image/png"),
    "docs/photo.jpg": (b"\xff\xd8\xff jpeg", "image/jpeg"),
    "docs/anim.gif": (b"GIF89a", "image/gif"),
    "docs/pic.webp": (b"RIFF webp", "image/webp"),
    "docs/pic.avif": (b"avif", "image/avif"),
    "docs/favicon.ico": (b"ico", "image/x-icon"),
    "docs/font.woff": (b"wOFF", "font/woff"),
    "docs/font.woff2": (b"wOF2", "font/woff2"),
    "docs/font.ttf": (b"ttf", "font/ttf"),
    "docs/font.otf": (b"OTTO", "font/otf"),
    "docs/notes.txt": (b"plain notes", "text/plain; charset=utf-8"),
    "docs/paper.pdf": (b"%PDF-1.7", "application/pdf"),
    "docs/feed.xml": (b"<feed/>", "application/xml"),
    "docs/blob.bin7": (b"\x00\x01binary", "application/octet-stream"),
    "docs/inner/deep.txt": (b"deep", "text/plain; charset=utf-8"),
    "properties/42/brochure/output/brochure.html": (b"<h1>brochure</h1>", "text/html; charset=utf-8"),
    "a-only/page.html": (b"only in A", "text/html; charset=utf-8"),
}


@dataclass
class Site:
    base: str
    port: int
    data_root: Path
    sites_a: Path
    sites_b: Path
    own: dict[str, set[bytes]]  # host -> the contents of the files inside its sites folder

    def ask(self, target: str, host: str | None = "a.test", method: str = "GET", headers: str = "") -> Answer:
        return raw_request(self.port, method, target, host, headers)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def raw_request(port: int, method: str, target: str, host: str | None, extra: str = "", version: str = "1.1") -> Answer:
    """One HTTP request written byte for byte; the answer read until the server closes."""
    head = f"{method} {target} HTTP/{version}\r\n"
    if host is not None:
        head += f"Host: {host}\r\n"
    head += extra + "Connection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.encode("latin-1"))
        data = b""
        while chunk := sock.recv(1 << 16):
            data += chunk
    header_block, _, body = data.partition(b"\r\n\r\n")
    lines = header_block.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Answer(status, headers, body)


def _build(data_root: Path) -> tuple[Path, Path]:
    """Accounts A (a.test, www.a.test) and B (b.test), each with a sites folder; secrets beside
    and above them; links in and out."""
    a = create_account(data_root, "sites-a")
    b = create_account(data_root, "sites-b")
    sites_a = accounts_dir(data_root) / a.account_id / "sites"
    sites_b = accounts_dir(data_root) / b.account_id / "sites"
    for rel, (content, _type) in FILES.items():
        (sites_a / rel).parent.mkdir(parents=True, exist_ok=True)
        (sites_a / rel).write_bytes(content)
    (sites_a / "docs" / "empty").mkdir()
    (sites_a / ".env").write_bytes(SECRET)
    (sites_b / "docs").mkdir(parents=True)
    (sites_b / "index.html").write_bytes(b"<h1>home B</h1>")
    (sites_b / "docs" / "index.html").write_bytes(b"<h1>docs of B</h1>")
    (sites_b / "b-only.txt").write_bytes(b"only in B")
    for folder in (sites_a.parent, sites_b.parent, data_root):
        (folder / "secret.txt").write_bytes(SECRET)
    outside = data_root.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (outside / "index.html").write_bytes(SECRET)
    (sites_a / "current").symlink_to("docs")  # inside: followed
    (sites_a / "leak.txt").symlink_to(sites_a.parent / "secret.txt")
    (sites_a / "leak-dir").symlink_to(outside)
    (sites_a / "to-b").symlink_to(sites_b)  # another account's folder is outside too
    (sites_a / "up").symlink_to("..")
    (sites_a / "docs" / "inner" / "index.html").symlink_to(outside / "index.html")
    (sites_a / "big.bin7").write_bytes(os.urandom(3 * 1024 * 1024 + 17))
    add_host(data_root, "a.test", a.account_id)
    add_host(data_root, "www.a.test", a.account_id)
    add_host(data_root, "b.test", b.account_id)
    return sites_a, sites_b


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, neo4j_ready) -> Iterator[Site]:
    data_root = tmp_path_factory.mktemp("sites-http") / "data"
    data_root.mkdir()
    sites_a, sites_b = _build(data_root)
    app = create_app(discover_plugins(["admin"]), load_settings(DATA_ROOT=data_root))
    own = {host: _contents_inside(folder) for host, folder in (("a.test", sites_a), ("b.test", sites_b))}
    with serve_app(app) as base:
        yield Site(base, int(base.rsplit(":", 1)[1]), data_root, sites_a, sites_b, own)


def _contents_inside(folder: Path) -> set[bytes]:
    root = os.path.realpath(folder)
    found = set()
    for dirpath, _, names in os.walk(root):
        for name in names:
            real = os.path.realpath(os.path.join(dirpath, name))
            if real.startswith(root + os.sep) and os.path.isfile(real):
                found.add(Path(real).read_bytes())
    return found


def _sites_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("[sites] ")]


# ---------------------------------------------------------------------------------------
def test_types_and_headers_of_every_file(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    for rel, (content, content_type) in FILES.items():
        answer = site.ask(f"/sites/{rel}")
        assert answer.status == 200, rel
        assert answer.body == content and answer.headers["content-length"] == str(len(content)), rel
        assert answer.headers["content-type"] == content_type, rel
        assert answer.headers["x-content-type-options"] == "nosniff", rel
        assert (
            answer.headers["content-security-policy"]
            == CSP
            == (
                "default-src 'self' https: data:; script-src 'none'; sandbox; "
                "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
            )
        )
        cors = answer.headers.get("access-control-allow-origin")
        assert cors == ("*" if content_type.startswith("font/") else None), rel  # fonts: fetched with CORS
        page = rel.endswith((".html", ".htm"))
        assert answer.headers["cache-control"] == (PAGE_CACHE if page else ASSET_CACHE), rel
        assert answer.headers["etag"] and answer.headers["last-modified"].endswith("GMT")
    served = [line for line in _sites_lines(caplog) if line.startswith("[sites] serve ")]
    assert len(served) == len(FILES)
    assert "host=a.test" in served[0] and "status=200" in served[0] and "bytes=" in served[0]


def test_folders_redirect_to_their_slash_keeping_the_query(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    moved = site.ask("/sites/docs?utm=1&q=a%20b&token=x")
    assert moved.status == 301 and moved.headers["location"] == "/sites/docs/?utm=1&q=a%20b&token=x"
    assert moved.headers["x-content-type-options"] == "nosniff"
    assert site.ask("/sites").headers["location"] == "/sites/"
    assert (
        site.ask("/sites/properties/42/brochure/output").headers["location"] == "/sites/properties/42/brochure/output/"
    )
    assert site.ask("/sites/current").headers["location"] == "/sites/current/"
    assert site.ask("/sites/docs/").body == b"<h1>docs</h1>"
    assert site.ask("/sites/").body == b"<h1>home A</h1>"
    assert site.ask("/sites/current/style.css").body == b"body{color:red}"  # a link inside: followed
    line = next(line for line in _sites_lines(caplog) if "redirect-trailing-slash" in line)
    assert "status=301" in line and "token" not in line  # the query is never logged


@pytest.mark.parametrize(
    "target",
    [
        "/sites/docs/empty/",  # a folder without index.html: nothing invented
        "/sites/properties/42/brochure/output/",
        "/sites/docs/missing.html",
        "/sites/no-such-folder/",
        "/sites/docs/style.css/",  # a file is no folder
        "/sites/docs/index",
    ],
)
def test_missing_answers_404(site: Site, target: str) -> None:
    answer = site.ask(target)
    assert answer.status == 404 and answer.headers["x-content-type-options"] == "nosniff"
    assert answer.body == b"not found\n"


TRAVERSAL = [
    "/sites/../secret.txt",
    "/sites/docs/../../secret.txt",
    "/sites/docs/../../../secret.txt",
    "/sites/./docs/",
    "/sites/%2e%2e/secret.txt",
    "/sites/%2E%2E/secret.txt",
    "/sites/%2E./secret.txt",
    "/sites/.%2e/secret.txt",
    "/sites/%252e%252e/secret.txt",
    "/sites/%25%32%65%25%32%65/secret.txt",
    "/sites/docs%2f..%2f..%2fsecret.txt",
    "/sites/..%2fsecret.txt",
    "/sites/docs\\..\\..\\secret.txt",
    "/sites/%5c..%5csecret.txt",
    "/sites/docs/app.js%00.html",
    "/sites//secret.txt",
    "/sites/.env",
    "/sites/%2eenv",
    "/sites/docs/.git/config",
    "/sites/~root",
    "/sites/caf%C3%A9.html",
    "/sites%2f..%2fsecret.txt",
]


@pytest.mark.parametrize("target", TRAVERSAL)
def test_every_traversal_form_is_403_on_the_wire(site: Site, target: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    answer = site.ask(target)
    assert answer.status == 403 and SECRET not in answer.body
    assert answer.body == b"forbidden\n" and answer.headers["x-content-type-options"] == "nosniff"
    line = _sites_lines(caplog)[-1]
    assert line.startswith("[sites] path-traversal-rejected ") and "status=403" in line and "reason=" in line


def test_a_raw_nul_never_reaches_a_file(site: Site) -> None:
    answer = site.ask("/sites/docs/app.js\x00.html")
    assert answer.status in (400, 403) and SECRET not in answer.body


@pytest.mark.parametrize(
    "target",
    [
        "/sites/leak.txt",
        "/sites/leak-dir/secret.txt",
        "/sites/leak-dir/",
        "/sites/leak-dir",
        "/sites/leak-dir/nothing-there",
        "/sites/to-b/b-only.txt",
        "/sites/up/secret.txt",
        "/sites/docs/inner/",  # its index.html links out
    ],
)
def test_links_out_of_the_sites_folder_are_403(site: Site, target: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    answer = site.ask(target)
    assert answer.status == 403 and SECRET not in answer.body and b"only in B" not in answer.body
    line = _sites_lines(caplog)[-1]
    assert line.startswith("[sites] symlink-escape-rejected ") and "reason=link-leaves-sites" in line


def test_each_host_sees_only_its_own_account(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    assert site.ask("/sites/", "a.test").body == b"<h1>home A</h1>"
    assert site.ask("/sites/", "b.test").body == b"<h1>home B</h1>"
    assert site.ask("/sites/docs/", "b.test").body == b"<h1>docs of B</h1>"
    assert site.ask("/sites/b-only.txt", "b.test").body == b"only in B"
    assert site.ask("/sites/b-only.txt", "a.test").status == 404
    assert site.ask("/sites/a-only/page.html", "b.test").status == 404
    for host in ("A.TEST", f"a.test:{site.port}", "a.test.", "www.a.test"):
        assert site.ask("/sites/", host).body == b"<h1>home A</h1>", host
    for host in ("c.test", "127.0.0.1", f"[::1]:{site.port}", "a.test:x", "a.test@b.test", ""):
        answer = site.ask("/sites/", host)
        assert answer.status == 404 and answer.headers["x-content-type-options"] == "nosniff", host
    assert raw_request(site.port, "GET", "/sites/", None, version="1.0").status == 404  # no Host at all
    lines = _sites_lines(caplog)
    assert any(line.startswith("[sites] no-account host=c.test ") and "reason=unmapped-host" in line for line in lines)


def test_head_methods_and_revalidation(site: Site) -> None:
    head = site.ask("/sites/docs/img.png", method="HEAD")
    assert head.status == 200 and head.body == b"" and head.headers["content-length"] == str(len(PNG))
    assert head.headers["content-type"] == "image/png"
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        answer = site.ask("/sites/docs/", method=method)
        assert answer.status == 405 and answer.headers["allow"] == "GET, HEAD", method
        assert answer.headers["x-content-type-options"] == "nosniff"
    etag = site.ask("/sites/docs/style.css").headers["etag"]
    again = site.ask("/sites/docs/style.css", headers=f"If-None-Match: {etag}\r\n")
    assert again.status == 304 and again.body == b"" and again.headers["etag"] == etag
    assert site.ask("/sites/docs/style.css", headers='If-None-Match: W/"0-0"\r\n').status == 200


def test_a_large_file_is_streamed_whole(site: Site) -> None:
    answer = site.ask("/sites/big.bin7")
    expected = (site.sites_a / "big.bin7").read_bytes()
    assert answer.status == 200 and answer.headers["content-length"] == str(len(expected))
    assert answer.body == expected


def test_a_broken_host_file_serves_nothing(site: Site, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="maxy")
    path = hosts_path(site.data_root)
    good = path.read_text()
    try:
        path.write_text('{"hosts": ["a.test"]}')
        answer = site.ask("/sites/")
        assert answer.status == 503 and answer.headers["x-content-type-options"] == "nosniff"
        assert "reason=hosts-file-unreadable" in _sites_lines(caplog)[-1]
    finally:
        path.write_text(good + "\n")  # another size: the server reads it again
    assert site.ask("/sites/").body == b"<h1>home A</h1>"


# ---------------------------------------------------------------------------------------
PIECES = [
    "/", "/", "..", ".", "%2e", "%2E", "%2f", "%2F", "%5c", "\\", "%00", "%25", "%", "2e", "~", "%c3%a9", "docs",
    "inner", "style.css", "index.html", "current", "leak.txt", "leak-dir", "to-b", "up", "b-only.txt", "secret.txt",
    ".env", "a-only", "page.html",
]  # fmt: skip


SEGMENTS = st.one_of(
    st.sampled_from(["docs", "inner", "style.css", "index.html", "current", "leak-dir", "to-b", "up", "b-only.txt"]),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join),
)


KNOWN = [
    "docs",
    "docs/style.css",
    "current/app.js",
    "docs/inner/deep.txt",
    "b-only.txt",
    "a-only/page.html",
    "leak.txt",
]


def _path(before: list[str], known: list[str], after: list[str], slash: bool) -> str:
    return "/".join([*before, *known, *after]) + ("/" if slash else "")


@settings(max_examples=examples(400), deadline=None)
@given(
    path=st.builds(
        _path,
        st.lists(SEGMENTS, max_size=3),
        st.one_of(st.just([]), st.sampled_from(KNOWN).map(lambda known: known.split("/"))),
        st.lists(SEGMENTS, max_size=2),
        st.booleans(),
    ),
    host=st.sampled_from(["a.test", "b.test"]),
)
def test_over_the_wire_a_200_is_always_a_file_of_the_hosts_own_folder(site: Site, path: str, host: str) -> None:
    answer = site.ask("/sites/" + path, host)
    assert answer.status in (200, 301, 304, 403, 404), (path, answer.status)
    assert SECRET not in answer.body
    if answer.status != 200:
        return
    assert answer.body in site.own[host], (host, path)
    assert re.fullmatch(r'W/"[0-9a-f]+-[0-9a-f]+"', answer.headers["etag"])
