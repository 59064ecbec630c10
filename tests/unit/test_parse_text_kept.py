"""What parsing keeps: identifiers keep their underscores in headings (only emphasis markup
goes), and a summary that keeps a sentence introducing code keeps the code it introduces."""

from __future__ import annotations

from maxy.ingest.formats import parse_markdown
from maxy.ingest.summarize import extractive_summary

DOC = """# Environment variables

## `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY`

Proxy settings come from these variables.

## SSL_CERT_FILE and __strong__ *words*

Certificates come from this file.
"""


def test_headings_keep_the_characters_of_identifiers() -> None:
    parsed = parse_markdown(DOC)
    titles = [section.heading for section in parsed.sections if section.heading]
    assert "HTTP_PROXY, HTTPS_PROXY and ALL_PROXY" in titles
    assert "SSL_CERT_FILE and strong words" in titles


SECTION = (
    "To use HTTP/2, create a client with it enabled:\n\n```python\nclient = httpx.Client(http2=True)\n```\n\n"
    + "HTTPX keeps HTTP/1.1 as its default transport for now, since it is the mature one. " * 3
    + "The protocol is then negotiated with each server that offers it. " * 3
)


def test_a_summary_never_drops_the_code_a_chosen_sentence_introduces() -> None:
    for budget in (200, 300, 500):
        summary = extractive_summary(SECTION, budget)
        assert not summary.rstrip().endswith(":"), summary
        if "HTTP/2 enabled:" in summary:
            assert "httpx.Client(http2=True)" in summary, summary
    assert "httpx.Client(http2=True)" in extractive_summary(SECTION, 500)
