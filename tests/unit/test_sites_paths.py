"""The path handling of /sites/...: the pure check of a request path (every traversal form has
its reason), the walk of a real folder tree with links in and out of the sites folder, and a
hypothesis oracle: whatever the path, a file the resolver hands out lies inside the sites folder
and is what gets read. No database, no server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maxy.sites.hostname import is_apex, normalise_hostname
from maxy.sites.http import loggable, request_host
from maxy.sites.mime import OCTET_STREAM, content_type
from maxy.sites.paths import SAFE_SEGMENT, Refused, SitePath, parse_site_path, split_request_path
from maxy.sites.serve import ESCAPE, NOT_FOUND, REDIRECT, SERVE, TRAVERSAL, Opened, inside, open_file, resolve

from tests.hypothesis_profile import examples

SECRET = b"SECRET-OUTSIDE-THE-SITES-FOLDER"

REFUSED = [
    ("/..", "dot-segment"),
    ("/docs/../secret.txt", "dot-segment"),
    ("/./docs", "dot-segment"),
    ("/docs/.", "dot-segment"),
    ("/%2e%2e/secret.txt", "encoded-dot-segment"),
    ("/%2E%2E/secret.txt", "encoded-dot-segment"),
    ("/%2E./secret.txt", "encoded-dot-segment"),
    ("/.%2e/secret.txt", "encoded-dot-segment"),
    ("/%2e/docs", "encoded-dot-segment"),
    ("/%252e%252e/secret.txt", "double-encoding"),
    ("/docs%2f..%2f..%2fsecret.txt", "encoded-slash"),
    ("/..%2Fsecret.txt", "encoded-slash"),
    ("/docs\\..\\secret.txt", "backslash"),
    ("/%5c../secret.txt", "backslash"),
    ("/docs/a%00.html", "nul"),
    ("/docs/a\x00.html", "nul"),
    ("//docs", "empty-segment"),
    ("/docs//a.css", "empty-segment"),
    ("//", "empty-segment"),
    ("/.env", "hidden"),
    ("/docs/.git", "hidden"),
    ("/%2egit", "hidden"),
    ("/docs/%zz", "bad-encoding"),
    ("/docs/a%2", "bad-encoding"),
    ("/~user", "unsafe-segment"),
    ("/-x", "unsafe-segment"),
    ("/a%20b.html", "unsafe-segment"),
    ("/caf%C3%A9.html", "unsafe-segment"),
    ("/café.html", "unsafe-segment"),
    ("/a:b", "unsafe-segment"),
    ("/" + "a" * 129, "unsafe-segment"),
    ("/a" * 33, "too-long"),
    ("docs", "unsafe-prefix"),
]


@pytest.mark.parametrize("raw,reason", REFUSED)
def test_each_traversal_form_is_refused_with_its_reason(raw: str, reason: str) -> None:
    assert parse_site_path(raw) == Refused(reason)


@pytest.mark.parametrize(
    "raw,segments,slash",
    [
        ("", (), False),
        ("/", (), True),
        ("/docs", ("docs",), False),
        ("/docs/", ("docs",), True),
        (
            "/properties/42/brochure/output/brochure.html",
            ("properties", "42", "brochure", "output", "brochure.html"),
            False,
        ),
        ("/%64ocs/a.css", ("docs", "a.css"), False),  # an encoded unreserved letter is the letter
        ("/v1.2/app~min.js", ("v1.2", "app~min.js"), False),
        ("/a" + "a" * 127, ("a" * 128,), False),
    ],
)
def test_safe_paths_keep_their_segments(raw: str, segments: tuple[str, ...], slash: bool) -> None:
    assert parse_site_path(raw) == SitePath(segments, slash)


def test_the_first_segment_must_decode_to_sites() -> None:
    assert split_request_path("/sites/docs/") == ("/sites", "/docs/")
    assert split_request_path("/sites") == ("/sites", "")
    assert split_request_path("/%73ites/a") == ("/sites", "/a")
    assert split_request_path("/sites%2f..%2fetc") == Refused("unsafe-prefix")
    assert split_request_path("/sites%zz/a") == Refused("unsafe-prefix")


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(alphabet=st.sampled_from(list("./\\%25cCeEfF0~aé\x00-_")), max_size=40))
def test_a_parsed_path_never_holds_a_traversal_segment(raw: str) -> None:
    parsed = parse_site_path(raw)
    if isinstance(parsed, SitePath):
        for segment in parsed.segments:
            assert SAFE_SEGMENT.fullmatch(segment), (raw, segment)
            assert segment not in (".", "..") and not segment.startswith(".")
            assert not {"/", "\\", "\x00", "%"} & set(segment)


# ---------------------------------------------------------------------------------------
def _tree(base: Path) -> Path:
    """An account folder whose sites folder holds pages, assets and links in and out; secrets
    lie beside the sites folder, above the account and in an unrelated folder."""
    account = base / "accounts" / "acct"
    sites = account / "sites"
    (sites / "docs" / "inner").mkdir(parents=True)
    (sites / "noindex").mkdir()
    (sites / "index.html").write_text("<h1>root</h1>")
    (sites / "docs" / "index.html").write_text("<h1>docs</h1>")
    (sites / "docs" / "a.css").write_text("body{}")
    (sites / "docs" / "inner" / "deep.txt").write_text("deep")
    (sites / "noindex" / "page.html").write_text("page")
    (sites / "noindex" / "index.html.d").mkdir()
    (sites / "folder-index").mkdir()
    (sites / "folder-index" / "index.html").mkdir()  # a folder named index.html is no page
    (sites / ".hidden").write_text("hidden")
    outside = base / "elsewhere"
    outside.mkdir()
    for where in (account / "secret.txt", base / "secret.txt", outside / "secret.txt"):
        where.write_bytes(SECRET)
    (outside / "index.html").write_bytes(SECRET)
    (outside / "back").symlink_to(sites / "docs")  # out, then back in: judged by where it ends
    links = {
        "latest": "docs",  # inside: followed
        "latest-css.css": "docs/a.css",
        "leak.txt": str(account / "secret.txt"),
        "leak-dir": str(outside),
        "leak-up": "..",
        "leak-missing": str(outside / "nothing-here.txt"),
        "round-trip": str(outside / "back"),
        "loop": "loop",
    }
    for name, target in links.items():
        (sites / name).symlink_to(target)
    (sites / "noindex" / "index.html").symlink_to(outside / "index.html")
    os.mkfifo(sites / "pipe.txt")
    return sites


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tree(tmp_path_factory.mktemp("sites-tree"))


@pytest.mark.parametrize(
    "raw,status,event,served",
    [
        ("", 301, REDIRECT, None),
        ("/", 200, SERVE, "index.html"),
        ("/docs", 301, REDIRECT, None),
        ("/docs/", 200, SERVE, "docs/index.html"),
        ("/docs/a.css", 200, SERVE, "docs/a.css"),
        ("/docs/a.css/", 404, NOT_FOUND, None),
        ("/docs/inner", 301, REDIRECT, None),
        ("/docs/inner/", 404, NOT_FOUND, None),  # no index.html: never invented
        ("/docs/inner/deep.txt", 200, SERVE, "docs/inner/deep.txt"),
        ("/docs/missing.html", 404, NOT_FOUND, None),
        ("/missing/a.css", 404, NOT_FOUND, None),
        ("/docs/a.css/x", 404, NOT_FOUND, None),
        ("/latest/a.css", 200, SERVE, "docs/a.css"),
        ("/latest/", 200, SERVE, "docs/index.html"),
        ("/latest-css.css", 200, SERVE, "docs/a.css"),
        ("/leak.txt", 403, ESCAPE, None),
        ("/leak-dir", 403, ESCAPE, None),
        ("/leak-dir/", 403, ESCAPE, None),
        ("/leak-dir/secret.txt", 403, ESCAPE, None),
        ("/leak-dir/no-such-file", 403, ESCAPE, None),  # the same answer: nothing learnt outside
        ("/leak-up/secret.txt", 403, ESCAPE, None),
        ("/leak-missing", 403, ESCAPE, None),
        ("/round-trip/a.css", 200, SERVE, "docs/a.css"),
        ("/noindex/", 403, ESCAPE, None),  # its index.html links out
        ("/noindex/page.html", 200, SERVE, "noindex/page.html"),
        ("/folder-index/", 404, NOT_FOUND, None),
        ("/loop", 404, NOT_FOUND, None),
        ("/pipe.txt", 404, NOT_FOUND, None),
        ("/.hidden", 403, TRAVERSAL, None),
        ("/../secret.txt", 403, TRAVERSAL, None),
    ],
)
def test_the_walk_of_a_real_tree(sites: Path, raw: str, status: int, event: str, served: str | None) -> None:
    found = resolve(sites, raw)
    assert (found.status, found.event) == (status, event), found
    if served is not None:
        assert found.file == os.path.realpath(sites / served)
        opened = open_file(found)
        assert isinstance(opened, Opened)
        try:
            assert os.read(opened.fd, 1 << 16) == (sites / served).read_bytes()
        finally:
            os.close(opened.fd)


def test_a_sites_folder_that_is_a_link_serves_nothing(tmp_path: Path) -> None:
    real = tmp_path / "real-sites"
    real.mkdir()
    (real / "index.html").write_text("hi")
    (tmp_path / "sites").symlink_to(real)
    assert resolve(tmp_path / "sites", "/").event == ESCAPE
    assert resolve(tmp_path / "nothing", "/").event == NOT_FOUND


def test_a_file_swapped_for_a_link_after_the_walk_is_not_opened(tmp_path: Path) -> None:
    sites = tmp_path / "sites"
    sites.mkdir()
    (tmp_path / "secret.txt").write_bytes(SECRET)
    page = sites / "page.html"
    page.write_text("page")
    found = resolve(sites, "/page.html")
    assert found.event == SERVE
    page.unlink()
    page.symlink_to(tmp_path / "secret.txt")  # the race a link swap would win without O_NOFOLLOW
    assert not isinstance(open_file(found), Opened)


NAMES = [
    "docs", "inner", "a.css", "index.html", "deep.txt", "latest", "latest-css.css", "leak.txt", "leak-dir",
    "leak-up", "leak-missing", "round-trip", "noindex", "page.html", "folder-index", "secret.txt", "back",
    "elsewhere", "accounts", "acct", "sites", "pipe.txt", "loop",
]  # fmt: skip
HOSTILE = [
    "..", ".", "%2e%2e", "%2E.", ".%2e", "%2e", "%252e%252e", "..%2f", "%2f", "%2F", "\\..", "%5c..", "%5C",
    "%00", "\x00", "", ".hidden", "~", "é", "%c3%a9", "a%2", "%", "%25", "..\\", "2e", "5c",
]  # fmt: skip
SEGMENT = st.one_of(
    st.sampled_from(NAMES),
    st.sampled_from(HOSTILE),
    st.lists(st.sampled_from(NAMES + HOSTILE), min_size=2, max_size=3).map("".join),
    st.text(max_size=6),
)
KNOWN = [
    "docs", "docs/a.css", "docs/inner/deep.txt", "latest/a.css", "latest-css.css", "leak.txt", "leak-dir/secret.txt",
    "leak-up/secret.txt", "round-trip/a.css", "noindex/page.html", "noindex", "index.html", "docs/index.html",
]  # fmt: skip


def _joined(segments: list[str], slash: bool) -> str:
    return "/" + "/".join(segments) + ("/" if slash else "")


PATHS = st.one_of(
    st.builds(_joined, st.lists(SEGMENT, max_size=6), st.booleans()),
    st.builds(_joined, st.sampled_from(KNOWN).map(lambda known: known.split("/")), st.booleans()),
    st.builds(
        lambda before, known, after, slash: _joined([*before, known, *after], slash),
        st.lists(SEGMENT, max_size=2),
        st.sampled_from(KNOWN),
        st.lists(SEGMENT, max_size=2),
        st.booleans(),
    ),
    st.lists(st.sampled_from(["/", *NAMES, *HOSTILE]), max_size=12).map(lambda parts: "/" + "".join(parts)),
)


@settings(max_examples=examples(4000), deadline=None)
@given(raw=PATHS)
def test_no_path_reaches_a_file_outside_the_sites_folder(sites: Path, raw: str) -> None:
    root = os.path.realpath(sites)
    found = resolve(sites, raw)
    assert found.status in (200, 301, 403, 404)
    if found.status != 200:
        assert found.file is None
        return
    assert found.file is not None and inside(root, os.path.realpath(found.file)), (raw, found)
    opened = open_file(found)
    assert isinstance(opened, Opened)
    try:
        body = os.read(opened.fd, 1 << 16)
    finally:
        os.close(opened.fd)
    assert body == Path(found.file).read_bytes() and SECRET not in body, raw


# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,expected",
    [
        ("a.html", "text/html; charset=utf-8"),
        ("A.HTM", "text/html; charset=utf-8"),
        ("s.css", "text/css; charset=utf-8"),
        ("m.mjs", "text/javascript; charset=utf-8"),
        ("f.woff2", "font/woff2"),
        ("p.avif", "image/avif"),
        ("x.js.map", "application/json"),
        ("README", OCTET_STREAM),
        ("run.exe", OCTET_STREAM),
    ],
)
def test_content_types(name: str, expected: str) -> None:
    assert content_type(name) == expected


@pytest.mark.parametrize(
    "header,host",
    [
        ("Example.COM:8765", "example.com"),
        ("example.com.", "example.com"),
        ("localhost", "localhost"),
        ("127.0.0.1:80", "127.0.0.1"),
        ("[::1]:8765", None),
        ("example.com:http", None),
        ("exa mple.com", None),
        ("", None),
        (None, None),
        ("bücher.example", "xn--bcher-kva.example"),
    ],
)
def test_the_host_a_header_names(header: str | None, host: str | None) -> None:
    assert request_host(header) == host


def test_apex_names_and_host_names() -> None:
    assert is_apex("example.com") and is_apex("www.example.com") and is_apex("example.co.uk")
    assert is_apex("www.example.com.au")
    assert not is_apex("public.example.com") and not is_apex("a.b.example.com") and not is_apex("localhost")
    assert not is_apex("www.public.example.com")
    assert normalise_hostname(" Public.Example.com. ") == "public.example.com"
    for bad in ("https://example.com", "example.com/x", "-a.com", "a_b.com", "*.example.com", "", 42):
        assert normalise_hostname(bad) is None


def test_log_values_are_printable_and_short() -> None:
    assert loggable("/sites/a\x00b\nc d") == "/sites/a?b?c?d"
    assert loggable("x" * 500).endswith("...") and len(loggable("x" * 500)) == 163
